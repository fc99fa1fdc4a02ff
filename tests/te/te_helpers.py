"""Shared helpers for te tests: lower a schedule, run it with the tir interpreter."""
import numpy as np

from relay_backend import te, tir


def run_lowered(s, args, inputs, name="main"):
    """Lower `s` over `args` (inputs then outputs), run it on `inputs`; return the outputs."""
    func = te.lower(s, args, name)
    tir.verify(func)
    outs = args[len(inputs):]
    arrays = list(inputs)
    shape_env = _bind(args, inputs)
    results = []
    for t in outs:
        shape = tuple(_eval_dim(d, shape_env) for d in t.shape)
        arr = np.full(shape, -7, dtype=t.dtype)
        results.append(arr)
    tir.interp.run(func, *arrays, *results)
    return results, func


def _bind(args, inputs):
    env = {}
    for t, x in zip(args, inputs):
        for d, size in zip(t.shape, np.asarray(x).shape):
            if isinstance(d, tir.Var):
                env[d] = tir.const(int(size))
    return env


def _eval_dim(d, env):
    value = tir.simplify(tir.substitute(d, env))
    assert isinstance(value, tir.IntImm), f"cannot size output dim {d}"
    return value.value


def rand(*shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed + sum(shape))
    if dtype.startswith("int"):
        return rng.integers(-5, 6, size=shape).astype(dtype)
    return rng.uniform(-1, 1, size=shape).astype(dtype)
