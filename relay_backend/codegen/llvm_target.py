"""The LLVM target machine: which machine code is for, optimization pipeline, JIT, object
files, linking.

Everything here is about *where* code runs (the host CPU with its features by default, or the
triple / cpu / features an llvm Target names: cross-compiling) and *how* LLVM is driven; what
the IR says is llvm.py's business. Uses llvmlite's new pass manager (the legacy
PassManagerBuilder is gone from llvmlite 0.50).
"""
import ctypes.util
import functools
import os
import shutil
import subprocess
import tempfile
import threading

from dataclasses import dataclass

import llvmlite.binding as llvm

from ..diagnostics import get_logger, native_remarks_to
from ..errors import CompileError
from ..runtime.thread_count import prepare_openmp_env
from .c_compiler import find_cc, host_library_args
from ..target import arch_family, as_target, host_triple

_REMARKS_LOG = get_logger("codegen")

OPT_LEVEL = 3
# Held by every llvmlite call relay_backend makes that does real work, and by the compile
# pool while it forks its workers (llvm_pool.py): a child forked while another thread is inside
# LLVM would inherit llvmlite's lock taken, and hang on its first LLVM call.
LLVM_LOCK = threading.RLock()
_COMPILES = [0]
# Host CPUs whose LLVM scheduling model is replaced by another CPU's for the code generated
# here. LLVM's znver4 machine scheduler moves the broadcast loads of an unrolled micro-kernel
# step (the register-tiled conv / dense kernels) ahead of the FMAs that use them and spills
# them to the stack: the ResNet block's 3x3 convolutions ran at 73% of the core's peak, and at
# 97% scheduled as znver3 (benchmarks/README.md, "Zen 4: LLVM's znver4 scheduling model").
# Only the instruction scheduling changes: the instructions allowed stay the host's features.
SCHEDULE_AS = {"znver4": "znver3"}


def compile_count() -> int:
    """How many kernel modules LLVM has optimised and compiled for this process so far, in it or in
    its compile workers (the disk cache's tests read it: a cache hit adds nothing)."""
    return _COMPILES[0]


def count_compiles(n: int = 1) -> None:
    """Record `n` LLVM compiles (the compile pool calls it for work done in its workers)."""
    with LLVM_LOCK:
        _COMPILES[0] += n


@functools.lru_cache(maxsize=None)
def _initialize() -> None:
    """Initialize LLVM's native target once per process (idempotent)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()


@functools.lru_cache(maxsize=None)
def _initialize_all() -> None:
    """Initialize every target LLVM was built with (for cross-compiling), once per process."""
    _initialize()
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


@functools.lru_cache(maxsize=None)
def host_cpu() -> tuple:
    """(cpu name, feature string) of this machine, e.g. ("znver5", "+avx2,+avx512f,...")."""
    _initialize()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def host_has_feature(name: str) -> bool:
    """True when the host CPU advertises LLVM feature `name` (e.g. "avx2")."""
    return f"+{name}" in host_cpu()[1].split(",")


@dataclass(frozen=True)
class MachineSpec:
    """What LLVM generates code for: triple, cpu, feature string, optimization level, and
    whether this process can run the result (`foreign` says why not, "" when it can)."""

    triple: str
    cpu: str
    features: str
    opt_level: int = OPT_LEVEL
    foreign: str = ""
    schedule_cpu: str = ""    # the CPU whose scheduling model LLVM uses ("": cpu's own)

    @property
    def runs_here(self) -> bool:
        return not self.foreign

    @property
    def tuning_cpu(self) -> str:
        """The CPU name the target machine is created with: the scheduling model's CPU, with
        the instructions fixed by `features`."""
        return self.schedule_cpu or self.cpu


def machine_spec(target=None) -> MachineSpec:
    """The MachineSpec of an llvm Target (None: plain "llvm", the host): -mtriple (the host's by
    default), -mcpu (native: the host CPU; absent: the host CPU for the host's instruction set,
    "generic" otherwise), -mattr appended to the CPU's features, -opt-level. The host CPU's code
    is scheduled as SCHEDULE_AS says (its features listed in full keep every instruction)."""
    return _machine_spec(as_target(target if target is not None else "llvm"))


@functools.lru_cache(maxsize=64)
def _machine_spec(target) -> MachineSpec:
    foreign = target.host_mismatch()
    same_isa = arch_family(target.triple) == arch_family(host_triple())
    host_name, host_features = host_cpu()
    mcpu = target.mcpu
    schedule = ""
    if mcpu == "native" or (not mcpu and same_isa):
        cpu, base = host_name, host_features
        schedule = SCHEDULE_AS.get(host_name, "")
    else:
        cpu, base = mcpu or "generic", ""
    features = ",".join(f for f in [base, *target.mattr] if f)
    return MachineSpec(target.triple, cpu, features, int(target.attrs.get("opt-level", OPT_LEVEL)),
                       foreign, schedule)


def target_machine(jit: bool = True, spec: MachineSpec = None) -> "llvm.TargetMachine":
    """A new target machine for `spec` (the host CPU at -O3 by default); position-independent
    when building shared objects. A triple LLVM cannot generate code for is a CompileError.

    Not cached: an MCJIT engine takes ownership of (and later frees) its target machine.
    """
    spec = spec or machine_spec()
    _initialize() if spec.runs_here else _initialize_all()
    try:
        target = llvm.Target.from_triple(spec.triple)
    except RuntimeError as err:
        raise CompileError(f"LLVM cannot generate code for -mtriple={spec.triple}: "
                           f"{str(err).strip()}") from None
    return target.create_target_machine(
        cpu=spec.tuning_cpu, features=spec.features, opt=spec.opt_level,
        reloc="default" if jit else "pic", codemodel="jitdefault" if jit else "default",
        jit=jit)


def parse(ir_text: str, what: str = "kernel", spec: MachineSpec = None) -> "llvm.ModuleRef":
    """Parse and verify textual LLVM IR; a malformed module is a CompileError (a codegen bug)."""
    _initialize()
    with LLVM_LOCK:
        try:
            mod = llvm.parse_assembly(ir_text)
            mod.verify()
        except RuntimeError as err:
            raise CompileError(f"LLVM rejected the IR generated for {what}: {err}\n"
                               f"(set RB_DEBUG=4 to print the IR)") from err
        mod.triple, mod.data_layout = _triple_and_layout(spec or machine_spec())
    return mod


@functools.lru_cache(maxsize=None)
def _triple_and_layout(spec: MachineSpec) -> tuple:
    tm = target_machine(spec.runs_here, spec)
    return tm.triple, str(tm.target_data)


def optimize(mod: "llvm.ModuleRef", tm, opt_level: int = OPT_LEVEL, counted: bool = True) -> "llvm.ModuleRef":
    """Run the standard module pipeline at `opt_level` (-O3: inlining, loop/SLP vectorization,
    unrolling)."""
    with LLVM_LOCK:
        pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pto.loop_unrolling = True
        pto.loop_interleaving = True
        pb = llvm.create_pass_builder(tm, pto)
        pm = pb.getModulePassManager()
        with native_remarks_to(_REMARKS_LOG):     # "loop not vectorized" remarks: DEBUG records
            pm.run(mod, pb)
        if counted:
            _COMPILES[0] += 1
    return mod


def compile_object(ir_text: str, spec: MachineSpec, what: str = "kernel", counted: bool = True) -> tuple:
    """(relocatable position-independent object bytes, optimised IR text) of one module's IR:
    the unit of work the compile pool hands to a worker and the disk cache stores. `counted`:
    whether compile_count() counts it (kernels yes; codegen's per-process support modules, the
    thread pool and parallel-loop shim, no: they are not part of any model's build)."""
    with LLVM_LOCK:
        tm = target_machine(False, spec)
        mod = parse(ir_text, what, spec)
        optimize(mod, tm, spec.opt_level, counted)
        return tm.emit_object(mod), str(mod)


def load_objects(objects, spec: MachineSpec = None) -> "llvm.ExecutionEngine":
    """An MCJIT engine holding the (position-independent) object files `objects`, relocated
    and ready to call: symbols between them and from the process (libm, libgomp) resolve
    here. Keep the engine alive while its functions are used."""
    spec = spec or machine_spec()
    with LLVM_LOCK:
        tm = target_machine(True, spec)
        empty = llvm.parse_assembly("")
        empty.triple, empty.data_layout = _triple_and_layout(spec)
        engine = llvm.create_mcjit_compiler(empty, tm)
        for data in objects:
            engine.add_object_file(llvm.ObjectFileRef.from_data(bytes(data)))
        engine.finalize_object()
        engine.run_static_constructors()
    return engine


def emit_linked_object(ir_texts, spec: MachineSpec = None) -> bytes:
    """One relocatable object for several (already optimised) modules: linked in LLVM, then
    compiled without optimising again (export_library("x.o") of a multi-kernel module)."""
    with LLVM_LOCK:
        tm = target_machine(False, spec)
        mods = [parse(text, spec=spec) for text in ir_texts]
        for other in mods[1:]:
            mods[0].link_in(other)
        mods[0].triple = tm.triple
        return tm.emit_object(mods[0])


def emit_assembly(ir_text: str, spec: MachineSpec = None) -> str:
    """Assembly for (already optimized) IR text."""
    with LLVM_LOCK:
        tm = target_machine(False, spec)
        mod = parse(ir_text, spec=spec)
        return tm.emit_assembly(mod)


@functools.lru_cache(maxsize=None)
def libgomp_path() -> str:
    """Load GNU OpenMP's runtime into this process for JIT-ed parallel loops; "" if absent
    (parallel loops then run serially).

    Idle workers spin briefly, then sleep (thread_count.prepare_openmp_env: GOMP_SPINCOUNT
    unless the user set it or OMP_WAIT_POLICY): on a shared 2-core machine a worker spinning
    for libgomp's default 300000 iterations steals the core the other thread needs (a 2-thread
    conv2d measured 10-20 ms spinning against 2.5 ms passive)."""
    prepare_openmp_env()          # GOMP_SPINCOUNT, TVM_NUM_THREADS: libgomp reads them when loaded
    name = ctypes.util.find_library("gomp")
    if not name:
        return ""
    try:
        llvm.load_library_permanently(name)
    except RuntimeError:
        return ""
    return name


def link_shared(object_code, path: str, libs=("m",), cc: str = None, fcompile=None) -> None:
    """Link object files (bytes, or a list of them) into a shared library at `path`: with
    `fcompile(path, [object paths])` when given (TVM's export_library hook), else `<cc>
    -shared` (cc: the system C compiler by default, or a cross compiler such as
    "aarch64-linux-gnu-gcc")."""
    objects = [object_code] if isinstance(object_code, (bytes, bytearray)) else list(object_code)
    with tempfile.TemporaryDirectory(prefix="rb_link_") as tmp:
        paths = []
        for i, data in enumerate(objects):
            paths.append(os.path.join(tmp, f"lib{i}.o"))
            with open(paths[-1], "wb") as f:
                f.write(data)
        if fcompile is not None:
            fcompile(path, paths)
            return
        compiler = (shutil.which(cc),) if cc else find_cc()
        if compiler[0] is None:
            raise CompileError(f"export_library: the compiler cc={cc!r} is not on PATH")
        # a cross compiler (cc given) links its own target's libraries, the host one this process's
        lib_args = [f"-l{lib}" for lib in libs] if cc else host_library_args(libs)
        cmd = [*compiler, "-shared", "-fPIC", "-o", path, *paths, *lib_args]
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
