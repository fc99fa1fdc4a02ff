"""OpStrategy: the implementations an op has on a target, each a (compute, schedule) pair.

An OpStrategy holds OpSpecializations; each has an optional condition on the call (e.g. "dense
with batch 1") and OpImplementations with a priority level (plevel). Selection (te_compiler/
select.py) keeps the specializations whose condition holds and takes the highest plevel.

Every op gets one generic implementation for free: its declared te compute plus the generic
schedule for its pattern (strategy/generic.py). Target files (strategy/x86.py, cuda.py) only
*add* implementations with `register_strategy(op_name, target_key)` (target keys come from
target.Target.keys: x86 / arm_cpu / cpu, cuda / gpu); removing them changes
speed, never results.
"""
from typing import Callable

from ..errors import CompileError
from ..target import as_target
from ..op.op_attrs import bump_generation
from ..op.registry import register_op_attr
from ..op.op_strategy import OpImplementation, OpSpecialization, OpStrategy  # noqa: F401 (defined in op/)


# (op name, target key) -> [fstrategy(strategy, attrs, inputs, out_type, target)]
_ADDITIONS = {}

# Keys a registration may name: the keys targets derive (target.py), and "generic", which every
# target consults last (TVM's generic_func fallback).
KNOWN_KEYS = ("x86", "arm_cpu", "cpu", "cuda", "gpu", "generic")


def target_kind(target) -> str:
    """The kind name of a target: "llvm -mcpu=native" -> "llvm"."""
    return as_target(target).kind.name


def target_keys(target) -> tuple:
    """The strategy keys a target consults, most specific first, ending with "generic"."""
    return as_target(target).keys + ("generic",)


def register_strategy(op_name: str, target_key: str, fstrategy: Callable = None):
    """Add implementations of `op_name` for targets with `target_key` (usable as a decorator).

    fstrategy(strategy, attrs, inputs, out_type, target) calls strategy.add_implementation(...).
    A target gets the additions of every one of its keys (x86 ones only for targets keyed x86:
    an arm_cpu target never sees them).
    """
    if target_key not in KNOWN_KEYS:
        raise CompileError(f"register_strategy: unknown target key {target_key!r}; use one of "
                           f"{sorted(KNOWN_KEYS)}")

    def register(fn):
        _ADDITIONS.setdefault((op_name, target_key), []).append(fn)
        bump_generation()   # kernels chosen without this implementation are stale now
        return fn
    return register(fstrategy) if fstrategy is not None else register


def unregister_strategy(op_name: str, target_key: str, fstrategy: Callable) -> None:
    """Remove a registration (tests that register their own implementation clean up with this)."""
    _ADDITIONS.get((op_name, target_key), []).remove(fstrategy)
    bump_generation()


# (op name, target key) -> falter(call) -> (new op, new attrs) | None
_ALTERS = {}


def register_alter_layout(op_name: str, target_key: str, falter: Callable = None):
    """Register how AlterOpLayout rewrites `op_name` on targets with `target_key` (usable as a
    decorator; Relay's register_alter_op_layout). falter(call) gets the original typed call and
    returns (new op, new attrs), or None to leave it; the new op's FInferCorrectLayout rule
    then places the layout transforms. The op's "FTVMAlterOpLayout" attribute dispatches on
    the target: attr(call, target)."""
    if target_key not in KNOWN_KEYS:
        raise CompileError(f"register_alter_layout: unknown target key {target_key!r}; use one of "
                           f"{sorted(KNOWN_KEYS)}")

    def register(fn):
        if not any(name == op_name for name, _ in _ALTERS):
            register_op_attr(op_name, "FTVMAlterOpLayout",
                             lambda call, target: alter_op_layout(op_name, call, target))
        _ALTERS[(op_name, target_key)] = fn
        return fn
    return register(falter) if falter is not None else register


def alter_op_layout(op_name: str, call, target):
    """The first registered alteration of `call` for `target`'s keys (most specific first), or
    None. It runs under `target` (Target.current), so it may ask the tuning dispatch context for
    the config of a call's workload, as Relay's alterations do."""
    with as_target(target):
        for key in target_keys(target):
            fn = _ALTERS.get((op_name, key))
            altered = fn(call) if fn is not None else None
            if altered is not None:
                return altered
    return None


# (op name, target key) -> fpad(call) -> padded channel count | None
_PADS = {}


def register_pad_channels(op_name: str, target_key: str, fpad: Callable = None):
    """Register to how many output channels PadConvChannels pads `op_name` calls on targets with
    `target_key` (usable as a decorator). fpad(call) gets the original typed call and returns
    the padded channel count, or None to leave it. The op's "FTVMPadChannels" attribute
    dispatches on the target: attr(call, target), the first answer of its keys."""
    if target_key not in KNOWN_KEYS:
        raise CompileError(f"register_pad_channels: unknown target key {target_key!r}; use one of "
                           f"{sorted(KNOWN_KEYS)}")

    def register(fn):
        if not any(name == op_name for name, _ in _PADS):
            register_op_attr(op_name, "FTVMPadChannels", lambda call, target: _pad_channels(op_name, call, target))
        _PADS[(op_name, target_key)] = fn
        return fn
    return register(fpad) if fpad is not None else register


def _pad_channels(op_name: str, call, target):
    with as_target(target):
        for key in target_keys(target):
            fn = _PADS.get((op_name, key))
            padded = fn(call) if fn is not None else None
            if padded is not None:
                return padded
    return None


def op_strategy(op, attrs, inputs, out_type, target) -> OpStrategy:
    """The full strategy of one call: the generic implementation plus the additions registered
    under each of the target's keys (the generic key first, the most specific last)."""
    from .generic import generic_implementation
    target = as_target(target)
    if getattr(op, "fstrategy", None) is not None:   # the op's own FTVMStrategy replaces the generic one
        strategy = op.fstrategy(attrs, inputs, out_type, target)
        if not isinstance(strategy, OpStrategy):
            raise CompileError(f"{op.name}: its strategy function returned {type(strategy).__name__}, "
                               f"not a relay.op.OpStrategy")
    else:
        strategy = OpStrategy()
        generic = generic_implementation(op, target)
        if generic is not None:
            strategy.add_implementation(*generic)
    for key in reversed(target_keys(target)):
        for fn in _ADDITIONS.get((op.name, key), []):
            fn(strategy, attrs, inputs, out_type, target)
    return strategy
