"""OpStrategy: the implementations an op has on a target, each a (compute, schedule) pair
(tvm.relay.op.OpStrategy; it lives with the ops so user code registers strategies from
relay.op, and strategy/ builds and selects them).

An OpStrategy holds OpSpecializations; each has an optional condition on the call (e.g. "dense
with batch 1") and OpImplementations with a priority level (plevel). Selection (te_compiler/
select.py) keeps the specializations whose condition holds and takes the highest plevel.
"""
from dataclasses import dataclass, field
from typing import Callable, Optional


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


__all__ = ["OpImplementation", "OpSpecialization", "OpStrategy"]
