"""concatenate.x86 (strategy/x86_concat.py): a concatenation with a fused per-channel add and
relu (DenseNet's pre-activation) against numpy at odd channel counts, in NCHW and in NCHW{b}c;
its lowered tir is one loop nest per input, with no Select left and no parallel loop; where it
does not apply the generic schedule runs."""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.codegen import build
from relay_backend.ir.types import TensorType, TupleType
from relay_backend.op.registry import get as get_op
from relay_backend.op.transform import AxisAttrs
from relay_backend.runtime import nd
from relay_backend.strategy import op_strategy
from relay_backend.strategy.x86_concat import MAX_PIECES

pytestmark = pytest.mark.compile


def _impl_names(shapes, axis):
    phs = [te.placeholder(s, "float32") for s in shapes]
    op = get_op("concatenate")
    out_type = op.rel([TupleType([TensorType(tuple(s), "float32") for s in shapes])], AxisAttrs(axis))
    strategy = op_strategy(op, AxisAttrs(axis), phs, out_type, "llvm")
    return {impl.name: impl for spec in strategy.specializations for impl in spec.implementations}, out_type


def _lower_run(impl, shapes, axis, out_type):
    """compute -> relu(out + shift[channel]) -> the implementation's schedule -> LLVM; returns
    (result, numpy reference, tir text)."""
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    phs = [te.placeholder(s, "float32", name=f"x{k}") for k, s in enumerate(shapes)]
    cat = impl.compute(AxisAttrs(axis), phs, out_type)[0]
    channels = int(cat.shape[axis].value)
    shift = te.placeholder((channels,), "float32", name="shift")
    shift_np = rng.standard_normal(channels).astype("float32")
    out = te.compute(cat.shape, lambda *i: tir.max(cat[i] + shift[i[axis]], tir.const(0.0, "float32")), name="relu")
    func = te.lower(impl.schedule(AxisAttrs(axis), [out], "llvm"), phs + [shift, out], "kernel")
    result = nd.empty(tuple(int(d.value) for d in out.shape), "float32")
    build(func)["kernel"](*[nd.array(a) for a in arrays], nd.array(shift_np), result)
    view = [1] * len(shapes[0])
    view[axis] = channels
    want = np.maximum(np.concatenate(arrays, axis) + shift_np.reshape(view), 0)
    return result.numpy(), want, tir.func_to_str(func), func


def _top_level_loops(func) -> list:
    body = func.body
    return list(body.seq) if isinstance(body, tir.SeqStmt) else [body]


@pytest.mark.parametrize("shapes,axis", [
    ([(1, 3, 5, 7), (1, 6, 5, 7), (1, 9, 5, 7)], 1),               # NCHW, odd channels, a 7-wide row
    ([(1, 2, 3, 5, 8), (1, 1, 3, 5, 8), (1, 3, 3, 5, 8)], 1),      # NCHW8c blocks 2 + 1 + 3
    ([(1, 5, 4, 24), (1, 3, 4, 24)], 1),                           # a row split into 8-lane vectors
    ([(1, 4, 2, 3, 19), (1, 1, 2, 3, 19)], 1),                     # a 19-wide row: left to LLVM
    ([(2, 3, 4), (2, 5, 4)], -2),                                  # negative axis, batch 2
    ([(2, 3, 2, 4), (2, 3, 3, 4), (2, 3, 2, 4)], 2),               # two axes before it
])
def test_matches_numpy_with_a_fused_epilogue_one_loop_per_input(shapes, axis):
    impls, out_type = _impl_names(shapes, axis)
    assert "concatenate.x86" in impls
    got, want, text, func = _lower_run(impls["concatenate.x86"], shapes, axis % len(shapes[0]), out_type)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert "select" not in text, text
    assert "parallel" not in text      # memory-bound: serial (see the strategy's docstring)
    assert _inputs_per_nest(func) == [f"x{k}" for k in range(len(shapes))], text


def _inputs_per_nest(func) -> list:
    """The input each top-level loop nest reads (below the loops over the axes before the
    concatenation axis); a nest reading several inputs shows as their names joined."""
    body = func.body
    while isinstance(body, tir.For):
        body = body.body
    nests = list(body.seq) if isinstance(body, tir.SeqStmt) else [body]
    names = []
    for nest in nests:
        read = sorted({n.buffer.name for n in tir.walk(nest)
                       if isinstance(n, tir.BufferLoad) and n.buffer.name.startswith("x")})
        names.append("+".join(read))
    return names


def test_nchw16c_input_is_one_loop_over_its_blocks_and_rows():
    """NCHW16c at batch 1 (DenseNet at opt_level 3): per input one loop over its blocks x rows
    (not a copy per channel group), the columns inside, the 16 lanes vectorized."""
    shapes = [(1, 4, 7, 7, 16), (1, 1, 7, 7, 16), (1, 2, 7, 7, 16)]
    impls, out_type = _impl_names(shapes, 1)
    got, want, text, func = _lower_run(impls["concatenate.x86"], shapes, 1, out_type)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    header = [line.strip() for line in text.splitlines() if line.strip().startswith("for ")]
    cols, lanes = "for i3 in range(0, 7):", "for i4 in vectorized(0, 16):"
    assert header == ["for i1.i2.fused in range(0, 28):", cols, lanes, "for i1.i2.fused in range(28, 7):", cols, lanes,
                      "for i1.i2.fused in range(35, 14):", cols, lanes], text
    # the row loops stay loops in the machine code (Stage.no_unroll): LLVM's copies of the
    # 7-column loop cost it twice the compile time and bought no run time (memory-bound)
    loops = [n for n in tir.walk(func.body) if isinstance(n, tir.For) and n.kind == "serial"]
    assert len(loops) == 6 and all(n.annotations.get("no_unroll") for n in loops), text


def test_nchw_input_is_one_loop_over_its_rows():
    """NCHW at batch 1 (DenseNet at opt_level 2): per input one loop over channels x rows,
    each iteration a whole row (here 14 wide: one vector)."""
    shapes = [(1, 5, 3, 14), (1, 2, 3, 14)]
    impls, out_type = _impl_names(shapes, 1)
    got, want, text, _ = _lower_run(impls["concatenate.x86"], shapes, 1, out_type)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    header = [line.strip() for line in text.splitlines() if line.strip().startswith("for ")]
    assert header == ["for i1.i2.fused in range(0, 15):", "for i3 in vectorized(0, 14):",
                      "for i1.i2.fused in range(15, 6):", "for i3 in vectorized(0, 14):"], text


def test_does_not_apply_on_the_last_axis_or_with_too_many_inputs():
    impls, _ = _impl_names([(2, 3), (2, 4)], 1)
    assert "concatenate.x86" not in impls
    many = [(1, 1, 2)] * (MAX_PIECES + 1)
    impls, _ = _impl_names(many, 1)
    assert "concatenate.x86" not in impls
    impls, _ = _impl_names(many[:MAX_PIECES], 1)
    assert "concatenate.x86" in impls


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_through_aot_on_both_backends(target):
    """The partitioned kernel through relay.build(executor="aot"): LLVM kernels and C kernels."""
    import relay_backend as relay
    shapes = [(1, 2, 5, 6, 8), (1, 1, 5, 6, 8), (1, 3, 5, 6, 8)]
    xs = [relay.var(f"x{k}", shape=s) for k, s in enumerate(shapes)]
    shift = relay.var("shift", shape=(1, 6, 1, 1, 8))
    func = relay.Function(xs + [shift], relay.nn.relu(relay.add(relay.concatenate(xs, axis=1), shift)))
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes + [(1, 6, 1, 1, 8)]]
    with relay.transform.PassContext(opt_level=3):
        factory = relay.build(relay.IRModule.from_expr(func), executor="aot",
                              target="llvm" if target == "llvm" else relay.aot.c_target_like("llvm"))
    module = relay.aot.AotModule(factory["default"](relay.cpu(0)))
    for name, array in zip([f"x{k}" for k in range(3)] + ["shift"], arrays):
        module.set_input(name, array)
    module.run()
    want = np.maximum(np.concatenate(arrays[:3], 1) + arrays[3], 0)
    np.testing.assert_allclose(module.get_output(0).numpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("blocked", [False, True])
def test_densenet_sized_concatenations_through_build(blocked):
    """DenseNet-121's largest concatenations (14x14: 256 + 24 x 32 channels, 25 inputs; 7x7:
    512 + 16 x 32, 17 inputs) with the fused batch norm and relu, built by relay.build at the
    layout each opt_level gives them (NCHW with scale and shift; NCHW16c with a shift) and run
    by the graph executor, against numpy."""
    import relay_backend as relay
    rng = np.random.default_rng(3)
    for size, first, growth in ((14, 256, 24), (7, 512, 16)):
        arrays = [rng.standard_normal((1, first, size, size)).astype("float32")] + \
                 [rng.standard_normal((1, 32, size, size)).astype("float32") for _ in range(growth)]
        channels = first + 32 * growth
        scale = rng.uniform(0.5, 1.5, channels).astype("float32")
        shift = rng.standard_normal(channels).astype("float32")
        want = np.maximum(np.concatenate(arrays, 1) * scale.reshape(1, -1, 1, 1) + shift.reshape(1, -1, 1, 1), 0)
        if blocked:
            def block(a):
                return a.reshape(1, a.shape[1] // 16, 16, *a.shape[2:]).transpose(0, 1, 3, 4, 2).copy()
            arrays, want = [block(a) for a in arrays], block(want)
            xs = [relay.var(f"x{k}", shape=a.shape) for k, a in enumerate(arrays)]
            scale_c, shift_c = (relay.const(block(v.reshape(1, -1, 1, 1))) for v in (scale, shift))
        else:
            xs = [relay.var(f"x{k}", shape=a.shape) for k, a in enumerate(arrays)]
            scale_c, shift_c = (relay.const(v.reshape(-1, 1, 1)) for v in (scale, shift))
        body = relay.nn.relu(relay.add(relay.multiply(relay.concatenate(xs, axis=1), scale_c), shift_c))
        with relay.transform.PassContext(opt_level=2):
            lib = relay.build(relay.IRModule.from_expr(relay.Function(xs, body)), target="llvm")
        module = lib["default"](relay.cpu(0))
        for k, a in enumerate(arrays):
            module.set_input(f"x{k}", a)
        module.run()
        np.testing.assert_allclose(module.get_output(0).numpy(), want, rtol=1e-5, atol=1e-5)
