"""OpStrategy: the implementations an op has on a target, each a (compute, schedule) pair.

An OpStrategy holds OpSpecializations; each has an optional condition on the call (e.g. "dense
with batch 1") and OpImplementations with a priority level (plevel). Selection (te_compiler/
select.py) keeps the specializations whose condition holds and takes the highest plevel.

Every op gets one generic implementation for free: its declared te compute plus the generic
schedule for its pattern (strategy/generic.py). Target files (strategy/x86.py, cuda.py) only
*add* implementations with `register_strategy(op_name, target_key)`; removing them changes
speed, never results.
"""
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..errors import CompileError
from ..op.registry import register_op_attr


@dataclass
class OpImplementation:
    """compute(attrs, inputs, out_type) -> [te.Tensor]; schedule(attrs, outs, target) -> Schedule."""

    compute: Callable
    schedule: Callable
    name: str
    plevel: int = 10


@dataclass
class OpSpecialization:
    """Implementations valid when `condition(attrs, inputs, out_type)` is true (None: always)."""

    condition: Optional[Callable]
    implementations: list = field(default_factory=list)


class OpStrategy:
    """All implementations of one op call on one target, grouped by specialization."""

    def __init__(self):
        self.specializations = []

    def add_implementation(self, compute, schedule, name="default", plevel=10, condition=None):
        for spec in self.specializations:
            if spec.condition is condition:
                break
        else:
            spec = OpSpecialization(condition)
            self.specializations.append(spec)
        spec.implementations.append(OpImplementation(compute, schedule, name, plevel))

    def __repr__(self) -> str:
        names = [f"{i.name}(plevel={i.plevel})" for s in self.specializations for i in s.implementations]
        return f"OpStrategy({', '.join(names)})"


# (op name, target key) -> [fstrategy(strategy, attrs, inputs, out_type, target)]
_ADDITIONS = {}

# Which strategy keys a target consults, most specific first; "generic" is always last.
TARGET_KEYS = {"llvm": ("x86", "cpu", "generic"), "c": ("cpu", "generic"),
               "cuda": ("cuda", "gpu", "generic")}


def target_kind(target) -> str:
    """"llvm -mcpu=native" -> "llvm"."""
    kind = str(target or "llvm").split()[0]
    if kind not in TARGET_KEYS:
        raise CompileError(f"unknown target {target!r}; known targets: {sorted(TARGET_KEYS)}")
    return kind


def target_keys(target) -> tuple:
    return TARGET_KEYS[target_kind(target)]


def register_strategy(op_name: str, target_key: str, fstrategy: Callable = None):
    """Add implementations of `op_name` for targets with `target_key` (usable as a decorator).

    fstrategy(strategy, attrs, inputs, out_type, target) calls strategy.add_implementation(...).
    """
    known = {k for keys in TARGET_KEYS.values() for k in keys}
    if target_key not in known:
        raise CompileError(f"register_strategy: unknown target key {target_key!r}; use one of {sorted(known)}")

    def register(fn):
        _ADDITIONS.setdefault((op_name, target_key), []).append(fn)
        return fn
    return register(fstrategy) if fstrategy is not None else register


def unregister_strategy(op_name: str, target_key: str, fstrategy: Callable) -> None:
    """Remove a registration (tests that register their own implementation clean up with this)."""
    _ADDITIONS.get((op_name, target_key), []).remove(fstrategy)


# (op name, target key) -> falter(call) -> (new op, new attrs) | None
_ALTERS = {}


def register_alter_layout(op_name: str, target_key: str, falter: Callable = None):
    """Register how AlterOpLayout rewrites `op_name` on targets with `target_key` (usable as a
    decorator; Relay's register_alter_op_layout). falter(call) gets the original typed call and
    returns (new op, new attrs), or None to leave it; the new op's FInferCorrectLayout rule
    then places the layout transforms. The op's "FTVMAlterOpLayout" attribute dispatches on
    the target: attr(call, target)."""
    known = {k for keys in TARGET_KEYS.values() for k in keys}
    if target_key not in known:
        raise CompileError(f"register_alter_layout: unknown target key {target_key!r}; use one of {sorted(known)}")

    def register(fn):
        if not any(name == op_name for name, _ in _ALTERS):
            register_op_attr(op_name, "FTVMAlterOpLayout",
                             lambda call, target: alter_op_layout(op_name, call, target))
        _ALTERS[(op_name, target_key)] = fn
        return fn
    return register(falter) if falter is not None else register


def alter_op_layout(op_name: str, call, target):
    """The first registered alteration of `call` for `target`'s keys (most specific first), or None."""
    for key in target_keys(target):
        fn = _ALTERS.get((op_name, key))
        altered = fn(call) if fn is not None else None
        if altered is not None:
            return altered
    return None


def op_strategy(op, attrs, inputs, out_type, target) -> OpStrategy:
    """The full strategy of one call: the generic implementation plus every target addition."""
    from .generic import generic_implementation
    strategy = OpStrategy()
    generic = generic_implementation(op)
    if generic is not None:
        strategy.add_implementation(*generic)
    for key in reversed(target_keys(target)):
        for fn in _ADDITIONS.get((op.name, key), []):
            fn(strategy, attrs, inputs, out_type, target)
    return strategy
