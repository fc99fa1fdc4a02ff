"""Running one module on several executors and comparing them with the debug interpreter.

Used by the property tests and the workload tests: `run(kind, mod, inputs)` returns the flattened
numpy outputs, and `compare(mod, inputs, kind)` raises OutputMismatch naming the output, the
executor and the worst element.
"""
import numpy as np

from ..build_module import create_executor
from .tolerances import assert_allclose


def flatten(value) -> list:
    """NDArray / runtime tuple (ADT) / sequence -> a flat list of numpy arrays, in field order."""
    if hasattr(value, "fields"):
        return [a for f in value.fields for a in flatten(f)]
    if isinstance(value, (list, tuple)):
        return [a for f in value for a in flatten(f)]
    if hasattr(value, "numpy"):
        return [value.numpy()]
    return [np.asarray(value)]


def run(kind: str, mod, inputs: dict) -> list:
    """Evaluate main of `mod` on `kind` with keyword `inputs`; the flattened numpy outputs."""
    func = create_executor(kind, mod=mod).evaluate()
    return flatten(func(**inputs))


def compare(mod, inputs: dict, kind: str, expected: list = None, scale: float = 1.0) -> list:
    """Run `kind` and check it against `expected` (default: the debug interpreter's outputs)."""
    if expected is None:
        expected = run("debug", mod, inputs)
    actual = run(kind, mod, inputs)
    if len(actual) != len(expected):
        raise AssertionError(f"{kind}: {len(actual)} outputs, the interpreter gives {len(expected)}")
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert_allclose(a, e, what=f"output {i} on {kind} vs debug", scale=scale)
    return actual
