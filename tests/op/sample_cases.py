"""pytest parameters over the registered samples of some ops, shared by the op tests.

Every sample runs where it is cheap (the tir interpreter, the debug executor); where a sample
costs an LLVM compile, only the first COMPILED_BY_DEFAULT samples of each op run in the default
suite and the rest under `-m slow` (CI runs both), which keeps the default suite inside its
time budget as the op set grows.
"""
import numpy as np
import pytest

COMPILED_BY_DEFAULT = 1   # samples per op that are compiled outside `-m slow`


def sample_params(ops, compiled: bool = False, slow_all: bool = False) -> list:
    """pytest.param(op, sample, id="<op>-<k>") for every sample of every op in `ops`; with
    `compiled`, samples past COMPILED_BY_DEFAULT (all of them with `slow_all`) are marked slow."""
    params = []
    for op in ops:
        for k, sample in enumerate(op.samples(np.random.default_rng(0))):
            slow = compiled and (slow_all or k >= COMPILED_BY_DEFAULT)
            params.append(pytest.param(op, sample, id=f"{op.name}-{k}",
                                       marks=[pytest.mark.slow] if slow else []))
    return params
