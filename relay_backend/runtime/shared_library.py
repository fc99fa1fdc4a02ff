"""SharedLibrary: a dlopen'ed shared object that is dlclose'd once nothing uses it.

ctypes.CDLL never closes what it opens, so every `load_module` of a fresh file kept its
mappings (five per library) for the life of the process. A SharedLibrary owns the handle and
closes it when it is garbage collected; every native Function made from it holds it, so the
code stays mapped exactly as long as something can still call it. Linux/ELF (the dl* calls
come from the process's own C library).
"""
import ctypes
import ctypes.util
import functools
import os
import weakref

_DL = ctypes.CDLL(None)
_dlopen, _dlsym, _dlclose, _dlerror = _DL.dlopen, _DL.dlsym, _DL.dlclose, _DL.dlerror
_dlopen.restype, _dlopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
_dlsym.restype, _dlsym.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]
_dlclose.restype, _dlclose.argtypes = ctypes.c_int, [ctypes.c_void_p]
_dlerror.restype, _dlerror.argtypes = ctypes.c_char_p, []


def _last_error() -> str:
    message = _dlerror()
    return message.decode(errors="replace") if message else "unknown dlopen error"


@functools.lru_cache(maxsize=None)
def pin_openmp_runtime() -> bool:
    """Keep GNU OpenMP's runtime loaded for the life of the process (RTLD_NODELETE).

    Kernel libraries with parallel loops link libgomp; when the last of them is dlclose'd, the
    dynamic loader would unload libgomp while its worker threads still run, and the process
    crashed (SIGSEGV) at exit. Returns whether libgomp was found."""
    from .thread_count import prepare_openmp_env
    prepare_openmp_env()
    name = ctypes.util.find_library("gomp")
    return bool(name and _dlopen(name.encode(), os.RTLD_NOW | os.RTLD_GLOBAL | os.RTLD_NODELETE))


# The symbol through which a kernel library's parallel loops reach a thread pool
# (codegen/llvm_parallel_shim.py), and the function giving the process pool's entry address
# (registered by codegen/llvm_thread_pool.py, which this level may not import).
LAUNCHER_SYMBOL = "rb_parallel_launcher"
_POOL_ENTRY = []


def register_thread_pool(entry_address) -> None:
    """Make libraries opened from now on run their parallel loops on the pool whose entry
    address `entry_address()` returns (called once, when that library is first opened)."""
    _POOL_ENTRY[:] = [entry_address]


class SharedLibrary:
    """dlopen(path) with RTLD_NOW | RTLD_LOCAL; `address(symbol)`; dlclose when collected.
    A library with an `rb_parallel_launcher` slot is pointed at the process's thread pool, so
    it starts no threads of its own (and its code may be unmapped at dlclose)."""

    def __init__(self, path: str):
        pin_openmp_runtime()
        handle = _dlopen(os.fsencode(path), os.RTLD_NOW | os.RTLD_LOCAL)
        if not handle:
            raise OSError(_last_error())
        self.path = path
        self._handle = handle
        self._finalizer = weakref.finalize(self, _dlclose, handle)
        slot = self.address(LAUNCHER_SYMBOL)
        if slot and _POOL_ENTRY:
            ctypes.c_void_p.from_address(slot).value = _POOL_ENTRY[0]()

    def address(self, symbol: str):
        """The address of `symbol`, or None if the library does not define it."""
        _dlerror()                                  # clear a stale error first
        return _dlsym(self._handle, symbol.encode()) or None

    def close(self) -> None:
        """dlclose now. Only for a library whose functions are no longer referenced."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def __repr__(self) -> str:
        return f"<SharedLibrary {self.path}{' (closed)' if self.closed else ''}>"


__all__ = ["SharedLibrary", "register_thread_pool", "LAUNCHER_SYMBOL"]
