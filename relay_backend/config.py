"""Settings read once from RB_* environment variables.

Library code asks `config.get()`; nothing else reads os.environ.
"""
import os
from dataclasses import dataclass

VERSION = "0.1.0"  # the package version (also keys the on-disk kernel cache)
DEFAULT_CACHE_MAX_BYTES = 2 << 30   # 2 GiB: least recently used entries go beyond it


@dataclass(frozen=True)
class Config:
    debug: int = 0                 # RB_DEBUG: 1 pass timings, 2 kernel runs, 3 TIR, 4 LLVM IR / C
    dump_dir: str = ""             # RB_DUMP_DIR: write each stage to files here
    no_memory_plan: bool = False   # RB_NO_MEMORY_PLAN=1: disable storage reuse (bisection)
    cache_dir: str = ""            # RB_CACHE_DIR: on-disk kernel cache ("" = ~/.cache/relay_backend)
    no_disk_cache: bool = False    # RB_NO_DISK_CACHE=1
    cache_max_bytes: int = DEFAULT_CACHE_MAX_BYTES  # RB_CACHE_MAX_BYTES: the cache's size bound
    compile_jobs: int = 0          # RB_COMPILE_JOBS: LLVM worker processes (0 = every usable core)
    max_tensor_bytes: int = 0      # RB_MAX_TENSOR_BYTES: largest single tensor (0 = physical memory)
    tophub: bool = True            # RB_TOPHUB=0: builds ignore the shipped tuning records (autotvm/tophub)
    progress: str = ""             # RB_PROGRESS: "0" never show progress bars, "1" always, "" on a TTY
    tvm_num_threads: int = 0       # TVM_NUM_THREADS: threads for parallel kernels (0 = not set)
    omp_num_threads: int = 0       # OMP_NUM_THREADS (its first number; 0 = not set)
    thread_pool_spin_count: int = -1   # TVM_THREAD_POOL_SPIN_COUNT: an idle worker's yields (-1 = not set)


def _read() -> Config:
    env = os.environ
    return Config(
        debug=int(env.get("RB_DEBUG", "0") or 0),
        dump_dir=env.get("RB_DUMP_DIR", ""),
        no_memory_plan=env.get("RB_NO_MEMORY_PLAN", "") not in ("", "0"),
        cache_dir=env.get("RB_CACHE_DIR", ""),
        no_disk_cache=env.get("RB_NO_DISK_CACHE", "") not in ("", "0"),
        max_tensor_bytes=_int_setting(env, "RB_MAX_TENSOR_BYTES"),
        tophub=env.get("RB_TOPHUB", "").strip().lower() not in ("0", "off", "none", "false"),
        cache_max_bytes=_size_setting(env, "RB_CACHE_MAX_BYTES", DEFAULT_CACHE_MAX_BYTES),
        compile_jobs=_int_setting(env, "RB_COMPILE_JOBS"),
        progress=env.get("RB_PROGRESS", "").strip(),
        tvm_num_threads=_int_setting(env, "TVM_NUM_THREADS"),
        omp_num_threads=_leading_int(env.get("OMP_NUM_THREADS", "")),
        thread_pool_spin_count=(_int_setting(env, "TVM_THREAD_POOL_SPIN_COUNT")
                                if env.get("TVM_THREAD_POOL_SPIN_COUNT", "").strip() else -1),
    )


def _int_setting(env, name: str, default: int = 0) -> int:
    text = env.get(name, "") or str(default)
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name}={text!r} is not an integer") from None
    if value < 0:
        raise ValueError(f"{name}={text!r} must be >= 0")
    return value


_SIZE_SUFFIXES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _size_setting(env, name: str, default: int) -> int:
    """A byte count: an integer, optionally with a K / M / G / T suffix (powers of 1024)."""
    text = (env.get(name, "") or "").strip()
    if not text:
        return default
    scale = _SIZE_SUFFIXES.get(text[-1].upper(), 1)
    digits = text[:-1] if scale != 1 else text
    try:
        value = int(digits)
    except ValueError:
        raise ValueError(f"{name}={text!r} is not a byte count (an integer, optionally with a "
                         f"K, M, G or T suffix, e.g. 500M)") from None
    if value < 0:
        raise ValueError(f"{name}={text!r} must be >= 0")
    return value * scale


def _leading_int(text: str) -> int:
    """The first number of an OMP_NUM_THREADS list ("4" or "4,2"); 0 when unset or not a number
    (libgomp ignores such a value too)."""
    head = text.split(",")[0].strip()
    return int(head) if head.isdigit() else 0


_CONFIG = _read()


def get() -> Config:
    """The process-wide settings (read from the environment at import)."""
    return _CONFIG


def reload() -> Config:
    """Re-read the environment (tests that set RB_* variables call this)."""
    global _CONFIG
    _CONFIG = _read()
    return _CONFIG
