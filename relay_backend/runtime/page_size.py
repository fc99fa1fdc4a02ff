"""Compile-time constant folding in small pages: `small_pages()` turns transparent huge pages
off for this process while it runs (Linux prctl PR_SET_THP_DISABLE), and back on after.

numpy asks the kernel for huge pages (madvise) on every array of 4 MB or more. FoldConstant
makes a few hundred such arrays in a build (ResNet-50: its weights scaled, re-laid out and
Winograd-transformed, ~600 MB of fresh memory), each used once. When the machine's free memory
is fragmented, which it is right after another big process freed its memory (a cold build in
the process before), every huge-page fault compacts memory first: a second-process build of
ResNet-50 right after a cold one spent 0.4-0.55 s of system time on it (0.06 s when huge pages
were at hand) and took 0.88-1.04 s; folding in small pages, 0.50-0.59 s (benchmarks/README.md,
"Constant folding in small pages"). Small pages cost more faults, never a compaction.

The graph executor copies its params into storage it allocates after the build, so its kernels
keep huge pages; the VM's constants stay where FoldConstant put them (ResNet-50 on the VM: 34.86
vs 34.38 and 38.67 vs 38.66 ms, interleaved, within the spread). Nested and concurrent uses (two
threads building) share one switch: huge pages come back when the last one leaves, unless the process
had them off before. Where prctl is missing (not Linux) or refuses, it does nothing.
"""
import contextlib
import ctypes
import functools
import sys
import threading

PR_SET_THP_DISABLE = 41
PR_GET_THP_DISABLE = 42

_LOCK = threading.Lock()
_STATE = {"depth": 0, "restore": False}


@functools.lru_cache(maxsize=None)
def _prctl():
    """libc's prctl, or None where there is none (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return fn


def huge_pages_disabled() -> bool:
    """Whether transparent huge pages are off for this process (False where unknown)."""
    prctl = _prctl()
    return bool(prctl is not None and prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1)


def _set_disabled(disabled: bool) -> bool:
    prctl = _prctl()
    return prctl is not None and prctl(PR_SET_THP_DISABLE, int(disabled), 0, 0, 0) == 0


@contextlib.contextmanager
def small_pages():
    """Within: this process faults in small pages only (see the module docstring)."""
    with _LOCK:
        if _STATE["depth"] == 0:
            already = huge_pages_disabled()
            _STATE["restore"] = not already and _set_disabled(True)
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0 and _STATE["restore"]:
                _set_disabled(False)
                _STATE["restore"] = False


__all__ = ["small_pages", "huge_pages_disabled"]
