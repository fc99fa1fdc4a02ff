"""tir expressions -> C99 expression strings, and tir dtypes -> C types.

Semantics follow tir/expr.py and the LLVM backend: Div truncates on integers, FloorDiv /
FloorMod round toward -inf, Mod is C's remainder (fmod on floats), Min/Max propagate NaN,
float16 values are floats rounded back to half precision after every operation, bool values
are C ints 0/1 stored as one byte. Printing uses an explicit stack (no recursion), and a
subexpression used twice or nested deeper than MAX_DEPTH is bound to a `const` temporary
emitted just before the statement being printed, so C compilers never see huge nestings; a
temporary inside a Select branch that reads memory stays in that branch (an if/else), since
the branch not taken may load out of range (lazy_select.py).
"""
import numpy as np

from .. import tir
from ..tir.functor import children as tir_children
from ..errors import CompileError
from .lazy_select import BranchMemo, lazy_selects

MAX_DEPTH = 24      # nesting depth after which a subexpression goes into a temporary
_INDENT = "  "      # one nesting level of the emitted lines (the owner's line() indents by it)

_VALUE_TYPES = {"bool": "int", "float16": "float", "float32": "float", "float64": "double"}
_STORAGE_TYPES = {"bool": "uint8_t", "float16": "uint16_t"}
_INT_BITS = (8, 16, 32, 64)


def _int_bits(dtype: str):
    """(signed, bits) for an integer dtype, or None."""
    for prefix, signed in (("uint", False), ("int", True)):
        if dtype.startswith(prefix) and dtype[len(prefix):].isdigit():
            bits = int(dtype[len(prefix):])
            return (signed, bits) if bits in _INT_BITS else None
    return None


def value_type(dtype: str) -> str:
    """The C type a value of `dtype` is computed in."""
    if dtype in _VALUE_TYPES:
        return _VALUE_TYPES[dtype]
    ib = _int_bits(dtype)
    if ib is None:
        raise CompileError(f"c codegen: unsupported dtype {dtype!r}; supported: bool, "
                           f"int8/16/32/64, uint8/16/32/64, float16, float32, float64")
    return f"{'' if ib[0] else 'u'}int{ib[1]}_t"


def storage_type(dtype: str) -> str:
    """The C element type of a buffer of `dtype` (bool: one byte, float16: its bits)."""
    return _STORAGE_TYPES.get(dtype) or value_type(dtype)


def itemsize(dtype: str) -> int:
    return {"bool": 1, "float16": 2, "float32": 4, "float64": 8}.get(dtype) or \
        _int_bits(dtype)[1] // 8


def is_float(dtype: str) -> bool:
    return dtype in ("float16", "float32", "float64")


def int_literal(value: int, dtype: str) -> str:
    """A C literal of integer `dtype` holding `value` (minimum values spelled safely)."""
    if dtype == "bool":
        return "1" if value else "0"
    signed, bits = _int_bits(dtype) or (True, 32)
    if bits == 64:
        if signed and value == -(1 << 63):
            return "INT64_MIN"
        return f"INT64_C({value})" if signed else f"UINT64_C({value})"
    if signed and bits == 32 and value == -(1 << 31):
        return "INT32_MIN"
    text = str(value) if signed else f"{value}u"
    if value < 0:
        text = f"({text})"
    return text if bits == 32 else f"(({value_type(dtype)}){text})"


def float_literal(value: float, dtype: str) -> str:
    """A C literal of float `dtype` equal to `value` rounded to that dtype."""
    if dtype == "float64":
        v = float(value)
        if np.isnan(v):
            return "((double)NAN)"
        if np.isinf(v):
            return "((double)INFINITY)" if v > 0 else "(-(double)INFINITY)"
        text = repr(v)
        return text if v >= 0 else f"({text})"
    v = float(np.float16(value) if dtype == "float16" else np.float32(value))
    if np.isnan(v):
        return "NAN"
    if np.isinf(v):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    text = repr(v)
    if "e" not in text and "." not in text:
        text += ".0"
    return f"{text}f" if v >= 0 else f"({text}f)"


# intrinsic -> C function name for float32 (the float64 name drops the trailing "f")
_MATH = {
    "exp": "expf", "exp2": "exp2f", "log": "logf", "log2": "log2f", "log10": "log10f",
    "log1p": "log1pf", "tanh": "tanhf", "sqrt": "sqrtf", "erf": "erff", "fabs": "fabsf",
    "floor": "floorf", "ceil": "ceilf", "round": "nearbyintf", "trunc": "truncf", "sin": "sinf",
    "cos": "cosf", "tan": "tanf", "asin": "asinf", "acos": "acosf", "atan": "atanf",
    "sinh": "sinhf", "cosh": "coshf", "pow": "powf", "atan2": "atan2f", "fmod": "fmodf",
}
_BIT_OPS = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "shift_right")
_POLY = ("exp", "log", "tanh", "erf")     # float32: inline polynomials of c_math.py
_CMP = {tir.EQ: "==", tir.NE: "!=", tir.LT: "<", tir.LE: "<=", tir.GT: ">", tir.GE: ">="}
_ARITH = {tir.Add: "+", tir.Sub: "-", tir.Mul: "*", tir.Div: "/"}


def strip_parens(text: str) -> str:
    """`(x)` -> `x` when the outer parentheses enclose the whole text."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for k, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and k < len(text) - 1:
            return text
    return text[1:-1]


def _leading_block(lines, text, vtype):
    """When a branch's lines are exactly `<vtype> <text>;` and one if/else assigning it (an
    inner select in statement form is the whole branch): (its variable, its `if (...) {` line,
    the rest dedented one level), so the outer select continues it as `else if` instead of
    nesting one block deeper per select of a chain. Else None."""
    if len(lines) < 2 or lines[0].strip() != f"{vtype} {text};" or not lines[1].lstrip().startswith("if ("):
        return None
    indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
    if any(not line.startswith(indent) for line in lines):
        return None
    top = [line for line in lines[2:] if not line.startswith(indent + " ")]   # the if's own lines
    if not top or top[-1] != indent + "}" or not all(line.startswith(indent + "} else") for line in top[:-1]):
        return None
    step = len(_INDENT)
    return text, lines[1], [line[step:] for line in lines[2:]]


def _children(node) -> list:
    """Sub-expressions evaluated before `node` (Let is handled specially by the emitter)."""
    return [] if isinstance(node, tir.Let) else tir_children(node)


class ExprPrinter:
    """Prints tir expressions as C; needs an owner with `names` (a NameTable), `line(text)`
    (emit a statement before the one being printed), `lines` (the list line() appends to),
    `indent` (the nesting depth line() uses) and `element(buffer, index_strs)`."""

    def __init__(self, owner):
        self.owner = owner

    def expr(self, root, hoist: bool = True) -> str:
        """The C text of `root`; temporaries it needs are emitted via owner.line()
        (hoist=False: one inline expression, for shapes used outside the body)."""
        return self.exprs([root], hoist)[0]

    def exprs(self, roots, hoist: bool = True) -> list:
        """The C texts of several expressions of one statement (shared parts bound once)."""
        uses, seen, todo = {}, set(), list(roots)
        for root in roots:
            uses[id(root)] = uses.get(id(root), 0) + 1
        while todo:                        # count parents of every node (each node once)
            node = todo.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            kids = _children(node) + ([node.value, node.body] if isinstance(node, tir.Let) else [])
            for kid in kids:
                uses[id(kid)] = uses.get(id(kid), 0) + 1
                todo.append(kid)
        memo = BranchMemo()                # id(node) -> (text, depth)
        lazy = lazy_selects(roots) if hoist else set()
        for root in roots:
            self._print(root, uses, memo, hoist, lazy)
        return [memo[id(root)][0] for root in roots]

    def _print(self, root, uses, memo, hoist, lazy):
        stack = [(root, 0, None)]
        while stack:
            node, state, data = stack.pop()
            key = id(node)
            if state == 0 and key in memo:
                continue
            if isinstance(node, tir.Let):
                if state == 0:
                    stack += [(node, 1, None), (node.value, 0, None)]
                elif state == 1:
                    name = self.owner.names.bind(node.var)
                    memo.pop(id(node.var), None)     # a rebound Var prints its new name
                    self.owner.line(f"const {value_type(node.var.dtype)} {name} = "
                                    f"{self._convert(memo[id(node.value)][0], node.value.dtype, node.var.dtype)};")
                    stack += [(node, 2, None), (node.body, 0, None)]
                else:
                    memo[key] = memo[id(node.body)]
                continue
            if key in lazy:
                self._lazy_select_step(node, state, data, memo, stack, uses)
                continue
            kids = _children(node)
            if state == 0 and kids:
                stack.append((node, 1, None))
                stack.extend((k, 0, None) for k in reversed(kids) if id(k) not in memo)
                continue
            texts = [memo[id(k)][0] for k in kids]
            depth = 1 + max((memo[id(k)][1] for k in kids), default=-1)
            text = self._multiply_add(node, kids, uses, memo) or self._lower(node, texts)
            self._bind(key, text, depth, bool(kids) and hoist, node.dtype, uses, memo)

    def _bind(self, key, text, depth, may_hoist, dtype, uses, memo):
        """memo[key] = (text, depth), or a const temporary holding the text when the node is
        used twice or nested too deep."""
        if may_hoist and (uses.get(key, 0) > 1 or depth >= MAX_DEPTH):
            name = self.owner.names.temp()
            self.owner.line(f"const {value_type(dtype)} {name} = {text};")
            text, depth = name, 0
        memo[key] = (text, depth)

    def _lazy_select_step(self, node, state, data, memo, stack, uses):
        """One step of a Select whose branches read memory. Each branch is printed with the
        lines it emits (hoisted temporaries) captured; with none, C's ?: is lazy already;
        otherwise the branches become an if/else assigning one variable, so a temporary of
        the branch not taken never runs (its load may be out of range).
        States: 0 condition, 1 then-branch, 2 else-branch, 3 emit."""
        owner = self.owner
        if state == 0:
            stack += [(node, 1, None), (node.condition, 0, None)]
        elif state == 1:
            outer = owner.lines
            self._begin_branch(memo)
            stack += [(node, 2, outer), (node.true_value, 0, None)]
        elif state == 2:
            then_branch = self._end_branch(node.true_value, memo)
            self._begin_branch(memo)
            stack += [(node, 3, (data, then_branch)), (node.false_value, 0, None)]
        else:
            outer, (then_lines, then_text, then_depth) = data
            else_lines, else_text, else_depth = self._end_branch(node.false_value, memo)
            owner.lines = outer
            cond_text, cond_depth = memo[id(node.condition)]
            if not then_lines and not else_lines:
                depth = 1 + max(cond_depth, then_depth, else_depth)
                text = self._lower(node, [cond_text, then_text, else_text])
                self._bind(id(node), text, depth, True, node.dtype, uses, memo)
                return
            vtype = value_type(node.dtype)
            cond_text = strip_parens(cond_text)
            then_chain = _leading_block(then_lines, then_text, vtype)
            else_chain = _leading_block(else_lines, else_text, vtype)
            if else_chain is not None:        # an else-if chain: continue the inner select's
                name, first, rest = else_chain             # if/else, assigning its variable
                branch, text, header = then_lines, then_text, f"if ({cond_text}) {{"
            elif then_chain is not None:      # the chain runs through the true branch
                name, first, rest = then_chain
                branch, text, header = else_lines, else_text, f"if (!({cond_text})) {{"
            else:
                name, first, rest = owner.names.temp(), None, None
                branch, text, header = then_lines, then_text, f"if ({cond_text}) {{"
            owner.line(f"{vtype} {name};")
            owner.line(header)
            owner.lines += branch
            owner.line(f"{_INDENT}{name} = {strip_parens(text)};")
            if first is not None:
                owner.line("} else " + first.lstrip())
                owner.lines += rest
            else:
                owner.line("} else {")
                owner.lines += else_lines
                owner.line(f"{_INDENT}{name} = {strip_parens(else_text)};")
                owner.line("}")
            memo[id(node)] = (name, 0)

    def _begin_branch(self, memo):
        """Capture the lines of a branch in a fresh list, one level deeper, in a memo scope."""
        self.owner.lines = []
        self.owner.indent += 1
        memo.enter()

    def _end_branch(self, value, memo):
        """(captured lines, text, depth) of the branch just printed; ends its scope."""
        text, depth = memo[id(value)]
        memo.leave()
        self.owner.indent -= 1
        return self.owner.lines, text, depth

    @staticmethod
    def _multiply_add(node, kids, uses, memo):
        """`a*b + c`, `a*b - c`, `c - a*b` on float32/64 as one RB_FMAF / RB_FMA (the LLVM
        backend's `contract`), when the product is used only there and was not put into a
        temporary; None otherwise."""
        if not isinstance(node, (tir.Add, tir.Sub)) or node.dtype not in ("float32", "float64"):
            return None
        fma = "RB_FMAF" if node.dtype == "float32" else "RB_FMA"
        for k, kid in enumerate(kids):
            if isinstance(kid, tir.Mul) and kid.dtype == node.dtype and uses.get(id(kid), 0) == 1 \
                    and memo[id(kid)][1] > 0:
                a, b = memo[id(kid.a)][0], memo[id(kid.b)][0]
                c = memo[id(kids[1 - k])][0]
                if isinstance(node, tir.Add):
                    return f"{fma}({a}, {b}, {c})"
                return f"{fma}({a}, {b}, -{c})" if k == 0 else f"{fma}(-{a}, {b}, {c})"
        return None

    # ------------------------------------------------------------------ nodes
    def _lower(self, node, t):
        dt = node.dtype
        if isinstance(node, tir.IntImm):
            return int_literal(node.value, dt)
        if isinstance(node, tir.FloatImm):
            return float_literal(node.value, dt)
        if isinstance(node, tir.Var):
            return self.owner.names.lookup(node)
        if isinstance(node, tir.CmpOp):
            return f"({t[0]} {_CMP[type(node)]} {t[1]})"
        if isinstance(node, tir.And):
            return f"({t[0]} && {t[1]})"
        if isinstance(node, tir.Or):
            return f"({t[0]} || {t[1]})"
        if isinstance(node, tir.Not):
            return f"(!{t[0]})"
        if isinstance(node, tir.BinaryOp):
            return self._arith(node, t[0], t[1])
        if isinstance(node, tir.Select):
            return f"({t[0]} ? {t[1]} : {t[2]})"
        if isinstance(node, tir.Cast):
            return self._convert(t[0], node.value.dtype, dt)
        if isinstance(node, tir.Call):
            return self._call(node, t)
        if isinstance(node, tir.BufferLoad):
            elem = self.owner.element(node.buffer, t)
            if dt == "float16":
                return f"rb_h2f({elem})"
            if dt == "bool":
                return f"({elem} != 0)"
            return elem
        if isinstance(node, tir.StringImm):
            raise CompileError(f"c codegen: string constant {node.value!r} used as a value")
        raise CompileError(f"c codegen: cannot lower {type(node).__name__} `{node}` "
                           f"(te-level nodes must be lowered to tir first)")

    def _arith(self, node, a, b):
        dt, kind = node.dtype, type(node)
        if is_float(dt):
            f16 = dt == "float16"
            suffix = "_d" if dt == "float64" else ""
            if kind in _ARITH:
                text = f"({a} {_ARITH[kind]} {b})"
            elif kind is tir.Mod:
                text = f"{'fmod' if suffix else 'fmodf'}({a}, {b})"
            elif kind is tir.FloorDiv:
                text = f"rb_floordiv{suffix or 'f'}({a}, {b})"
            elif kind is tir.FloorMod:
                text = f"rb_floormod{suffix or 'f'}({a}, {b})"
            elif kind in (tir.Min, tir.Max):       # exact on halves: no rounding needed
                return f"rb_{'min' if kind is tir.Min else 'max'}{suffix or 'f'}({a}, {b})"
            else:
                raise CompileError(f"c codegen: unsupported operator {kind.__name__} on {dt}")
            return f"rb_hround({text})" if f16 else text
        if dt == "bool":
            raise CompileError(f"c codegen: arithmetic `{node}` on bool values; cast to int32")
        signed, bits = _int_bits(dt)
        wide = ("int" if signed else "uint") + ("64" if bits == 64 else "32")
        wtype = wide + "_t"
        narrow = bits < 32
        if narrow:                 # compute in 32 bits (no signed-int promotion surprises)
            a, b = f"({wtype}){a}", f"({wtype}){b}"
        if kind in _ARITH:
            text = f"({a} {_ARITH[kind]} {b})"
        elif kind is tir.Mod:
            text = f"({a} % {b})"
        elif kind in (tir.FloorDiv, tir.FloorMod):
            if signed:
                text = f"rb_floor{'div' if kind is tir.FloorDiv else 'mod'}_i{wide[-2:]}({a}, {b})"
            else:
                text = f"({a} {'/' if kind is tir.FloorDiv else '%'} {b})"
        elif kind in (tir.Min, tir.Max):
            text = (f"rb_{'min' if kind is tir.Min else 'max'}_"
                    f"{'i' if signed else 'u'}{wide[-2:]}({a}, {b})")
        else:
            raise CompileError(f"c codegen: unsupported operator {kind.__name__} on {dt}")
        return f"(({value_type(dt)}){text})" if narrow else text

    def _convert(self, text, src: str, dst: str) -> str:
        """Convert a C value of dtype `src` to dtype `dst` (C / numpy semantics)."""
        if src == dst:
            return text
        if dst == "bool":
            return f"({text} != 0)"
        if dst == "float16":
            if src == "float64":
                return f"rb_hround_d({text})"
            return f"rb_hround((float){text})"
        return f"(({value_type(dst)}){text})"

    def _call(self, node, t):
        op, dt = node.op_name, node.dtype
        if op == "omp_get_thread_num":
            return "rb_thread_id()"
        if op == "omp_get_num_threads":
            return "rb_num_threads()"
        arg_dt = node.args[0].dtype if node.args else dt
        if op == "reinterpret":
            return self._reinterpret(t[0], arg_dt, dt)
        if op in _BIT_OPS:
            return self._bit_call(op, t, dt)
        if not is_float(arg_dt):
            return self._int_call(node, t, arg_dt)
        if op in ("isnan", "isinf"):
            return f"({op}({t[0]}) != 0)"
        f64 = arg_dt == "float64"
        if op == "sigmoid":
            text = f"rb_sigmoid{'_d' if f64 else 'f'}({t[0]})"
        elif op in _POLY and not f64:
            text = f"rb_{_MATH[op]}({t[0]})"
        elif op == "rsqrt":
            text = f"(1.0 / sqrt({t[0]}))" if f64 else f"(1.0f / sqrtf({t[0]}))"
        elif op in _MATH:
            name = _MATH[op][:-1] if f64 else _MATH[op]
            text = f"{name}({', '.join(t)})"
        else:
            raise CompileError(f"c codegen: no lowering for math intrinsic {op!r} on {arg_dt}")
        if dt != arg_dt:
            return self._convert(text, arg_dt, dt)
        return f"rb_hround({text})" if dt == "float16" else text

    @staticmethod
    def _bit_call(op, t, dt):
        """Bit operations in the unsigned type of the dtype's width (a signed left shift of a
        negative value is undefined in C); right shifts of signed values stay arithmetic."""
        if op == "shift_right":
            return f"(({value_type(dt)})({t[0]} >> {t[1]}))"
        if dt == "bool":
            text = {"bitwise_and": "({0} & {1})", "bitwise_or": "({0} | {1})",
                    "bitwise_xor": "({0} ^ {1})", "bitwise_not": "(!{0})"}[op].format(*t, "")
            return text
        utype = "u" + value_type(dt) if not dt.startswith("uint") else value_type(dt)
        operands = [f"(({utype}){x})" for x in t]
        text = {"bitwise_and": "{0} & {1}", "bitwise_or": "{0} | {1}", "bitwise_xor": "{0} ^ {1}",
                "bitwise_not": "~{0}", "shift_left": "{0} << {1}"}[op].format(*operands, "")
        return f"(({value_type(dt)})({utype})({text}))"

    @staticmethod
    def _reinterpret(text, src, dst):
        """The bits of a `src` value read as `dst` (same width): floats through the prelude's
        unions, float16 through its bit conversions, integers by a wrapping cast."""
        if src == "float16":
            text = f"rb_f2h({text})"
        elif src in ("float32", "float64"):
            text = f"rb_bits_of_f{src[-2:]}({text})"
        if dst == "float16":
            return f"rb_h2f((uint16_t)({text}))"
        if dst in ("float32", "float64"):
            return f"rb_f{dst[-2:]}_of_bits((uint{dst[-2:]}_t)({text}))"
        return f"(({value_type(dst)})({text}))"

    def _int_call(self, node, t, arg_dt):
        op = node.op_name
        if op in ("floor", "ceil", "round", "trunc"):
            return t[0]
        if op == "fabs":
            return f"(({t[0]}) < 0 ? -({t[0]}) : ({t[0]}))" if len(t[0]) < 40 else \
                self._abs_via_temp(t[0], arg_dt)
        if op in ("isnan", "isinf"):
            return "0"
        raise CompileError(f"c codegen: math intrinsic {op!r} needs a float argument, got "
                           f"{arg_dt} in `{node}`; cast the argument to float32")

    def _abs_via_temp(self, text, dtype):
        name = self.owner.names.temp()
        self.owner.line(f"const {value_type(dtype)} {name} = {text};")
        return f"({name} < 0 ? -{name} : {name})"
