"""The host LLVM target: target machine, optimization pipeline, JIT, object files, linking.

Everything here is about *where* code runs (this CPU, with its features) and *how* LLVM is
driven; what the IR says is llvm.py's business. Uses llvmlite's new pass manager (the legacy
PassManagerBuilder is gone from llvmlite 0.50).
"""
import ctypes.util
import functools
import os
import shutil
import subprocess
import tempfile

import llvmlite.binding as llvm

from ..errors import CompileError

OPT_LEVEL = 3


@functools.lru_cache(maxsize=None)
def _initialize() -> None:
    """Initialize LLVM's native target once per process (idempotent)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()


@functools.lru_cache(maxsize=None)
def host_cpu() -> tuple:
    """(cpu name, feature string) of this machine, e.g. ("znver5", "+avx2,+avx512f,...")."""
    _initialize()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def host_has_feature(name: str) -> bool:
    """True when the host CPU advertises LLVM feature `name` (e.g. "avx2")."""
    return f"+{name}" in host_cpu()[1].split(",")


def target_machine(jit: bool = True) -> "llvm.TargetMachine":
    """A new host target machine at -O3; position-independent when building shared objects.

    Not cached: an MCJIT engine takes ownership of (and later frees) its target machine.
    """
    _initialize()
    cpu, features = host_cpu()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=cpu, features=features, opt=OPT_LEVEL,
        reloc="default" if jit else "pic", codemodel="jitdefault" if jit else "default",
        jit=jit)


def parse(ir_text: str, what: str = "kernel") -> "llvm.ModuleRef":
    """Parse and verify textual LLVM IR; a malformed module is a CompileError (a codegen bug)."""
    _initialize()
    try:
        mod = llvm.parse_assembly(ir_text)
        mod.verify()
    except RuntimeError as err:
        raise CompileError(f"LLVM rejected the IR generated for {what}: {err}\n"
                           f"(set RB_DEBUG=4 to print the IR)") from err
    mod.triple, mod.data_layout = _triple_and_layout()
    return mod


@functools.lru_cache(maxsize=None)
def _triple_and_layout() -> tuple:
    tm = target_machine(True)
    return tm.triple, str(tm.target_data)


def optimize(mod: "llvm.ModuleRef", tm) -> "llvm.ModuleRef":
    """Run the standard -O3 module pipeline (inlining, loop/SLP vectorization, unrolling)."""
    pto = llvm.create_pipeline_tuning_options(speed_level=OPT_LEVEL)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = True
    pto.loop_interleaving = True
    pb = llvm.create_pass_builder(tm, pto)
    pm = pb.getModulePassManager()
    pm.run(mod, pb)
    return mod


def jit(mod: "llvm.ModuleRef", tm) -> "llvm.ExecutionEngine":
    """Compile `mod` in-process with MCJIT; the engine owns the module and `tm` (a fresh
    target_machine(True)) and must be kept alive while its functions are used."""
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    engine.run_static_constructors()
    return engine


def emit_object(ir_text: str) -> bytes:
    """A relocatable, position-independent object file for (already optimized) IR text."""
    tm = target_machine(False)
    mod = parse(ir_text)
    mod.triple = tm.triple
    return tm.emit_object(mod)


def emit_assembly(ir_text: str) -> str:
    """Host assembly for (already optimized) IR text."""
    tm = target_machine(False)
    mod = parse(ir_text)
    return tm.emit_assembly(mod)


@functools.lru_cache(maxsize=None)
def libgomp_path() -> str:
    """Load GNU OpenMP's runtime into this process for JIT-ed parallel loops; "" if absent
    (parallel loops then run serially).

    Idle workers sleep instead of spinning (OMP_WAIT_POLICY=passive unless the user set it):
    on a shared 2-core machine a spinning worker steals the core the other thread needs, and
    a 2-thread conv2d measured 10-20 ms spinning against 2.5 ms passive."""
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")   # libgomp reads it when loaded
    name = ctypes.util.find_library("gomp")
    if not name:
        return ""
    try:
        llvm.load_library_permanently(name)
    except RuntimeError:
        return ""
    return name


def find_cc() -> str:
    """The system C compiler driver used to link shared libraries (cc, gcc or clang)."""
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name):
            return shutil.which(name)
    raise CompileError("no C compiler found on PATH (tried cc, gcc, clang); one is needed to "
                       "link a shared library: install gcc")


def link_shared(object_code: bytes, path: str, libs=("m",)) -> None:
    """Link one object file into a shared library at `path` with `cc -shared`."""
    cc = find_cc()
    with tempfile.TemporaryDirectory(prefix="rb_link_") as tmp:
        obj = os.path.join(tmp, "lib.o")
        with open(obj, "wb") as f:
            f.write(object_code)
        cmd = [cc, "-shared", "-fPIC", "-o", path, obj] + [f"-l{lib}" for lib in libs]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"linking {path} failed: {' '.join(cmd)}\n{proc.stderr.strip()}")


@functools.lru_cache(maxsize=None)
def host_lacks_half_conversions() -> bool:
    """True on an x86 host without F16C, where LLVM lowers half <-> float conversions to
    compiler-rt calls that the JIT cannot resolve (aarch64 converts natively)."""
    triple = llvm.get_process_triple()
    is_x86 = triple.startswith(("x86_64", "i386", "i686"))
    return is_x86 and not host_has_feature("f16c")
