"""OpStrategy: the implementations an op has on a target, each a (compute, schedule) pair
(tvm.relay.op.OpStrategy; it lives with the ops so user code registers strategies from
relay.op, and strategy/ builds and selects them).

An OpStrategy holds OpSpecializations; each has an optional condition on the call (e.g. "dense
with batch 1") and OpImplementations with a priority level (plevel). Selection (te_compiler/
select.py) keeps the specializations whose condition holds and takes the highest plevel.
"""
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..errors import OpDefinitionError


@dataclass
class OpImplementation:
    """compute(attrs, inputs, out_type) -> [te.Tensor]; schedule(attrs, outs, target) -> Schedule
    (None: the generic schedule, strategy/generic.py schedule_default)."""

    compute: Callable
    schedule: Optional[Callable]
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
        """Add compute(attrs, inputs, out_type) -> [te.Tensor] with its schedule
        (attrs, outs, target) -> te.Schedule; schedule None means the generic schedule
        (inline injective stages, parallelize and vectorize the rest)."""
        if not callable(compute):
            raise OpDefinitionError(f"OpStrategy.add_implementation({name!r}): compute must be "
                                    f"callable, got {type(compute).__name__}")
        if schedule is not None and not callable(schedule):
            raise OpDefinitionError(f"OpStrategy.add_implementation({name!r}): schedule must be "
                                    f"callable or None (the generic schedule), got "
                                    f"{type(schedule).__name__}")
        if condition is not None and not callable(condition):
            raise OpDefinitionError(f"OpStrategy.add_implementation({name!r}): condition must be "
                                    f"callable or None, got {type(condition).__name__}")
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


__all__ = ["OpImplementation", "OpSpecialization", "OpStrategy"]
