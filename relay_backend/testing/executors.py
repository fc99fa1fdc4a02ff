"""Running one module on several executors and comparing them with the debug interpreter.

Used by the property tests, the demo and the benchmarks: `available(kind)` probes an executor on
a one-op program (a kind that is not implemented yet is reported, not raised), `run(kind, mod,
inputs)` returns the flattened numpy outputs, and `compare(mod, inputs, kind)` raises
OutputMismatch naming the output, the executor and the worst element.
"""
import functools

import numpy as np

from .. import ir
from ..build_module import create_executor
from ..errors import ExecutorUnavailable
from ..op import tensor as T
from .tolerances import assert_allclose


@functools.lru_cache(maxsize=None)
def available(kind: str) -> tuple:
    """(True, "") when `kind` compiles and runs a one-op program, else (False, why)."""
    x = ir.var("x", shape=(2,))
    mod = ir.IRModule.from_expr(ir.Function([x], T.negative(x)))
    try:
        out = create_executor(kind, mod=mod).evaluate()(np.ones(2, "float32"))
    except ExecutorUnavailable as err:
        return False, f"{kind} executor unavailable: {err}"
    except ModuleNotFoundError as err:  # its package is still being written
        if err.name and err.name.startswith("relay_backend."):
            return False, f"{kind} executor unavailable: {err}"
        raise
    if not np.array_equal(flatten(out)[0], -np.ones(2, "float32")):
        raise AssertionError(f"{kind} executor computes negative([1, 1]) wrongly: {flatten(out)}")
    return True, ""


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
