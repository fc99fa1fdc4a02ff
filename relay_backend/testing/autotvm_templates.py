"""Small tunable templates for tests and examples (relay_backend.testing, like tvm.relay.testing).

`matmul(n, l, m, dtype)`: C = A @ B with a split of each output axis and an optional
vectorized inner loop: 5 x 5 x 2 = 50 configs for 16 x 16 outputs.

`misbehave(n, dtype)`: out = a + 0, except where its knob "mode" says otherwise, so the
measurement tests meet each failure for real: "crash" reads 4 GiB past its input (the kernel
dies with a signal), "hang" loops ~10^10 times, "wrong" adds 1, "invalid" is rejected by the
template (cfg.raise_error), "raise" fails while building the schedule, "slow_build" sleeps
for ten minutes while building. The default config ("ok") is the reference the others are
checked against.
"""
import time

from .. import te, tir
from ..autotvm.task.task import get_config, template

MISBEHAVIOURS = ("ok", "crash", "hang", "wrong", "invalid", "raise", "slow_build")


@template("testing/matmul")
def matmul(n, l, m, dtype):
    """C[i, j] = sum_k A[i, k] * B[k, j], tiled by the knobs tile_y / tile_x / vec."""
    a = te.placeholder((n, l), dtype, name="A")
    b = te.placeholder((l, m), dtype, name="B")
    k = te.reduce_axis((0, l), "k")
    c = te.compute((n, m), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    s = te.create_schedule(c)
    y, x = c.op.axis
    cfg = get_config()
    cfg.define_split("tile_y", y, num_outputs=2, policy="power2")
    cfg.define_split("tile_x", x, num_outputs=2, policy="power2")
    cfg.define_knob("vec", [False, True])
    if cfg.is_fallback:
        cfg["tile_y"] = cfg.space_map["tile_y"][0]
        cfg["tile_x"] = cfg.space_map["tile_x"][0]
    yo, yi = cfg["tile_y"].apply(s, c, y)
    xo, xi = cfg["tile_x"].apply(s, c, x)
    s[c].reorder(yo, xo, c.op.reduce_axis[0], yi, xi)
    if cfg["vec"].val:
        s[c].vectorize(xi)
    return s, [a, b, c]


@template("testing/misbehave")
def misbehave(n, dtype):
    """out = a (+ misbehaviour chosen by knob "mode"; see the module doc)."""
    cfg = get_config()
    cfg.define_knob("mode", list(MISBEHAVIOURS))
    mode = "ok" if cfg.is_fallback else cfg["mode"].val
    a = te.placeholder((n,), dtype, name="a")
    if mode == "crash":
        far = 1 << 30                              # elements: 4 GiB past a small buffer
        out = te.compute((n,), lambda i: a[i + far] + a[i + 3 * far], name="out")
    elif mode == "hang":
        r1 = te.reduce_axis((0, 1 << 15), "r1")
        r2 = te.reduce_axis((0, 1 << 15), "r2")
        out = te.compute((n,), lambda i: te.sum(a[(i + r1.var * r2.var) % n], axis=[r1, r2]), name="out")
    elif mode == "wrong":
        out = te.compute((n,), lambda i: a[i] + tir.const(1, dtype), name="out")
    else:
        out = te.compute((n,), lambda i: a[i] + tir.const(0, dtype), name="out")
    if mode == "invalid":
        cfg.raise_error("this config is rejected by the template")
    if mode == "raise":
        raise RuntimeError("the template failed while building the schedule")
    if mode == "slow_build":
        time.sleep(600)

    return te.create_schedule(out), [a, out]

