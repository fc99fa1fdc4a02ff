"""The compilation cache: CCacheKey = (primitive function up to alpha-renaming, target).

In memory, equal keys share one CCacheValue (its use_count shows how often it was asked for).
On disk, compiled kernels are stored as exported libraries keyed by (structural hash, target,
kernel name, package version, a digest of the package source), so a second process loads them
instead of running LLVM, and a changed compiler never loads a stale kernel.
"""
import functools
import hashlib
import os
import pathlib
from dataclasses import dataclass, field

from ..config import VERSION, get as get_config
from ..ir.structural import structural_equal, structural_hash

PACKAGE_VERSION = VERSION


@dataclass
class CachedFunc:
    """A lowered primitive function: its kernel name, te inputs/outputs and PrimFuncs."""

    target: str
    func_name: str
    prim_fn_var: object          # GlobalVar naming the kernel
    inputs: list                 # te placeholders
    outputs: list                # te output tensors
    funcs: dict                  # name -> tir PrimFunc
    implementations: list = field(default_factory=list)  # (op, implementation) chosen


class CCacheKey:
    """(source_func, target); equal when the functions are structurally equal and targets match."""

    def __init__(self, source_func, target):
        self.source_func = source_func
        self.target = str(target)
        self._hash = hash((structural_hash(source_func), self.target))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return (isinstance(other, CCacheKey) and self._hash == other._hash and self.target == other.target
                and structural_equal(self.source_func, other.source_func))

    def disk_key(self, func_name: str) -> str:
        raw = (f"{structural_hash(self.source_func):016x}|{self.target}|{func_name}|{PACKAGE_VERSION}|"
               f"{compiler_digest()}")
        return hashlib.sha256(raw.encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=None)
def compiler_digest() -> str:
    """A hash of the package's own source: any change to an op compute, a schedule or the
    codegen makes every previously cached kernel stale (the version string alone would not)."""
    root = pathlib.Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass
class CCacheValue:
    cached_func: CachedFunc
    use_count: int = 0
    module: object = None        # runtime Module once compiled


def disk_cache_dir():
    """Where compiled kernels are kept across processes, or None when disabled."""
    cfg = get_config()
    if cfg.no_disk_cache:
        return None
    path = cfg.cache_dir or os.path.join(os.path.expanduser("~"), ".cache", "relay_backend")
    os.makedirs(path, exist_ok=True)
    return path
