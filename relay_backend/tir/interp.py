"""A small interpreter of PrimFuncs over numpy arrays: the kernel-level oracle.

The PrimFunc is translated once into straight Python source (one SSA temporary per
expression node, so deep expressions need no recursion), then run on Python lists copied
from the arguments; buffers that the kernel stores into are copied back at the end.
Semantics kept strict on purpose: every load and store is bounds-checked, temporaries start
as None so reading one before writing it fails, and Select / IfThenElse evaluate only the
taken side. Arithmetic is Python's (floats in double precision), so compare against numpy
with a float32 tolerance. Slow by design: use small shapes.
"""
import math

import numpy as np

from ..errors import ExecutionError, InputError
from . import expr as E
from . import stmt as S
from .functor import children, stored_buffers
from .simplify import simplify

_BINOPS = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.FloorDiv: "//", E.FloorMod: "%",
           E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">=",
           E.And: "and", E.Or: "or"}


def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _round(x):
    return float(np.round(x))


_INTRIN = {
    "exp": _exp, "exp2": lambda x: 2.0 ** x, "log": lambda x: math.log(x) if x > 0 else
    (-math.inf if x == 0 else math.nan), "log2": math.log2, "log10": math.log10,
    "log1p": math.log1p, "tanh": math.tanh, "sqrt": lambda x: math.sqrt(x) if x >= 0 else math.nan,
    "rsqrt": lambda x: 1.0 / math.sqrt(x) if x > 0 else (math.inf if x == 0 else math.nan),
    "erf": math.erf, "sigmoid": _sigmoid, "fabs": abs, "floor": math.floor, "ceil": math.ceil,
    "round": _round, "trunc": math.trunc, "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "asin": math.asin, "acos": math.acos, "atan": math.atan, "sinh": math.sinh,
    "cosh": math.cosh, "isnan": math.isnan, "isinf": math.isinf, "pow": math.pow,
    "atan2": math.atan2, "fmod": math.fmod,
}


def _wrap(dtype, value):
    """An integer result wrapped to `dtype`'s width (bools stay bools)."""
    if dtype == "bool":
        return bool(value)
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return (int(value) - int(info.min)) % span + int(info.min)


def _reinterpret(dtype, src, x):
    return np.array(x, dtype=src).view(dtype).item()


_BITS = {
    "bitwise_and": lambda dt, a, b: _wrap(dt, int(a) & int(b)),
    "bitwise_or": lambda dt, a, b: _wrap(dt, int(a) | int(b)),
    "bitwise_xor": lambda dt, a, b: _wrap(dt, int(a) ^ int(b)),
    "bitwise_not": lambda dt, a: (not a) if dt == "bool" else _wrap(dt, ~int(a)),
    "shift_left": lambda dt, a, b: _wrap(dt, int(a) << int(b)),
    "shift_right": lambda dt, a, b: _wrap(dt, int(a) >> int(b)),
}


def _tdiv(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _tmod(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return math.fmod(a, b)
    return a - b * _tdiv(a, b)


def _cast(dtype, x):
    if dtype == "bool":
        return bool(x)
    if E.is_float_dtype(dtype):
        return float(x)
    return int(math.trunc(x)) if isinstance(x, float) else int(x)


def _oob(name, offset, size):
    raise ExecutionError(f"tir interpreter: access to {name}[{offset}] is out of bounds "
                         f"(buffer has {size} elements)")


class _Codegen:
    """Translate a PrimFunc into the source of a Python function `kernel(bufs, sizes)`."""

    def __init__(self):
        self.lines = []
        self.names = {}
        self.tmp = 0

    def name_of(self, var):
        if id(var) not in self.names:
            base = "".join(c if c.isalnum() else "_" for c in var.name) or "v"
            self.names[id(var)] = f"{base}_{len(self.names)}"
        return self.names[id(var)]

    def new_tmp(self):
        self.tmp += 1
        return f"t{self.tmp}"

    def emit(self, line, depth):
        self.lines.append("    " * depth + line)

    # -- expressions ------------------------------------------------------------------------
    def expr(self, e, depth, memo=None):
        """Emit lines computing `e`; return an atom (name or literal) holding its value."""
        memo = {} if memo is None else memo
        stack = [(e, False)]
        while stack:
            n, ready = stack.pop()
            if id(n) in memo:
                continue
            if isinstance(n, (E.Select, E.Let)):      # lazy / scoped: handled as a unit
                memo[id(n)] = self.scoped(n, depth, memo)
                continue
            kids = children(n)
            if not ready and kids:
                stack.append((n, True))
                stack.extend((c, False) for c in kids if id(c) not in memo)
                continue
            memo[id(n)] = self.node(n, [memo[id(c)] for c in kids], depth)
        return memo[id(e)]

    def scoped(self, n, depth, memo):
        out = self.new_tmp()
        if isinstance(n, E.Let):
            self.emit(f"{self.name_of(n.var)} = {self.expr(n.value, depth, memo)}", depth)
            self.emit(f"{out} = {self.expr(n.body, depth, dict(memo))}", depth)
            return out
        self.emit(f"if {self.expr(n.condition, depth, memo)}:", depth)
        self.emit(f"{out} = {self.expr(n.true_value, depth + 1, dict(memo))}", depth + 1)
        self.emit("else:", depth)
        self.emit(f"{out} = {self.expr(n.false_value, depth + 1, dict(memo))}", depth + 1)
        return out

    def node(self, n, a, depth):
        if isinstance(n, E.IntImm):
            return repr(n.value)
        if isinstance(n, E.FloatImm):
            return f"float({repr(n.value)!r})" if math.isinf(n.value) or n.value != n.value \
                else repr(n.value)
        if isinstance(n, E.Var):
            if id(n) not in self.names:
                raise ExecutionError(f"tir interpreter: variable {n.name} is used but never bound")
            return self.names[id(n)]
        out = self.new_tmp()
        if type(n) in _BINOPS:
            rhs = f"{a[0]} {_BINOPS[type(n)]} {a[1]}"
        elif isinstance(n, E.Div):
            rhs = f"_tdiv({a[0]}, {a[1]})"
        elif isinstance(n, E.Mod):
            rhs = f"_tmod({a[0]}, {a[1]})"
        elif isinstance(n, E.Min):
            rhs = f"min({a[0]}, {a[1]})"
        elif isinstance(n, E.Max):
            rhs = f"max({a[0]}, {a[1]})"
        elif isinstance(n, E.Not):
            rhs = f"not {a[0]}"
        elif isinstance(n, E.Cast):
            rhs = f"_cast({n.dtype!r}, {a[0]})"
        elif isinstance(n, E.Call) and n.op_name == "reinterpret":
            rhs = f"_reinterpret({n.dtype!r}, {n.args[0].dtype!r}, {a[0]})"
        elif isinstance(n, E.Call) and n.op_name in _BITS:
            rhs = f"_BITS[{n.op_name!r}]({n.dtype!r}, {', '.join(a)})"
        elif isinstance(n, E.Call):
            rhs = f"_INTRIN[{n.op_name!r}]({', '.join(a)})"
        elif isinstance(n, E.BufferLoad):
            off = self.offset(n.buffer, a, depth)
            rhs = f"{self.buf(n.buffer)}[{off}]"
        else:
            raise ExecutionError(f"tir interpreter: cannot execute a {type(n).__name__} node "
                                 f"(`{n}`); te-level nodes must be lowered first")
        self.emit(f"{out} = {rhs}", depth)
        return out

    def buf(self, buffer):
        return self.name_of(buffer.data)

    def offset(self, buffer, idx, depth):
        """Emit a bounds-checked flat offset of buffer[idx]; return its atom."""
        if len(idx) != buffer.ndim:
            raise ExecutionError(f"tir interpreter: buffer {buffer.name} of rank {buffer.ndim} "
                                 f"accessed with {len(idx)} indices")
        strides = [self.expr(simplify(s), depth) for s in buffer.effective_strides()]
        terms = [f"{i} * {s}" for i, s in zip(idx, strides)] or ["0"]
        off = self.new_tmp()
        b = self.buf(buffer)
        self.emit(f"{off} = {' + '.join(terms)}", depth)
        self.emit(f"if not 0 <= {off} < len({b}): _oob({buffer.name!r}, {off}, len({b}))", depth)
        return off

    # -- statements -------------------------------------------------------------------------
    def stmt(self, s, depth):
        if isinstance(s, S.SeqStmt):
            for sub in s.seq:
                self.stmt(sub, depth)
        elif isinstance(s, S.For):
            lo = self.expr(s.min, depth)
            ext = self.expr(s.extent, depth)
            self.emit(f"for {self.name_of(s.loop_var)} in range({lo}, {lo} + {ext}):", depth)
            self.stmt(s.body, depth + 1)
            self.emit("pass", depth + 1)
        elif isinstance(s, S.BufferStore):
            value = self.expr(s.value, depth)
            idx = [self.expr(i, depth) for i in s.indices]
            off = self.offset(s.buffer, idx, depth)
            conv = "float" if E.is_float_dtype(s.buffer.dtype) else \
                "bool" if s.buffer.dtype == "bool" else "int"
            self.emit(f"{self.buf(s.buffer)}[{off}] = {conv}({value})", depth)
        elif isinstance(s, S.Allocate):
            size = self.expr(s.buffer.size(), depth)
            self.emit(f"{self.buf(s.buffer)} = [None] * {size}", depth)
            self.stmt(s.body, depth)
        elif isinstance(s, S.IfThenElse):
            self.emit(f"if {self.expr(s.condition, depth)}:", depth)
            self.stmt(s.then_case, depth + 1)
            self.emit("pass", depth + 1)
            if s.else_case is not None:
                self.emit("else:", depth)
                self.stmt(s.else_case, depth + 1)
                self.emit("pass", depth + 1)
        elif isinstance(s, S.LetStmt):
            value = self.expr(s.value, depth)
            self.emit(f"{self.name_of(s.var)} = {value}", depth)
            self.stmt(s.body, depth)
        elif isinstance(s, S.ThreadAllReduce):     # one thread: the partials are the result
            for var, source in zip(s.result_vars, s.sources):
                self.emit(f"{self.name_of(var)} = {self.expr(source, depth)}", depth)
            self.stmt(s.body, depth)
        elif isinstance(s, S.Evaluate):
            self.expr(s.value, depth)
        else:
            raise ExecutionError(f"tir interpreter: unknown statement {type(s).__name__}")


def build(func):
    """Compile `func` to a Python callable `f(*arrays)` that runs it in place on the arrays."""
    cg = _Codegen()
    for b in func.params:
        cg.name_of(b.data)
    shape_vars = func.shape_vars
    for v in shape_vars:
        cg.name_of(v)
    cg.emit("def kernel(__bufs, __sizes):", 0)
    for k, b in enumerate(func.params):
        cg.emit(f"{cg.buf(b)} = __bufs[{k}]", 1)
    for k, v in enumerate(shape_vars):
        cg.emit(f"{cg.name_of(v)} = __sizes[{k}]", 1)
    cg.stmt(func.body, 1)
    cg.emit("pass", 1)
    source = "\n".join(cg.lines)
    scope = {"_INTRIN": _INTRIN, "_BITS": _BITS, "_reinterpret": _reinterpret, "_tdiv": _tdiv,
             "_tmod": _tmod, "_cast": _cast, "_oob": _oob, "math": math}
    exec(compile(source, f"<tir {func.name}>", "exec"), scope)
    kernel = scope["kernel"]
    stored = stored_buffers(func.body)

    def run(*arrays):
        np_arrays = _check_args(func, arrays)
        sizes = _bind_shape_vars(func, shape_vars, np_arrays)
        lists = [a.reshape(-1).tolist() for a in np_arrays]
        try:
            kernel(lists, sizes)
        except ExecutionError:
            raise
        except Exception as err:  # a Python error inside the kernel is a kernel bug
            raise ExecutionError(f"tir interpreter: {func.name} failed: "
                                 f"{type(err).__name__}: {err}") from err
        for arr, lst, b in zip(np_arrays, lists, func.params):
            if id(b.data) in stored:
                arr.reshape(-1)[:] = _to_numpy(lst, arr.dtype)
        return None

    run.source = source
    return run


def _to_numpy(values, dtype):
    """Python values stored by a kernel as an array of `dtype`: integers wrap to its width
    (uint64 values above 2**63 stay exact), floats round from float64."""
    if E.is_int_dtype(str(dtype)):
        span = 1 << (8 * dtype.itemsize)
        return np.array([int(v) % span for v in values], dtype=f"uint{8 * dtype.itemsize}").view(dtype)
    wide = np.float64 if E.is_float_dtype(str(dtype)) else None
    return np.asarray(values, dtype=wide).astype(dtype)


def run(func, *arrays):
    """Run `func` on numpy arrays (inputs then outputs); outputs are written in place."""
    build(func)(*arrays)


def _check_args(func, arrays):
    if len(arrays) != len(func.params):
        raise InputError(f"{func.name}: expects {len(func.params)} arrays "
                         f"({', '.join(b.name for b in func.params)}), got {len(arrays)}")
    out = []
    for arr, b in zip(arrays, func.params):
        a = np.asarray(arr)
        if str(a.dtype) != b.dtype:
            raise InputError(f"{func.name}: argument {b.name} has dtype {a.dtype}, "
                             f"expected {b.dtype}")
        if a.ndim != b.ndim:
            raise InputError(f"{func.name}: argument {b.name} has rank {a.ndim}, "
                             f"expected {b.ndim} (shape {tuple(map(str, b.shape))})")
        if not a.flags.c_contiguous:
            raise InputError(f"{func.name}: argument {b.name} must be C-contiguous")
        out.append(a)
    return out


def _bind_shape_vars(func, shape_vars, arrays):
    """Bind symbolic dims from the argument shapes and check every dim matches."""
    from .functor import substitute
    from .simplify import simplify
    env = {}
    for a, b in zip(arrays, func.params):
        for k, dim in enumerate(b.shape):
            if isinstance(dim, E.Var):
                if id(dim) in env and env[id(dim)] != a.shape[k]:
                    raise InputError(f"{func.name}: shape var {dim.name} is {env[id(dim)]} from an "
                                     f"earlier argument but {a.shape[k]} in {b.name}")
                env[id(dim)] = a.shape[k]
    for a, b in zip(arrays, func.params):
        for k, dim in enumerate(b.shape):
            value = simplify(substitute(dim, {v: E.const(env[id(v)]) for v in shape_vars
                                              if id(v) in env}))
            if not isinstance(value, E.IntImm):
                raise InputError(f"{func.name}: cannot determine dim {k} ({dim}) of {b.name}")
            if value.value != a.shape[k]:
                raise InputError(f"{func.name}: argument {b.name} has shape {a.shape}, expected "
                                 f"dim {k} = {dim} = {value.value}")
    missing = [v.name for v in shape_vars if id(v) not in env]
    if missing:
        raise InputError(f"{func.name}: shape vars {missing} are not a dimension of any argument")
    return [env[id(v)] for v in shape_vars]
