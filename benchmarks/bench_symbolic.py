"""Kernels compiled for a symbolic size against the same kernels compiled for the static size.

A program whose input types hold a size variable (`te.size_var`) is compiled once by the VM with
the size variable as a kernel parameter and runs for any size; this suite measures what that
generality costs. Both sides run on the VM (the graph executor refuses symbolic shapes), with
the same x86 schedules:

- nn.dense 64x512x512: data (n, 512) vs (64, 512), run at n = 64;
- nn.conv2d 32->32 3x3 pad 1 + relu: data (1, 32, h, w) vs (1, 32, 56, 56), run at 56x56.

ratio = symbolic median / static median (the issue's target: within 1.3).
"""
import numpy as np

import relay_backend as relay
from relay_backend import te

from .common import interleaved_medians


def _vm_runner(data_var, weight_shape, build, data, rng):
    w = relay.var("w", shape=weight_shape)
    mod = relay.IRModule.from_expr(relay.Function([data_var, w], build(data_var, w)))
    exe = relay.vm.compile(mod)
    vm = relay.vm.VirtualMachine(exe)
    args = (relay.nd.array(data), relay.nd.array(rng.standard_normal(weight_shape).astype("float32")))
    return lambda: vm.run(*args)


def _pairs():
    rng = np.random.default_rng(0)
    dense = lambda x, w: relay.nn.dense(x, w)  # noqa: E731
    x = rng.standard_normal((64, 512)).astype("float32")
    yield ("nn.dense 64x512x512", (512, 512), dense, x,
           relay.var("x", shape=(64, 512)), relay.var("x", shape=(te.size_var("n"), 512)))
    conv = lambda x, w: relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))  # noqa: E731
    x = rng.standard_normal((1, 32, 56, 56)).astype("float32")
    yield ("conv2d 32->32 3x3 on 1x32x56x56 + relu", (32, 32, 3, 3), conv, x,
           relay.var("x", shape=(1, 32, 56, 56)),
           relay.var("x", shape=(1, 32, te.size_var("h"), te.size_var("w"))))


def run(repeats: int = 15) -> list:
    rows = []
    rng = np.random.default_rng(1)
    for label, wshape, build, data, static_var, symbolic_var in _pairs():
        try:
            static = _vm_runner(static_var, wshape, build, data, rng)
            symbolic = _vm_runner(symbolic_var, wshape, build, data, rng)
        except Exception as err:  # noqa: BLE001 - report, keep the other rows
            rows.append((f"{label}: {type(err).__name__}", "FAILED", 0.0, None, 0.0))
            continue
        times = interleaved_medians({"static": static, "symbolic": symbolic}, repeats=repeats)
        base = times["static"][0]
        rows.append((f"{label}: static shape (VM)", "ms", base * 1e3, 1.0, times["static"][1]))
        rows.append((f"{label}: symbolic size (VM)", "ms", times["symbolic"][0] * 1e3,
                     times["symbolic"][0] / base, times["symbolic"][1]))
    return rows
