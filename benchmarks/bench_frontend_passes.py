"""The Python-side costs that every executor pays: type inference and the reference interpreter.

- InferType on a 10,000-op chain (how the pass scales; it must stay iterative and linear).
- The debug interpreter on the seed CNN against the same network written in numpy: the
  interpreter's per-op dispatch overhead on top of the numpy references.
"""
import numpy as np

import relay_backend as relay
from relay_backend.testing import seed_cnn

from .common import interleaved_medians


def _chain(n: int):
    x = relay.var("x", shape=(4,))
    y = x
    for _ in range(n):
        y = relay.add(y, x)
    return relay.IRModule.from_expr(relay.Function([x], y))


def run(repeats: int = 15) -> list:
    rows = []
    mod = _chain(10_000)
    timing = interleaved_medians({"InferType": lambda: relay.transform.InferType()(mod)}, repeats=3, warmup=0)
    rows.append(("InferType, 10,000-op chain", "ms", timing["InferType"][0] * 1e3, None, timing["InferType"][1]))

    cnn, params = seed_cnn.get_workload()
    data = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype("float32")
    run_debug = relay.create_executor("debug", mod=cnn, params=params).evaluate()
    timing = interleaved_medians({
        "debug": lambda: run_debug(data),
        "numpy": lambda: seed_cnn.numpy_forward(data, params),
    }, repeats=repeats)
    ratio = timing["debug"][0] / timing["numpy"][0]
    rows.append(("seed CNN, debug interpreter", "ms", timing["debug"][0] * 1e3, ratio, timing["debug"][1]))
    rows.append(("seed CNN, numpy forward (float64)", "ms", timing["numpy"][0] * 1e3, 1.0, timing["numpy"][1]))
    return rows
