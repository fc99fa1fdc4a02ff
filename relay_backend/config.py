"""Settings read once from RB_* environment variables.

Library code asks `config.get()`; nothing else reads os.environ.
"""
import os
from dataclasses import dataclass

VERSION = "0.1.0"  # the package version (also keys the on-disk kernel cache)


@dataclass(frozen=True)
class Config:
    debug: int = 0                 # RB_DEBUG: 1 pass timings, 2 kernel runs, 3 TIR, 4 LLVM IR / C
    dump_dir: str = ""             # RB_DUMP_DIR: write each stage to files here
    no_memory_plan: bool = False   # RB_NO_MEMORY_PLAN=1: disable storage reuse (bisection)
    cache_dir: str = ""            # RB_CACHE_DIR: on-disk kernel cache ("" = ~/.cache/relay_backend)
    no_disk_cache: bool = False    # RB_NO_DISK_CACHE=1
    max_tensor_bytes: int = 0      # RB_MAX_TENSOR_BYTES: largest single tensor (0 = physical memory)
    tophub: bool = True            # RB_TOPHUB=0: builds ignore the shipped tuning records (autotvm/tophub)


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
    )


def _int_setting(env, name: str) -> int:
    text = env.get(name, "") or "0"
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name}={text!r} is not an integer") from None
    if value < 0:
        raise ValueError(f"{name}={text!r} must be >= 0")
    return value


_CONFIG = _read()


def get() -> Config:
    """The process-wide settings (read from the environment at import)."""
    return _CONFIG


def reload() -> Config:
    """Re-read the environment (tests that set RB_* variables call this)."""
    global _CONFIG
    _CONFIG = _read()
    return _CONFIG
