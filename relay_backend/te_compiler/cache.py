"""The in-memory compilation cache: CCacheKey = (primitive function up to alpha-renaming, target).

Equal keys share one CCacheValue (its use_count shows how often it was asked for). Compiled
code is also kept on disk across processes, below this level: codegen keys each lowered kernel
by its content (codegen/llvm_cache.py, relay_backend/cache.py), so a kernel lowered here with
another implementation, schedule or CPU never meets a stale entry.
"""
from dataclasses import dataclass, field

from ..ir.structural import structural_equal, structural_hash
from ..transform import InferTypeLocal
from ..target import as_target


@dataclass
class CachedFunc:
    """A lowered primitive function: its kernel name, te inputs/outputs and PrimFuncs."""

    target: object               # the target.Target it was lowered for
    func_name: str
    prim_fn_var: object          # GlobalVar naming the kernel
    inputs: list                 # te placeholders
    outputs: list                # te output tensors
    funcs: dict                  # name -> tir PrimFunc
    implementations: list = field(default_factory=list)  # (op, implementation) chosen


def ensure_typed(func):
    """Type `func` in place unless it is typed already (InferType also fills a missing ret_type)."""
    if func.body._checked_type_ is None:
        InferTypeLocal(func)
    return func


class CCacheKey:
    """(source_func, target); equal when the functions are structurally equal and the targets'
    canonical strings match (so "llvm -mcpu=a" and "llvm -mcpu=b" never share a kernel). The
    function is typed first: typing fills a missing ret_type, which the structural hash covers,
    so typing it after the key was made would leave the key's hash stale."""

    def __init__(self, source_func, target):
        self.source_func = ensure_typed(source_func)
        self.target = as_target(target)
        self.target_text = str(self.target)
        self._hash = hash((structural_hash(source_func), self.target_text))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return (isinstance(other, CCacheKey) and self._hash == other._hash
                and self.target_text == other.target_text
                and structural_equal(self.source_func, other.source_func))


@dataclass
class CCacheValue:
    cached_func: CachedFunc
    use_count: int = 0
    module: object = None        # runtime Module once compiled
