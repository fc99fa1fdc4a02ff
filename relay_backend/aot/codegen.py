"""AotProgram -> one C translation unit (model.c) and its header (model.h).

model.c holds the kernels (codegen/c.py's C; or, for target "llvm", declarations of the
LLVM-compiled kernels linked in as objects: aot/kernels.py), ONE static workspace arena and the
entry point TVM's AOT executor names

    int32_t tvmgen_default_run(struct tvmgen_default_inputs* inputs,
                               struct tvmgen_default_outputs* outputs);

which calls the kernels in order with pointers into the arena at offsets fixed by the memory
planner: model.c never mallocs (with C kernels nothing does; LLVM kernels heap-allocate their
largest temporaries, as under the graph executor). model.h declares the two structs (one
`void*` field per input, named after the Relay var, and per output: output0, output1, ...),
their byte sizes and the workspace size. Caller buffers must be 64-byte aligned (the kernels assume it); the
entry checks and returns TVMGEN_ERR_ALIGN otherwise.

The constants are not C text: they are model_params.bin (params.py), included into .rodata by
the assembler (`.incbin` in a top-level `__asm__`) as `tvmgen_default_params`, each constant
at a 64-byte aligned offset. Before the first run uses a constant, the entry checks the file's
header against the one the sources were generated with (TVMGEN_ERR_PARAMS on a mismatch) and
recomputes the digest of the constants (TVMGEN_ERR_PARAMS_CORRUPT on a mismatch), see
params.c_check_params. model.c stays a few hundred KB however large the weights. Compiled with
-DRB_PARAMS_EXTERNAL (the library relay.build loads, aot/build.py) nothing is included:
`tvmgen_default_params` is a pointer that `tvmgen_default_set_params()` sets to the caller's
copy, so neither cc nor the linker copies the weights.
"""
import os
import re

from ..codegen.c import generate
from ..codegen.c_prelude import PRELUDE
from ..codegen.c_stmt import FunctionEmitter
from ..codegen.llvm import signature
from .params import EXTERNAL_MACRO, FILE_NAME, ParamsBlob, c_check_params, pack_params
from .program import AotCodegenError, AotProgram, align

ERR_ALIGN = -3
ERR_PARAMS = -4
ERR_PARAMS_CORRUPT = -5


def run_error(rc: int, prefix: str) -> str:
    """What a non-zero return code of `<prefix>_run` means, and what to do about it."""
    upper = prefix.upper()
    return {
        ERR_ALIGN: f"{upper}_ERR_ALIGN: an input or output buffer is not 64-byte aligned",
        ERR_PARAMS: f"{upper}_ERR_PARAMS: the {FILE_NAME} compiled in is not the one generated with "
                    f"model.c (another model's, or a stale or truncated copy); rebuild with the "
                    f"matching file",
        ERR_PARAMS_CORRUPT: f"{upper}_ERR_PARAMS_CORRUPT: the constants in the {FILE_NAME} compiled "
                            f"in do not match its digest (the file or library is corrupt); rebuild "
                            f"from an intact copy",
    }.get(rc, f"a kernel's workspace is too small or misaligned (-1/-2): rebuild with more "
              f"-D{upper}_MAX_THREADS")


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

def params_block(program: AotProgram, blob: ParamsBlob) -> str:
    """The C that pulls model_params.bin into .rodata at compile time (`.incbin`), declares it
    as `extern const uint8_t <prefix>_params[]`, lists where each constant lives, and defines
    `<prefix>_check_params()`, which compares the file's header and size with the ones the
    sources were generated with and checks the constants' digest once."""
    p, P = program.prefix, program.prefix.upper()
    sym, size_sym = f"{p}_params", f"{p}_params_size"
    lines = [
        "\n/* ---------------------------------------------------------- constants",
        f" * The {len(program.constants)} constants ({len(blob)} bytes with the header) are not C text:",
        f" * they are {FILE_NAME} (raw C-order bytes, each at a 64-byte aligned offset), which",
        " * the assembler includes at compile time (.incbin), so compile time does not grow",
        " * with the weights. The file is found relative to the compiler's working directory",
        f" * (build in the directory holding it, or -D{P}_PARAMS_FILE='\"/path/to/{FILE_NAME}\"').",
        " * Needs a GNU-compatible compiler and assembler (gcc, clang) and an ELF target.",
        f" * Built with -D{EXTERNAL_MACRO} (what relay_backend does in-process) the file is not",
        f" * included: {p}_set_params() points the model at the caller's copy. */",
        f"#ifdef {EXTERNAL_MACRO}",
        f"static const uint8_t* {sym} = NULL;",
        f"static uint64_t {size_sym} = 0;",
        "#else",
        f"#ifndef {P}_PARAMS_FILE", f'#define {P}_PARAMS_FILE "{FILE_NAME}"', "#endif",
        "#if !defined(__ELF__) || !(defined(__GNUC__) || defined(__clang__))",
        f'#error "model.c embeds {FILE_NAME} with the GNU assembler\'s .incbin (ELF targets, gcc or clang)"',
        "#endif",
        "__asm__(",
        '  "\\t.pushsection .rodata\\n"',
        '  "\\t.balign 64\\n"',
        f'  "\\t.globl {sym}\\n"',
        f'  "\\t.hidden {sym}\\n"',
        f'  "\\t.type {sym}, %object\\n"',
        f'  "{sym}:\\n"',
        f'  "\\t.incbin \\"" {P}_PARAMS_FILE "\\"\\n"',
        f'  ".L{sym}_end:\\n"',
        f'  "\\t.size {sym}, .L{sym}_end - {sym}\\n"',
        '  "\\t.balign 8\\n"',
        f'  "\\t.globl {size_sym}\\n"',
        f'  "\\t.hidden {size_sym}\\n"',
        f'  "\\t.type {size_sym}, %object\\n"',
        f'  "{size_sym}:\\n"',
        f'  "\\t.quad .L{sym}_end - {sym}\\n"',
        f'  "\\t.size {size_sym}, 8\\n"',
        '  "\\t.popsection\\n");',
        f'extern const uint8_t {sym}[] __attribute__((visibility("hidden")));',
        f'extern const uint64_t {size_sym} __attribute__((visibility("hidden")));',
        f"#endif  /* {EXTERNAL_MACRO} */",
        "",
        f"/* constant: offset in {sym}, bytes */",
    ]
    for (name, arr, _), off, size in zip(program.constants, blob.offsets, blob.sizes):
        lines.append(f"/*   {name}: Tensor[{tuple(arr.shape)}, {arr.dtype}] at {off}, {size} bytes */")
    lines += ["", c_check_params(p, blob, sym, size_sym)]
    return "\n".join(lines)


# ---------------------------------------------------------------- kernel scratch

def max_expr(terms) -> str:
    """A C constant expression for the max of `terms` (C expressions, deduplicated), as a
    balanced tree of RB_MAX_CONST: the macro repeats its arguments, so a left-nested chain of
    n terms expands to 2^n copies (ResNet-50's 18 scratch sizes: cc spent a minute and 2.7 GB
    on that alone); balanced, each term is expanded about n times."""
    terms = list(dict.fromkeys(terms))
    if not terms:
        return "0"
    if len(terms) == 1:
        return terms[0]
    mid = len(terms) // 2
    return f"RB_MAX_CONST({max_expr(terms[:mid])}, {max_expr(terms[mid:])})"


def kernel_scratch(program: AotProgram, needs_ws: dict, max_threads: int):
    """(bytes in Python, C expression) of scratch for kernels whose temporaries exceed the
    stack limit; kernels run one at a time, so they share one region (the largest). Sizes
    that do not depend on the thread count are folded into one number here; only those that
    do (-D<PREFIX>_MAX_THREADS may change it when model.c is built) stay C expressions."""
    sizes, fixed, exprs = [], 0, []
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
        size = align(eval(py_text, {"__builtins__": {}}))  # digits, + * ( ) only
        sizes.append(size)
        if c_text == text:
            fixed = max(fixed, size)
        else:
            exprs.append(f"RB_ALIGN64_CONST({c_text})")
    if not sizes:
        return 0, "0"
    return max(sizes), max_expr(([str(fixed)] if fixed or not exprs else []) + exprs)


# ---------------------------------------------------------------- the files

def _pointer(program: AotProgram, tid: int, in_fields, out_fields, offsets) -> str:
    kind, where = program.tensors[tid].place[:2]
    if kind == "input":
        return f"inputs->{in_fields[where]}"
    if kind == "output":
        offset = program.tensors[tid].place[2]
        return f"outputs->{out_fields[where]}" if not offset else \
            f"(void*)((uint8_t*)outputs->{out_fields[where]} + {offset})"
    if kind == "const":
        return f"(void*)({program.prefix}_params + {offsets[where]})"
    return f"(void*)({program.prefix}_workspace + {where})"


def emit_header(program: AotProgram, max_threads: int) -> str:
    """model.h: the structs, sizes and the entry point's declaration."""
    p, P = program.prefix, program.prefix.upper()
    ins, outs = field_names(program)
    lines = [f"/* Generated by relay_backend.aot: the C interface of model {program.mod_name!r}.",
             " * Buffers are C-contiguous and 64-byte aligned; sizes are in bytes.",
             f" * {p}_run returns 0, a negative kernel error code, {P}_ERR_ALIGN,",
             f" * {P}_ERR_PARAMS when the {FILE_NAME} compiled in is not the one generated with",
             f" * these sources, or {P}_ERR_PARAMS_CORRUPT when its constants do not match its",
             " * digest (checked once, before the first run uses them). */",
             f"#ifndef {P}_H_", f"#define {P}_H_", "", "#include <stdint.h>", "",
             "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
             f"#define {P}_ERR_ALIGN ({ERR_ALIGN})",
             f"#define {P}_ERR_PARAMS ({ERR_PARAMS})",
             f"#define {P}_ERR_PARAMS_CORRUPT ({ERR_PARAMS_CORRUPT})",
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
              f"#ifdef {EXTERNAL_MACRO}",
              "/* model_params.bin not compiled in: the constants are `data` (size bytes, 64-byte",
              " * aligned, alive while the model runs), checked like the file before the next run",
              " * (the digest only when digest_checked is 0). */",
              f"int32_t {p}_set_params(const void* data, uint64_t size, int32_t digest_checked);",
              "#endif",
              "", "#ifdef __cplusplus", "}", "#endif", f"#endif  /* {P}_H_ */", ""]
    return "\n".join(lines)


def emit_source(program: AotProgram, max_threads: int = None, header_name: str = "model.h",
                kernels=None):
    """The C source of a program: model.c includes the params blob's bytes (written next to it
    as model_params.bin) at compile time.

    Parameters
    ----------
    program : AotProgram
        The program to write.
    max_threads : int, optional
        The most threads a kernel may use, which sizes its scratch space; None (the default)
        is the machine's CPU count.
    header_name : str, optional
        The name model.c includes its header by. Defaults to "model.h".
    kernels : aot.kernels.LlvmKernels, optional
        LLVM-compiled kernels the library links: model.c then declares their entry points and
        calls them. None (the default) writes codegen/c.py's C kernels into model.c.

    Returns
    -------
    result : tuple
        (model.c text, model.h text, workspace bytes, ParamsBlob).
    """
    blob = pack_params([arr for _, arr, _ in program.constants])
    max_threads = max_threads or os.cpu_count() or 1
    p, P = program.prefix, program.prefix.upper()
    if kernels is not None:           # LLVM objects: no kernel text, no kernel scratch
        kernel_text, infos, needs_ws = PRELUDE + "\n" + kernels.declarations(), kernels.infos, {}
    elif program.prim_funcs:
        kernel_text, infos, needs_ws = generate(list(program.prim_funcs.values()))
    else:
        kernel_text, infos, needs_ws = PRELUDE, [], {}
    symbol = {i.name: i.symbol for i in infos}
    scratch, scratch_c = kernel_scratch(program, needs_ws, max_threads)
    program.kernel_ws_offset = program.arena_bytes
    program.kernel_ws_bytes = scratch
    ins, outs = field_names(program)
    parts = [f'/* Generated by relay_backend.aot: model {program.mod_name!r}, '
             f'{len(program.calls)} kernel calls, workspace {program.workspace_size} bytes. */\n'
             f'#include <string.h>\n#include "{header_name}"\n\n', kernel_text,
             params_block(program, blob)]
    arena_c = f"{program.arena_bytes} + {P}_SCRATCH_BYTES" if scratch else str(program.arena_bytes)
    parts.append(
        "\n/* ---------------------------------------------------------- workspace */\n"
        f"#ifndef {P}_MAX_THREADS\n#define {P}_MAX_THREADS {int(max_threads)}\n#endif\n"
        "#define RB_ALIGN64_CONST(n) ((((n) + 63) / 64) * 64)\n"
        "#define RB_MAX_CONST(a, b) ((a) > (b) ? (a) : (b))\n"
        f"#define {P}_SCRATCH_BYTES ({scratch_c})  /* the largest kernel's temporaries */\n"
        f"#define {P}_ARENA_BYTES ({arena_c})\n"
        f"static uint8_t {p}_workspace[{P}_ARENA_BYTES > 0 ? {P}_ARENA_BYTES : 1] RB_ALIGNED64;\n\n")
    body = [f"  rc = {p}_check_params();", "  if (rc != RB_OK) return rc;"]
    for fld in ins:
        body.append(f"  if (((uintptr_t)inputs->{fld} & 63u) != 0) return {P}_ERR_ALIGN;")
    for fld in outs:
        body.append(f"  if (((uintptr_t)outputs->{fld} & 63u) != 0) return {P}_ERR_ALIGN;")
    for k, call in enumerate(program.calls):
        args = ", ".join(_pointer(program, t, ins, outs, blob.offsets) for t in call.inputs + call.outputs)
        ws = (f"{p}_workspace + {program.kernel_ws_offset}, {P}_SCRATCH_BYTES"
              if needs_ws.get(call.func_name) else "NULL, 0")
        if kernels is not None:
            body.append(f"  {{ /* {call.func_name} */\n    void* args[] = {{{args}}};\n"
                        f"    {symbol[call.func_name]}(args, NULL);\n  }}")
        else:
            body.append(f"  {{ /* {call.func_name} */\n    void* args[] = {{{args}}};\n"
                        f"    rc = {symbol[call.func_name]}_ws(args, NULL, {ws});\n"
                        f"    if (rc != RB_OK) return rc;\n  }}")
    for i, tid in program.copies:
        src = _pointer(program, tid, ins, outs, blob.offsets)
        body.append(f"  memcpy(outputs->{outs[i]}, {src}, {program.tensors[tid].nbytes});")
    parts.append(f"int32_t {p}_run(struct {p}_inputs* inputs, struct {p}_outputs* outputs) {{\n"
                 f"  int32_t rc = RB_OK;\n  (void)inputs; (void)outputs;\n"
                 + "\n".join(body) + "\n  return rc;\n}\n")
    return "".join(parts), emit_header(program, max_threads), program.workspace_size, blob
