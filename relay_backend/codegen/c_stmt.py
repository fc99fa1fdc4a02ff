"""One tir PrimFunc -> C99 text: a typed static inline worker plus three exported entries.

For a PrimFunc named `f` (native symbol `rb_f`, as the LLVM backend names it):

    static inline int32_t rb_f_compute(const float* restrict A, float* restrict B,
                                       int32_t n, uint8_t* restrict rb_ws);
    int64_t rb_f_workspace_size(const int64_t* shape_vars);
    int32_t rb_f_ws(void* const* args, const int64_t* shape_vars,
                    void* workspace, int64_t workspace_size);
    int32_t rb_f(void* const* args, const int64_t* shape_vars);      (= rb_f_ws(.., NULL, 0))

`args[i]` is buffer parameter i's data (inputs then outputs, 64-byte aligned, C-contiguous),
`shape_vars[j]` the j-th symbolic shape variable (runtime/module.py's convention). Buffers
never stored to are `const`. Entries return RB_OK (0) or a negative RB_ERR_* code.

Temporaries (tir Allocate): a constant size up to STACK_LIMIT bytes is a stack array in the
enclosing block (so each OpenMP thread has its own); anything bigger or symbolic lives in a
caller-provided workspace: no heap allocation ever (AOT programs must not allocate). The
layout is fixed per call: allocations outside parallel loops get their own 64-byte aligned
slot, and each parallel loop gets `rb_max_threads()` copies of its allocations' slots,
indexed by the thread id. `rb_f_workspace_size` says how many bytes to pass.
"""
import re

from .. import tir
from ..errors import CompileError
from ..tir.functor import stored_buffers
from ..tir.loop_deps import iterations_independent
from .c_expr import ExprPrinter, itemsize, storage_type, strip_parens, value_type
from .c_prelude import PRELUDE

STACK_LIMIT = 64 * 1024          # bytes; bigger or symbolic temporaries use the workspace
UNROLL_LIMIT = 256               # full unroll pragma only up to this many iterations
_SIZE_NODES = (tir.IntImm, tir.Var, tir.Add, tir.Sub, tir.Mul, tir.FloorDiv, tir.FloorMod,
               tir.Min, tir.Max, tir.Cast)
_C_KEYWORDS = set("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static struct
switch typedef union unsigned void volatile while _Bool _Complex _Imaginary main args
shape_vars workspace workspace_size""".split())
_FILE_SCOPE = {w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", PRELUDE)
               if w.startswith(("rb_", "RB_", "omp_", "_")) or w.endswith("_t")}
_RESERVED = _C_KEYWORDS | _FILE_SCOPE | {"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
                                         "uint16_t", "uint32_t", "uint64_t", "uintptr_t",
                                         "size_t",
    "expf", "exp2f", "logf", "log2f", "log10f", "log1pf", "tanhf", "sqrtf", "erff", "fabsf",
    "floorf", "ceilf", "nearbyintf", "truncf", "sinf", "cosf", "tanf", "asinf", "acosf",
    "atanf", "sinhf", "coshf", "powf", "atan2f", "fmodf", "exp", "exp2", "log", "log2", "log10",
    "log1p", "tanh", "sqrt", "erf", "fabs", "floor", "ceil", "nearbyint", "trunc", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "pow", "atan2", "fmod", "isnan", "isinf",
    "INFINITY", "NAN", "INT64_C", "UINT64_C", "INT64_MIN", "INT32_MIN", "NULL"}


class NameTable:
    """Unique, valid C identifiers for one function's variables, buffers and temporaries."""

    def __init__(self):
        self.used = set()
        self.by_id = {}
        self._temps = 0

    def fresh(self, base: str) -> str:
        name = re.sub(r"[^A-Za-z0-9_]", "_", base) or "v"
        if name[0].isdigit() or name.startswith("_") or name.startswith("rb_"):
            name = "v_" + name.lstrip("_")
        if name in _RESERVED:
            name += "_"
        out, k = name, 0
        while out in self.used:
            k += 1
            out = f"{name}_{k}"
        self.used.add(out)
        return out

    def bind(self, var) -> str:
        self.by_id[id(var)] = name = self.fresh(var.name)
        return name

    def lookup(self, var) -> str:
        name = self.by_id.get(id(var))
        if name is None:
            raise CompileError(f"c codegen: variable {var.name} ({var.dtype}) is used but not "
                               f"bound here (not a shape var, loop var or Let)")
        return name

    def temp(self) -> str:
        self._temps += 1
        return self.fresh(f"t{self._temps}")


def _sum(terms) -> str:
    """C text of a sum of int and string terms (ints folded)."""
    const = sum(t for t in terms if isinstance(t, int))
    parts = [t for t in terms if not isinstance(t, int)]
    if const or not parts:
        parts.append(str(const))
    return parts[0] if len(parts) == 1 else "(" + " + ".join(parts) + ")"


class FunctionEmitter:
    """Emits the C text of one PrimFunc; see the module docstring for the ABI."""

    def __init__(self, func, info):
        self.func = func
        self.info = info
        self.symbol = info.symbol
        self.names = NameTable()
        self.printer = ExprPrinter(self)
        self.lines = []
        self.indent = 1
        self.buffers = {}                  # id(buffer.data) -> C name
        self.shape_vars = func.shape_vars
        self.shape_names = [self.names.bind(v) for v in self.shape_vars]
        self.stack_allocs = set()          # id(Allocate) placed on the stack
        self.ws_slots = {}                 # id(Allocate) -> C offset text (uses rb_tid)
        self.ws_total = "0"
        self.par_depth = 0

    # ------------------------------------------------------------------ output helpers
    def line(self, text: str):
        self.lines.append("  " * self.indent + text)

    def element(self, buffer, index_texts) -> str:
        """C lvalue text of buffer[indices] with a row-major (or explicit-stride) offset."""
        base = self.buffers.get(id(buffer.data))
        if base is None:
            raise CompileError(f"c codegen {self.info.name}: buffer {buffer.name} is used but "
                               f"is not a parameter or an enclosing Allocate")
        if len(index_texts) != buffer.ndim:
            raise CompileError(f"c codegen {self.info.name}: buffer {buffer.name} has rank "
                               f"{buffer.ndim} but is indexed with {len(index_texts)} indices")
        if not index_texts:
            return f"{base}[0]"
        strides = self._strides(buffer)
        small = all(isinstance(s, int) for s in strides) and _const_extent(buffer) < 2 ** 31
        terms = []
        for idx, stride in zip(index_texts, strides):
            idx = idx if small else f"(int64_t){idx}"
            terms.append(idx if stride == 1 else f"{idx} * {stride}")
        return f"{base}[{' + '.join(terms)}]"

    def _strides(self, buffer):
        """Per-dimension strides: ints when constant, else C text (int64)."""
        if buffer.strides is not None:
            return [int(s.value) if isinstance(s, tir.IntImm) else
                    f"(int64_t){self.size_text(s, buffer)}" for s in buffer.strides]
        out, acc = [], 1
        for dim in reversed(buffer.shape):
            out.append(acc)
            if isinstance(acc, int) and isinstance(dim, tir.IntImm):
                acc = acc * int(dim.value)
            else:
                d = str(int(dim.value)) if isinstance(dim, tir.IntImm) else \
                    f"(int64_t){self.size_text(dim, buffer)}"
                acc = d if acc == 1 else f"({acc} * {d})"
        return list(reversed(out))

    def size_text(self, e, buffer) -> str:
        """C text of a shape/stride expression (shape vars and arithmetic only)."""
        for node in tir.walk(e):
            if not isinstance(node, _SIZE_NODES):
                raise CompileError(f"c codegen {self.info.name}: dimension `{e}` of buffer "
                                   f"{buffer.name} uses {type(node).__name__}; only shape "
                                   f"variables and + - * // % min max are allowed")
            if isinstance(node, tir.Var) and id(node) not in self.names.by_id:
                raise CompileError(f"c codegen {self.info.name}: dimension `{e}` of buffer "
                                   f"{buffer.name} uses {node.name}, which is not a shape "
                                   f"variable of the function's parameters")
        return self.printer.expr(e, hoist=False)

    # ------------------------------------------------------------------ workspace layout
    def _plan(self, body):
        """Decide stack vs workspace for every Allocate and lay out the workspace."""
        glob, par = [], {}                 # workspace allocs outside / inside parallel loops
        par_order = []
        stack = [(body, None)]
        while stack:
            s, loop = stack.pop()
            if isinstance(s, tir.SeqStmt):
                stack.extend((c, loop) for c in reversed(s.seq))
            elif isinstance(s, tir.For):
                inner = s if (s.kind == "parallel" and loop is None) else loop
                stack.append((s.body, inner))
            elif isinstance(s, (tir.LetStmt, tir.Allocate)):
                if isinstance(s, tir.Allocate):
                    nbytes = self._alloc_bytes(s.buffer)
                    if isinstance(nbytes, int) and nbytes <= STACK_LIMIT:
                        self.stack_allocs.add(id(s))
                    elif loop is None:
                        glob.append((s, nbytes))
                    else:
                        if id(loop) not in par:
                            par[id(loop)] = []
                            par_order.append(id(loop))
                        par[id(loop)].append((s, nbytes))
                stack.append((s.body, loop))
            elif isinstance(s, tir.IfThenElse):
                stack.extend((c, loop) for c in (s.else_case, s.then_case) if c is not None)
        offset = []
        for s, nbytes in glob:
            self.ws_slots[id(s)] = _sum(offset)
            offset.append(nbytes)
        for key in par_order:
            stride = _sum([n for _, n in par[key]])
            local = []
            for s, nbytes in par[key]:
                self.ws_slots[id(s)] = _sum(offset + [f"(int64_t)rb_thread_id() * {stride}"]
                                            + local)
                local.append(nbytes)
            offset.append(f"rb_max_threads() * {stride}")
        self.ws_total = _sum(offset)

    def _alloc_bytes(self, buf):
        """Aligned byte size of a temporary: an int, or C text over shape vars."""
        numel = 1
        for d in buf.shape:
            if isinstance(d, tir.IntImm):
                numel = numel * int(d.value) if isinstance(numel, int) else \
                    f"{numel} * {int(d.value)}"
            else:
                d = f"(int64_t){self.size_text(d, buf)}"
                numel = d if numel == 1 else f"{numel} * {d}"
        if isinstance(numel, int):
            return (max(numel, 1) * itemsize(buf.dtype) + 63) // 64 * 64
        return f"rb_align64({numel} * {itemsize(buf.dtype)})"

    # ------------------------------------------------------------------ statements
    def _body(self, body):
        work = [body]
        while work:
            s = work.pop()
            if callable(s):
                s()
            elif isinstance(s, tir.SeqStmt):
                work.extend(reversed(s.seq))
            elif isinstance(s, tir.LetStmt):
                value = self.printer.expr(s.value)
                value = self.printer._convert(value, s.value.dtype, s.var.dtype)
                name = self.names.bind(s.var)
                self.line(f"const {value_type(s.var.dtype)} {name} = {strip_parens(value)};")
                work.append(s.body)
            elif isinstance(s, tir.BufferStore):
                self._store(s)
            elif isinstance(s, tir.For):
                work.append(self._open_for(s))
                work.append(s.body)
            elif isinstance(s, tir.IfThenElse):
                self.line(f"if ({strip_parens(self.printer.expr(s.condition))}) {{")
                self.indent += 1
                work.append(self._close)
                if s.else_case is not None:
                    work.append(s.else_case)
                    work.append(self._else)
                work.append(s.then_case)
            elif isinstance(s, tir.Allocate):
                self._open_allocate(s)
                work.append(self._close)
                work.append(s.body)
            elif isinstance(s, tir.Evaluate):
                if not isinstance(s.value, (tir.IntImm, tir.FloatImm)):
                    self.line(f"(void){self.printer.expr(s.value)};")
            elif s is not None:
                self._other(s, work)

    def _store(self, s):
        """Emit `buffer[indices] = value;` (float16 stored as its bits, bool as one byte)."""
        *idx, value = self.printer.exprs(list(s.indices) + [s.value])
        value = strip_parens(value)
        if s.buffer.dtype == "float16":
            value = f"rb_f2h({value})"
        elif s.buffer.dtype == "bool":
            value = f"(uint8_t)({value})"
        self.line(f"{self.element(s.buffer, idx)} = {value};")

    def _other(self, s, work):
        """A statement the C backend does not know (a subclass may push work for it)."""
        raise CompileError(f"c codegen: unsupported statement {type(s).__name__}")

    def _close(self):
        self.indent -= 1
        self.line("}")

    def _close_parallel(self):
        self._close()
        self.par_depth -= 1

    def _else(self):
        self.indent -= 1
        self.line("} else {")
        self.indent += 1

    def _open_for(self, s):
        """Emit the loop header; returns what closes it (an OpenMP region ends differently)."""
        var = s.loop_var
        ctype = value_type(var.dtype)
        lo = self.printer._convert(self.printer.expr(s.min), s.min.dtype, var.dtype)
        ext = self.printer._convert(self.printer.expr(s.extent), s.extent.dtype, var.dtype)
        if isinstance(s.min, tir.IntImm) and isinstance(s.extent, tir.IntImm):
            end = str(int(s.min.value) + int(s.extent.value))
        elif isinstance(s.min, tir.IntImm) and s.min.value == 0:
            end = ext
        else:
            end = self.names.temp()
            self.line(f"const {ctype} {end} = {lo} + {ext};")
        name = self.names.bind(var)
        parallel = s.kind == "parallel" and self.par_depth == 0
        if parallel:
            self.line("RB_PARALLEL_FOR")
            self.par_depth += 1
        elif s.kind == "vectorized":
            self.line("RB_SIMD" if iterations_independent(s) else "RB_VECTORIZE")
        elif s.kind == "unrolled" and isinstance(s.extent, tir.IntImm) \
                and 1 < s.extent.value <= UNROLL_LIMIT:
            self.line(f"#pragma GCC unroll {int(s.extent.value)}")
        self.line(f"for ({ctype} {name} = {strip_parens(lo)}; {name} < {strip_parens(end)}; ++{name}) {{")
        self.indent += 1
        return self._close_parallel if parallel else self._close

    def _open_allocate(self, s):
        buf = s.buffer
        ctype = storage_type(buf.dtype)
        name = self.names.fresh(buf.name)
        self.buffers[id(buf.data)] = name
        self.line("{")
        self.indent += 1
        if id(s) in self.stack_allocs:
            numel = 1
            for d in buf.shape:
                numel *= int(d.value)
            self.line(f"{ctype} {name}[{max(numel, 1)}] RB_ALIGNED64;")
        else:
            self.line(f"{ctype}* const restrict {name} = ({ctype}*)(rb_ws + "
                      f"{strip_parens(self.ws_slots[id(s)])});")

    # ------------------------------------------------------------------ the function
    def emit(self) -> str:
        """The worker and the three entries of this function, as C text."""
        func, sym = self.func, self.symbol
        stored = stored_buffers(func.body)
        params, casts = [], []
        for k, buf in enumerate(func.params):
            if id(buf.data) in self.buffers:
                raise CompileError(f"c codegen {self.info.name}: parameter {buf.name} shares "
                                   f"its data with another parameter")
            name = self.buffers[id(buf.data)] = self.names.fresh(buf.name)
            ctype = storage_type(buf.dtype)
            const = "" if id(buf.data) in stored else "const "
            params.append(f"{const}{ctype}* restrict {name}")
            casts.append(f"({const}{ctype}*)RB_ASSUME_ALIGNED(args[{k}])")
        for v, name in zip(self.shape_vars, self.shape_names):
            params.append(f"{value_type(v.dtype)} {name}")
        self._plan(func.body)
        self._body(func.body)
        body = "".join(text + "\n" for text in self.lines)
        shape_args = [f"({value_type(v.dtype)})shape_vars[{j}]"
                      for j, v in enumerate(self.shape_vars)]
        shape_locals = "".join(f"  const {value_type(v.dtype)} {n} = ({value_type(v.dtype)})"
                               f"shape_vars[{j}];\n  (void){n};\n"
                               for j, (v, n) in enumerate(zip(self.shape_vars, self.shape_names)))
        sig = ", ".join(p.describe() for p in self.info.params)
        call_args = ", ".join(casts + shape_args + ["(uint8_t*)workspace"])
        return (
            f"/* {self.info.name}({sig}) */\n"
            f"static inline int32_t {sym}_compute({', '.join(params + ['uint8_t* restrict rb_ws'])}) {{\n"
            f"  (void)rb_ws;\n{body}  return RB_OK;\n}}\n\n"
            f"int64_t {sym}_workspace_size(const int64_t* shape_vars) {{\n"
            f"  (void)shape_vars;\n{shape_locals}  return {strip_parens(self.ws_total)};\n}}\n\n"
            f"int32_t {sym}_ws(void* const* args, const int64_t* shape_vars, void* workspace, "
            f"int64_t workspace_size) {{\n"
            f"  int64_t need = {sym}_workspace_size(shape_vars);\n"
            f"  if (need > 0 && (workspace == NULL || workspace_size < need)) return RB_ERR_WORKSPACE;\n"
            f"  if (need > 0 && ((uintptr_t)workspace & 63u) != 0) return RB_ERR_WORKSPACE_ALIGN;\n"
            f"  return {sym}_compute({call_args});\n}}\n\n"
            f"int32_t {sym}(void* const* args, const int64_t* shape_vars) {{\n"
            f"  return {sym}_ws(args, shape_vars, NULL, 0);\n}}\n")

    @property
    def needs_workspace(self) -> bool:
        return self.ws_total != "0"


def _const_extent(buffer) -> int:
    """Number of elements when every dim is constant; 2**63 otherwise."""
    n = 1
    for d in buffer.shape:
        if not isinstance(d, tir.IntImm):
            return 2 ** 63
        n *= int(d.value)
    return n
