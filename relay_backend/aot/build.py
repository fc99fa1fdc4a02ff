"""Compile model.c (+ model.h, model_params.bin) with the system C compiler; load it with ctypes.

Flags are codegen.c's (`cc -O3 -march=native -fPIC -shared -std=c99`, plus -fopenmp when the
compiler supports it). Libraries are cached per process by (sources, flags): building the same
model twice loads the same library, whose static workspace is then shared, so every call of
`<prefix>_run` on one library holds that library's lock (concurrent runs would share the arena).
"""
import ctypes
import hashlib
import os
import subprocess
import tempfile
import threading

from .. import diagnostics
from ..codegen.c import compile_flags
from ..codegen.c_compiler import find_cc
from ..errors import CompileError
from ..runtime.shared_library import SharedLibrary
from .params import FILE_NAME as PARAMS_FILE, check_params

_CODE_LOG = diagnostics.get_logger("codegen")

_RUN_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p)
_LOCKS = {}
_LOCKS_GUARD = threading.Lock()
_CACHE_DIR = []


def _cache_dir() -> str:
    with _LOCKS_GUARD:
        if not _CACHE_DIR:
            _CACHE_DIR.append(tempfile.mkdtemp(prefix="rb_aot_"))
        return _CACHE_DIR[0]


def model_flags(openmp=None, options=()) -> list:
    """codegen.c's compile flags (compiler workarounds included), then `options`."""
    return compile_flags(openmp, list(options))


def _write(path: str, data) -> None:
    """Write atomically (threads of one process may build the same model at once)."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "wb" if isinstance(data, (bytes, bytearray)) else "w") as f:
        f.write(data)
    os.replace(tmp, path)


def compile_model(c_source: str, h_source: str, params: bytes, openmp=None, options=()) -> str:
    """Path of a shared library built from model.c + model.h + model_params.bin (`params`,
    included by model.c's `.incbin`, validated first), cached by content and flags. cc runs in the folder that
    holds the three files, where the assembler looks for model_params.bin."""
    check_params(params)            # a corrupt blob is reported here, before cc embeds it
    cc = find_cc()
    flags = model_flags(openmp, options)
    digest = hashlib.sha256("\0".join([*cc, *flags, c_source, h_source]).encode())
    digest.update(params)
    key = digest.hexdigest()[:24]
    folder = os.path.join(_cache_dir(), key)
    lib_path = os.path.join(folder, "model.so")
    if os.path.exists(lib_path):
        return lib_path
    os.makedirs(folder, exist_ok=True)
    for name, data in (("model.c", c_source), ("model.h", h_source), (PARAMS_FILE, params)):
        _write(os.path.join(folder, name), data)
    tmp = lib_path + f".{os.getpid()}.{threading.get_ident()}.tmp"
    cmd = [*cc, *flags, "model.c", "-o", tmp, "-lm"]
    if diagnostics.wants(4):
        _CODE_LOG.debug("AOT model.c (%d chars):\n%s", len(c_source), c_source)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=folder)
    if proc.returncode != 0:
        raise CompileError(f"aot: the C compiler rejected the generated model:\n{' '.join(cmd)}\n"
                           f"{proc.stderr.strip()[:4000]}\n(the sources are in {folder})")
    os.replace(tmp, lib_path)
    return lib_path


class AotLibrary:
    """A loaded model library: `run(inputs_struct, outputs_struct)` under the library's lock."""

    def __init__(self, path: str, prefix: str, c_source: str = "", h_source: str = ""):
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

    def run(self, inputs_ptr, outputs_ptr) -> int:
        with self.lock:
            return int(self._run(inputs_ptr, outputs_ptr))

    def get_source(self, fmt: str = "c") -> str:
        return self.h_source if fmt == "h" else self.c_source

    def __repr__(self) -> str:
        return f"<AotLibrary {self.prefix}_run from {self.path}>"
