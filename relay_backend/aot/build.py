"""Compile model.c (+ model.h, model_params.bin, and the LLVM kernels' objects for target
"llvm") with the system C compiler into one shared library; load it with ctypes.

Flags are codegen.c's (`cc -O3 -march=native -fPIC -shared -std=c99`, plus -fopenmp when the
compiler supports it). Libraries are cached per process by (sources, flags): building the same
model twice loads the same library, whose static workspace is then shared, so every call of
`<prefix>_run` on one library holds that library's lock (concurrent runs would share the arena).
Across processes the compiled library is kept in the on-disk cache (relay_backend/cache.py),
keyed by the sources, the params, the flags and the compiler (its path and `--version`), so a
second process building the same model runs no C compiler (`cc_compile_count()` says so).

In-process builds leave the constants out of the library (`embed_params=False`: model.c is
compiled with -DRB_PARAMS_EXTERNAL), and AotLibrary hands the library the packed params buffer
(`<prefix>_set_params`): cc, the linker and the disk cache then never copy the weights, so the
build costs the same for 1 MB or 100 MB of weights (ResNet-50: ~2 s less). The exported project
and the command line's package (`AotExecutorFactoryModule.standalone_library()`) compile the
constants in, as before.
"""
import atexit
import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import weakref

from .. import cache, config, diagnostics, progress
from ..codegen.c import compile_flags
from ..codegen.c_compiler import command_text, find_cc, host_library_args
from ..errors import CompileError
from ..runtime.ndarray import aligned_empty
from ..runtime.shared_library import SharedLibrary
from .params import EXTERNAL_MACRO, FILE_NAME as PARAMS_FILE, ParamsBlob, check_params

_CODE_LOG = diagnostics.get_logger("codegen")

_RUN_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
_SET_PARAMS_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int32)
_LOCKS = {}
_PARAMS = weakref.WeakValueDictionary()     # library path -> the params buffer it reads
_LOCKS_GUARD = threading.Lock()
_CACHE_DIR = []
_KEEP_CACHE_DIR = [False]       # a failed compile keeps its sources after exit, to inspect
CACHE_KIND = "aot"
_CC_RUNS = [0]


def cc_compile_count() -> int:
    """How many model libraries this process has built with the C compiler (cache hits add 0)."""
    return _CC_RUNS[0]


@functools.lru_cache(maxsize=None)
def compiler_identity(cc: tuple) -> str:
    """The compiler command (find_cc()'s tuple) with its driver's real path, and the first line
    of its `--version` (part of the cache key: another compiler version may generate other
    code)."""
    try:
        proc = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=60)
        version = (proc.stdout or proc.stderr).strip().splitlines()[0] if (proc.stdout or proc.stderr) else ""
    except (OSError, subprocess.SubprocessError):
        version = "unknown"
    return f"{command_text((os.path.realpath(cc[0]), *cc[1:]))} ({version})"


def _cache_dir() -> str:
    """This process's folder of model sources and libraries, removed at exit."""
    with _LOCKS_GUARD:
        if not _CACHE_DIR:
            _CACHE_DIR.append(tempfile.mkdtemp(prefix="rb_aot_"))
            atexit.register(_remove_cache_dir, _CACHE_DIR[0])
        return _CACHE_DIR[0]


def _remove_cache_dir(folder: str) -> None:
    if not _KEEP_CACHE_DIR[0]:
        shutil.rmtree(folder, ignore_errors=True)


def model_flags(openmp=None, options=()) -> list:
    """codegen.c's compile flags (compiler workarounds included), then `options`."""
    return compile_flags(openmp, list(options))


def _write(path: str, data) -> None:
    """Write atomically (threads of one process may build the same model at once)."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "wb" if isinstance(data, (bytes, bytearray)) else "w") as f:
        f.write(data)
    os.replace(tmp, path)


def compile_model(c_source: str, h_source: str, params, openmp=None, options=(),
                  objects=(), libraries=(), embed_params=True) -> str:
    """Build (or find in the cache, by content and flags) a shared library from model.c,
    model.h and model_params.bin, linking in `objects` (LLVM-compiled kernels). The C compiler
    runs in the folder that holds the files, where the assembler's `.incbin` looks for
    model_params.bin.

    Parameters
    ----------
    c_source : str
        The text of model.c.
    h_source : str
        The text of model.h.
    params : bytes
        The bytes of model_params.bin, validated first (unused with `embed_params=False`).
    openmp : bool, optional
        Whether to compile with -fopenmp; None (the default) means when the compiler
        supports it.
    options : tuple of str, optional
        More compiler flags, after the usual ones. Defaults to ().
    objects : sequence of bytes, optional
        Relocatable position-independent objects to link in (the kernels model.c declares
        extern). Defaults to ().
    libraries : sequence of str, optional
        Libraries they call into besides libm, as "gomp" for -lgomp. Defaults to ().
    embed_params : bool, optional
        If True (the default), the library holds the constants; if False, it is compiled
        with -DRB_PARAMS_EXTERNAL and reads them from the buffer AotLibrary(params=...) gives
        it (model.c holds their digest, so the sources still identify them).

    Returns
    -------
    path : str
        The path of the shared library.
    """
    if embed_params:
        check_params(params)        # a corrupt blob is reported here, before cc embeds it
    cc = find_cc()
    flags = model_flags(openmp, options) + ([] if embed_params else [f"-D{EXTERNAL_MACRO}"])
    libs = host_library_args(["m", *libraries])
    digest = hashlib.sha256("\0".join([*cc, *flags, *libs, c_source, h_source]).encode())
    if embed_params:
        digest.update(params)
    for data in objects:
        digest.update(hashlib.sha256(data).digest())
    key = digest.hexdigest()[:24]
    folder = os.path.join(_cache_dir(), key)
    lib_path = os.path.join(folder, "model.so")
    if os.path.exists(lib_path):
        return lib_path
    os.makedirs(folder, exist_ok=True)
    disk_key = "|".join(["aot-model-v1", digest.hexdigest(), compiler_identity(cc), config.VERSION])
    stored = cache.load(CACHE_KIND, disk_key)
    if stored is not None and "so" in stored:
        _write(lib_path, stored["so"])
        return lib_path
    object_names = [f"kernel{i}.o" for i in range(len(objects))]
    files = [("model.c", c_source), ("model.h", h_source), *zip(object_names, objects)]
    for name, data in files + ([(PARAMS_FILE, params)] if embed_params else []):
        _write(os.path.join(folder, name), data)
    tmp = lib_path + f".{os.getpid()}.{threading.get_ident()}.tmp"
    cmd = [*cc, *flags, "model.c", *object_names, "-o", tmp, *libs]
    if diagnostics.wants(4):
        _CODE_LOG.debug("AOT model.c (%d chars):\n%s", len(c_source), c_source)
    diagnostics.dump("c", "aot_model", c_source, "c")
    progress.begin("linked" if objects else "compiled", total=1, note="C compiler, whole program")
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=folder)
    with _LOCKS_GUARD:
        _CC_RUNS[0] += 1
    if proc.returncode != 0:
        _KEEP_CACHE_DIR[0] = True
        raise CompileError(f"aot: the C compiler rejected the generated model:\n{' '.join(cmd)}\n"
                           f"{proc.stderr.strip()[:4000]}\n(the sources are in {folder}, kept after exit)")
    with open(tmp, "rb") as f:
        cache.store(CACHE_KIND, disk_key, {"so": f.read()})
    os.replace(tmp, lib_path)
    progress.advance("linked" if objects else "compiled")
    return lib_path


class AotLibrary:
    """A loaded model library: run(inputs_struct, outputs_struct) calls its <prefix>_run under
    the library's lock.

    Parameters
    ----------
    path : str
        The path of the shared library.
    prefix : str
        The prefix of its symbols, as "tvmgen_default".
    c_source : str, optional
        The text of model.c it was built from, kept for export. Defaults to "".
    h_source : str, optional
        The text of model.h. Defaults to "".
    params : ParamsBlob or bytes, optional
        For a library built with `embed_params=False`: its constants (model_params.bin), which
        it reads in place (kept alive with the library; every AotLibrary of one library file
        shares the first one's buffer). Before the first run the library checks the header
        and size, and the digest of bytes (a ParamsBlob's was computed over its read-only
        buffer when it was packed). None (the default): the constants are compiled in.
    """

    def __init__(self, path: str, prefix: str, c_source: str = "", h_source: str = "", params=None):
        self.path = path
        self.prefix = prefix
        self.c_source = c_source
        self.h_source = h_source
        try:
            self._lib = SharedLibrary(path)        # dlclose'd when this library is dropped
        except OSError as err:
            raise CompileError(f"aot: cannot load the compiled model {path}: {err}") from err
        address = self._lib.address(f"{prefix}_run")
        if address is None:
            raise CompileError(f"aot: {path} does not define {prefix}_run; was it built for "
                               f"another mod_name?")
        self._run = _RUN_TYPE(address)
        with _LOCKS_GUARD:
            self.lock = _LOCKS.setdefault(os.path.realpath(path), threading.Lock())
        self._params = None if params is None else self._install_params(params)

    def _install_params(self, params):
        """Point the library at its constants (once per loaded library file): the blob's own
        aligned buffer, or an aligned copy of bytes."""
        address = self._lib.address(f"{self.prefix}_set_params")
        if address is None:
            raise CompileError(f"aot: {self.path} compiles its constants in (no {self.prefix}_set_params); "
                               f"load it without params")
        key = os.path.realpath(self.path)
        with _LOCKS_GUARD:
            holder = _PARAMS.get(key)
            if holder is None:
                blob = params if isinstance(params, ParamsBlob) else None
                holder = _ParamsBuffer(blob.buffer if blob is not None else _aligned_copy(params))
                # pack_params hashed this read-only buffer: the library need not hash it again
                rc = _SET_PARAMS_TYPE(address)(holder.array.ctypes.data, holder.array.size, blob is not None)
                if rc != 0:
                    raise CompileError(f"aot: {self.prefix}_set_params refused the params buffer ({rc})")
                _PARAMS[key] = holder
        return holder

    def run(self, inputs_ptr, outputs_ptr) -> int:
        """Run the whole model once under the library's lock: <prefix>_run(inputs, outputs).

        Parameters
        ----------
        inputs_ptr : ctypes pointer
            The address of the model's inputs struct (one tensor pointer per input).
        outputs_ptr : ctypes pointer
            The address of its outputs struct, which the results are written through.

        Returns
        -------
        status : int
            The return code of the C function (0 on success).
        """
        with self.lock:
            return int(self._run(inputs_ptr, outputs_ptr))

    def get_source(self, fmt: str = "c") -> str:
        """The C source the library was built from.

        Parameters
        ----------
        fmt : str, optional
            "h" for model.h; anything else (the default "c") for model.c.

        Returns
        -------
        text : str
            The source text ("" when it was not kept).
        """
        return self.h_source if fmt == "h" else self.c_source

    def __repr__(self) -> str:
        return f"<AotLibrary {self.prefix}_run from {self.path}>"


class _ParamsBuffer:
    """The params buffer an in-process library reads (weakly referenced per library file)."""

    def __init__(self, array):
        self.array = array


def _aligned_copy(data: bytes):
    """`data` as a read-only uint8 numpy array at an aligned address (runtime.aligned_empty)."""
    import numpy as np
    out = aligned_empty((len(data),), np.uint8)
    out[:] = np.frombuffer(data, np.uint8)
    out.flags.writeable = False
    return out
