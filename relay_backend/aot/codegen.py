"""AotProgram -> one C translation unit (model.c) and its header (model.h).

model.c holds every kernel (codegen/c.py), the constants as 64-byte aligned static arrays, ONE
static workspace arena and the entry point TVM's AOT executor names

    int32_t tvmgen_default_run(struct tvmgen_default_inputs* inputs,
                               struct tvmgen_default_outputs* outputs);

which calls the kernels in order with pointers into the arena at offsets fixed by the memory
planner: no malloc or free anywhere. model.h declares the two structs (one `void*` field per
input, named after the Relay var, and per output: output0, output1, ...), their byte sizes
and the workspace size. Caller buffers must be 64-byte aligned (the kernels assume it); the
entry checks and returns TVMGEN_ERR_ALIGN otherwise.
"""
import os
import re

import numpy as np

from ..codegen.c import generate
from ..codegen.c_expr import storage_type
from ..codegen.c_prelude import PRELUDE
from ..codegen.c_stmt import FunctionEmitter
from ..codegen.llvm import signature
from .program import AotCodegenError, AotProgram, align

PER_LINE = 8
ERR_ALIGN = -3


# Words a struct field of model.h cannot be: C99/C11 keywords, C++ keywords (model.h is
# meant to be included from C++ too) and object-like macros of the headers model.c / main.c
# include (a field named after a macro would be expanded away).
C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern float for goto if
    inline int long register restrict return short signed sizeof static struct switch typedef
    union unsigned void volatile while _Bool _Complex _Imaginary _Alignas _Alignof _Atomic
    _Generic _Noreturn _Static_assert _Thread_local
    alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t class compl
    concept consteval constexpr constinit const_cast co_await co_return co_yield decltype delete
    dynamic_cast explicit export false friend mutable namespace new noexcept not not_eq nullptr
    operator or or_eq private protected public reinterpret_cast requires static_assert
    static_cast template this thread_local throw true try typeid typename using virtual wchar_t
    xor xor_eq
    NULL EOF BUFSIZ FILENAME_MAX FOPEN_MAX L_tmpnam TMP_MAX SEEK_SET SEEK_CUR SEEK_END
    stdin stdout stderr errno EDOM ERANGE EILSEQ INFINITY NAN HUGE_VAL HUGE_VALF HUGE_VALL
    MATH_ERRNO MATH_ERREXCEPT math_errhandling
""".split())
_RESERVED = re.compile(r"__\w*|_[A-Z]\w*|(RB|TVMGEN|FP|M|_?OPENMP)_\w*|"
                       r"U?INT(8|16|32|64|_LEAST\d+|_FAST\d+|PTR|MAX)?_(MAX|MIN|C)|"
                       r"(SIZE|PTRDIFF|SIG_ATOMIC|WCHAR|WINT)_(MAX|MIN)")


def c_identifier(name: str, used: set) -> str:
    """A unique C identifier for a Relay var name ("input.1" -> "input_1", "int" -> "int_").

    C/C++ keywords, standard macros and reserved names (__x, _X) get a "_" suffix ("v" prefix
    for reserved ones). `used` holds lower-cased names: model.h's size macros spell fields in
    upper case, so inputs "a" and "A" become fields "a" and "A_1".
    """
    base = re.sub(r"[^A-Za-z0-9_]", "_", name) or "input"
    if base[0].isdigit():
        base = "v_" + base
    if base.startswith("_") and _RESERVED.fullmatch(base):
        base = "v" + base
    elif base in C_KEYWORDS or _RESERVED.fullmatch(base):
        base = base + "_"
    out, k = base, 0
    while out.lower() in used:
        k += 1
        out = f"{base}_{k}"
    used.add(out.lower())
    return out


def field_names(program: AotProgram):
    """(input field names, output field names) of the structs, in order."""
    used = set()
    ins = [c_identifier(name, used) for name, _ in program.inputs]
    outs = [f"output{i}" for i in range(len(program.outputs))]
    return ins, outs


# ---------------------------------------------------------------- constants

def _literals(arr: np.ndarray) -> list:
    """Exact C literals of the elements of `arr` in C order (its storage type)."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    dt = str(flat.dtype)
    if dt == "float16":
        return [str(int(v)) for v in flat.view(np.uint16)]
    if dt == "bool":
        return ["1" if v else "0" for v in flat]
    if dt in ("float32", "float64"):
        suffix = "f" if dt == "float32" else ""
        cast = "(float)" if dt == "float32" else "(double)"
        out = []
        for v in flat.tolist():
            if v != v:
                out.append(f"{cast}NAN")
            elif v in (float("inf"), float("-inf")):
                out.append(f"{'-' if v < 0 else ''}{cast}INFINITY")
            else:
                out.append(float(v).hex() + suffix)
        return out
    if dt == "int64":
        return [f"INT64_C({v})" for v in flat.tolist()]
    if dt == "uint64":
        return [f"UINT64_C({v})" for v in flat.tolist()]
    return [str(v) + ("u" if dt.startswith("uint") else "") for v in flat.tolist()]


def _constant(prefix: str, k: int, graph_name: str, arr: np.ndarray) -> str:
    ctype = storage_type(str(arr.dtype))
    values = _literals(arr) or ["0"]
    rows = [", ".join(values[i:i + PER_LINE]) for i in range(0, len(values), PER_LINE)]
    body = ",\n  ".join(rows)
    return (f"/* {graph_name}: Tensor[{tuple(arr.shape)}, {arr.dtype}] */\n"
            f"static const {ctype} {prefix}_constant_{k}[{len(values)}] RB_ALIGNED64 = {{\n"
            f"  {body}\n}};\n")


# ---------------------------------------------------------------- kernel scratch

def kernel_scratch(program: AotProgram, needs_ws: dict, max_threads: int):
    """(bytes in Python, C expression) of scratch for kernels whose temporaries exceed the
    stack limit; kernels run one at a time, so they share one region (the largest)."""
    sizes, exprs = [], []
    for name, ws in needs_ws.items():
        if not ws:
            continue
        func = program.prim_funcs[name]
        emitter = FunctionEmitter(func, signature(func, name, func.shape_vars))
        emitter.emit()
        text = str(emitter.ws_total)
        c_text = text.replace("rb_max_threads()", f"{program.prefix.upper()}_MAX_THREADS")
        py_text = text.replace("rb_max_threads()", str(int(max_threads)))
        if not re.fullmatch(r"[0-9\s+*()]+", py_text):
            raise AotCodegenError(f"kernel {name} needs a workspace of symbolic size {text}; "
                                  f"the AOT executor needs static shapes (use the vm executor)")
        sizes.append(align(eval(py_text, {"__builtins__": {}})))  # digits, + * ( ) only
        exprs.append(f"RB_ALIGN64_CONST({c_text})")
    if not sizes:
        return 0, "0"
    c_expr = exprs[0]
    for e in exprs[1:]:
        c_expr = f"RB_MAX_CONST({c_expr}, {e})"
    return max(sizes), c_expr


# ---------------------------------------------------------------- the files

def _pointer(program: AotProgram, tid: int, in_fields, out_fields) -> str:
    kind, where = program.tensors[tid].place
    if kind == "input":
        return f"inputs->{in_fields[where]}"
    if kind == "output":
        return f"outputs->{out_fields[where]}"
    if kind == "const":
        return f"(void*){program.prefix}_constant_{where}"
    return f"(void*)({program.prefix}_workspace + {where})"


def emit_header(program: AotProgram, max_threads: int) -> str:
    """model.h: the structs, sizes and the entry point's declaration."""
    p, P = program.prefix, program.prefix.upper()
    ins, outs = field_names(program)
    lines = [f"/* Generated by relay_backend.aot: the C interface of model {program.mod_name!r}.",
             " * Buffers are C-contiguous and 64-byte aligned; sizes are in bytes.",
             f" * {p}_run returns 0, a negative kernel error code, or {P}_ERR_ALIGN. */",
             f"#ifndef {P}_H_", f"#define {P}_H_", "", "#include <stdint.h>", "",
             "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
             f"#define {P}_ERR_ALIGN ({ERR_ALIGN})",
             f"#define {P}_WORKSPACE_SIZE {program.workspace_size}  /* with {max_threads} threads */",
             f"#define {P}_NUM_INPUTS {len(ins)}", f"#define {P}_NUM_OUTPUTS {len(outs)}"]
    for (name, tid), fld in zip(program.inputs, ins):
        t = program.tensors[tid]
        lines.append(f"#define {P}_INPUT_{fld.upper()}_SIZE {t.nbytes}  "
                     f"/* {name}: Tensor[{t.shape}, {t.dtype}] */")
    for i, (tid, fld) in enumerate(zip(program.outputs, outs)):
        t = program.tensors[tid]
        lines.append(f"#define {P}_{fld.upper()}_SIZE {t.nbytes}  /* Tensor[{t.shape}, {t.dtype}] */")
    lines += ["", f"struct {p}_inputs {{"]
    lines += [f"  void* {f};" for f in ins] or ["  void* unused_;  /* the model takes no inputs */"]
    lines += ["};", "", f"struct {p}_outputs {{"]
    lines += [f"  void* {f};" for f in outs] or ["  void* unused_;"]
    lines += ["};", "",
              f"int32_t {p}_run(struct {p}_inputs* inputs, struct {p}_outputs* outputs);",
              "", "#ifdef __cplusplus", "}", "#endif", f"#endif  /* {P}_H_ */", ""]
    return "\n".join(lines)


def emit_source(program: AotProgram, max_threads: int = None, header_name: str = "model.h"):
    """(model.c text, model.h text, workspace bytes) of the program."""
    max_threads = max_threads or os.cpu_count() or 1
    p, P = program.prefix, program.prefix.upper()
    kernels, infos, needs_ws = generate(list(program.prim_funcs.values())) if program.prim_funcs \
        else (PRELUDE, [], {})
    symbol = {i.name: i.symbol for i in infos}
    scratch, scratch_c = kernel_scratch(program, needs_ws, max_threads)
    program.kernel_ws_offset = program.arena_bytes
    program.kernel_ws_bytes = scratch
    ins, outs = field_names(program)
    parts = [f'/* Generated by relay_backend.aot: model {program.mod_name!r}, '
             f'{len(program.calls)} kernel calls, workspace {program.workspace_size} bytes. */\n'
             f'#include <string.h>\n#include "{header_name}"\n\n', kernels,
             "\n/* ---------------------------------------------------------- constants */\n"]
    parts += [_constant(p, k, name, arr) for k, (name, arr, _) in enumerate(program.constants)]
    arena_c = f"{program.arena_bytes} + {scratch_c}" if scratch else str(program.arena_bytes)
    parts.append(
        "\n/* ---------------------------------------------------------- workspace */\n"
        f"#ifndef {P}_MAX_THREADS\n#define {P}_MAX_THREADS {int(max_threads)}\n#endif\n"
        "#define RB_ALIGN64_CONST(n) ((((n) + 63) / 64) * 64)\n"
        "#define RB_MAX_CONST(a, b) ((a) > (b) ? (a) : (b))\n"
        f"#define {P}_ARENA_BYTES ({arena_c})\n"
        f"static uint8_t {p}_workspace[{P}_ARENA_BYTES > 0 ? {P}_ARENA_BYTES : 1] RB_ALIGNED64;\n\n")
    body = []
    for fld in ins:
        body.append(f"  if (((uintptr_t)inputs->{fld} & 63u) != 0) return {P}_ERR_ALIGN;")
    for fld in outs:
        body.append(f"  if (((uintptr_t)outputs->{fld} & 63u) != 0) return {P}_ERR_ALIGN;")
    for k, call in enumerate(program.calls):
        args = ", ".join(_pointer(program, t, ins, outs) for t in call.inputs + call.outputs)
        ws = (f"{p}_workspace + {program.kernel_ws_offset}, {scratch_c}"
              if needs_ws.get(call.func_name) else "NULL, 0")
        body.append(f"  {{ /* {call.func_name} */\n    void* args[] = {{{args}}};\n"
                    f"    rc = {symbol[call.func_name]}_ws(args, NULL, {ws});\n"
                    f"    if (rc != RB_OK) return rc;\n  }}")
    for i, tid in program.copies:
        src = _pointer(program, tid, ins, outs)
        body.append(f"  memcpy(outputs->{outs[i]}, {src}, {program.tensors[tid].nbytes});")
    parts.append(f"int32_t {p}_run(struct {p}_inputs* inputs, struct {p}_outputs* outputs) {{\n"
                 f"  int32_t rc = RB_OK;\n  (void)inputs; (void)outputs;\n"
                 + "\n".join(body) + "\n  return rc;\n}\n")
    return "".join(parts), emit_header(program, max_threads), program.workspace_size
