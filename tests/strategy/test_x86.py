"""x86 implementations (strategy/x86*.py): every sample of each op through the x86 compute and
schedule, lowered, compiled with LLVM and run, against the op's numpy reference; plus fused
epilogues (bias add + relu after dense/conv2d) through the same schedule functions, and the
selection rules (plevels, the batch-1 specialization)."""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.codegen import build
from relay_backend.ir.types import TensorType
from relay_backend.op.registry import get as get_op
from relay_backend.runtime import nd
from relay_backend.strategy import op_strategy, x86_dense

pytestmark = pytest.mark.compile

TOL = {"float64": 1e-10, "float32": 1e-4, "float16": 2e-2, "int32": 0, "int8": 0}


def _types(arrays):
    return [TensorType(a.shape, str(a.dtype)) for a in arrays]


def _build_run(compute, schedule, attrs, arrays, out_type, epilogue=None):
    """Placeholders -> compute (+ optional te epilogue on the first output) -> schedule ->
    te.lower -> codegen.build -> run; returns the first output as numpy."""
    phs = [te.placeholder(a.shape, str(a.dtype), name=f"in{k}") for k, a in enumerate(arrays)]
    outs = compute(attrs, phs, out_type)
    extra = []
    if epilogue is not None:
        outs, extra = epilogue(outs[0])
    sch = schedule(attrs, outs, "llvm")
    func = te.lower(sch, phs + extra[0::2] + list(outs), "kernel")
    mod = build(func)
    result = [nd.empty(tuple(int(d.value) for d in t.shape), t.dtype) for t in outs]
    mod["kernel"](*[nd.array(a) for a in arrays], *[nd.array(x) for x in extra[1::2]], *result)
    return result[0].numpy()


def _check(got, want):
    want = np.asarray(want)
    assert got.shape == want.shape and str(got.dtype) == str(want.dtype)
    tol = TOL.get(str(want.dtype), 1e-4)
    scale = max(1.0, float(np.abs(want.astype("float64")).max(initial=0)))
    np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=tol, atol=tol * scale)


def _impls(op_name, arrays, attrs):
    op = get_op(op_name)
    out_type = op.rel(_types(arrays), attrs)
    phs = [te.placeholder(a.shape, str(a.dtype)) for a in arrays]
    strategy = op_strategy(op, attrs, phs, out_type, "llvm")
    impls = [impl for spec in strategy.specializations for impl in spec.implementations
             if impl.name.endswith(".x86")
             and (spec.condition is None or spec.condition(attrs, phs, out_type))]
    return op, out_type, impls


X86_OPS = ["nn.dense", "nn.batch_matmul", "nn.conv2d", "nn.max_pool2d", "nn.avg_pool2d", "layout_transform",
           "nn.global_max_pool2d", "nn.global_avg_pool2d"]


@pytest.mark.parametrize("op_name", X86_OPS)
def test_every_sample_matches_reference(op_name):
    op = get_op(op_name)
    ran = 0
    for sample in op.samples(np.random.default_rng(0)):
        arrays = list(sample.inputs)
        op_, out_type, impls = _impls(op_name, arrays, sample.attrs)
        want = op.ref(*arrays, sample.attrs)
        for impl in impls:
            got = _build_run(impl.compute, impl.schedule, sample.attrs, arrays, out_type)
            _check(got, want)
            ran += 1
    assert ran > 0, f"no x86 implementation of {op_name} ran on its samples"


def _bias_relu(channel_axis, bias_array):
    """Epilogue out -> relu(out + bias[channel]) as te stages (what FuseOps hands the schedule)."""
    def epilogue(out):
        bias = te.placeholder(bias_array.shape, str(bias_array.dtype), name="bias")
        added = te.compute(out.shape, lambda *i: out[i] + bias[i[channel_axis]], name="bias_add")
        relu = te.compute(out.shape, lambda *i: tir.max(added[i], tir.const(0.0, out.dtype)), name="relu")
        return [relu], [bias, bias_array]
    return epilogue


def _run_impl(op_name, impl_name, arrays, attrs, epilogue=None):
    op, out_type, impls = _impls(op_name, arrays, attrs)
    impl = next(i for i in impls if i.name == impl_name)
    return _build_run(impl.compute, impl.schedule, attrs, arrays, out_type, epilogue)


@pytest.mark.parametrize("m,n,k", [(37, 40, 64), (64, 96, 128), (8, 32, 37), (1, 50, 100), (3, 16, 7)])
def test_dense_tiles_and_fused_bias_relu(m, n, k):
    from relay_backend.op.nn.dense import DenseAttrs
    rng = np.random.default_rng(m + n + k)
    x = rng.standard_normal((m, k)).astype("float32")
    w = rng.standard_normal((n, k)).astype("float32")
    b = rng.standard_normal(n).astype("float32")
    plain = x.astype("float64") @ w.T.astype("float64")
    names = ["dense_pack.x86"] + (["dense_batch1.x86"] if m == 1 else [])
    names += ["dense_dot.x86"] if m % 4 == 0 and n % 4 == 0 and n >= 16 else []
    for name in names:
        _check(_run_impl("nn.dense", name, [x, w], DenseAttrs()), plain.astype("float32"))
        fused = _run_impl("nn.dense", name, [x, w], DenseAttrs(), _bias_relu(-1, b))
        _check(fused, np.maximum(plain + b, 0).astype("float32"))


def test_dense_dot_with_two_fused_outputs():
    """dense_dot.x86 when the fused function returns both the product and relu(product + b)."""
    from relay_backend.op.nn.dense import DenseAttrs
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((8, 40)).astype("float32"), rng.standard_normal((32, 40)).astype("float32")
    b = rng.standard_normal(32).astype("float32")
    phs = [te.placeholder(x.shape, name="x"), te.placeholder(w.shape, name="w"), te.placeholder(b.shape, name="b")]
    (dense,) = x86_dense.dense_dot_compute(DenseAttrs(), phs[:2], TensorType((8, 32), "float32"))
    relu = te.compute(dense.shape, lambda i, j: tir.max(dense[i, j] + phs[2][j], tir.const(0.0, "float32")))
    sch = x86_dense.dense_dot_schedule(DenseAttrs(), [dense, relu], "llvm")
    mod = build(te.lower(sch, phs + [dense, relu], "kernel"))
    outs = [nd.empty((8, 32), "float32"), nd.empty((8, 32), "float32")]
    mod["kernel"](nd.array(x), nd.array(w), nd.array(b), *outs)
    plain = x.astype("float64") @ w.T.astype("float64")
    _check(outs[0].numpy(), plain.astype("float32"))
    _check(outs[1].numpy(), np.maximum(plain + b, 0).astype("float32"))


@pytest.mark.parametrize("shape,oc,kernel,strides,padding", [
    ((1, 8, 14, 14), 16, 3, (1, 1), (1, 1)),
    ((2, 5, 11, 9), 20, 3, (2, 2), (1, 0, 2, 1)),
    ((1, 16, 7, 7), 32, 1, (1, 1), (0, 0)),
])
def test_conv2d_tiles_and_fused_bias_relu(shape, oc, kernel, strides, padding):
    from relay_backend.op.nn.conv import Conv2DAttrs
    rng = np.random.default_rng(oc)
    x = rng.standard_normal(shape).astype("float32")
    w = rng.standard_normal((oc, shape[1], kernel, kernel)).astype("float32")
    b = rng.standard_normal(oc).astype("float32")
    attrs = Conv2DAttrs(strides=strides, padding=padding)
    want = get_op("nn.conv2d").ref(x.astype("float64"), w.astype("float64"), attrs)
    _check(_run_impl("nn.conv2d", "conv2d_nchw.x86", [x, w], attrs), want.astype("float32"))
    fused = _run_impl("nn.conv2d", "conv2d_nchw.x86", [x, w], attrs, _bias_relu(1, b))
    _check(fused, np.maximum(want + b[:, None, None], 0).astype("float32"))


def test_pool_fused_epilogue():
    from relay_backend.op.nn.pool import AvgPool2DAttrs
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 12, 20)).astype("float32")
    b = rng.standard_normal(3).astype("float32")
    attrs = AvgPool2DAttrs(pool_size=3, strides=1, padding=1)
    want = get_op("nn.avg_pool2d").ref(x, attrs)
    got = _run_impl("nn.avg_pool2d", "avg_pool2d.x86", [x], attrs, _bias_relu(1, b))
    _check(got, np.maximum(want + b[:, None, None], 0))


@pytest.mark.parametrize("layout,shape", [("NCHW", (1, 3, 15, 21)), ("NCHW16c", (1, 2, 13, 13, 16))])
def test_max_pool_propagates_nan(layout, shape):
    """max_pool2d.x86 (SqueezeNet's 3x3 stride-2 windows, plain and channel-blocked, the blocked
    one vectorized over the channel lanes) gives NaN for every window holding a NaN, and the
    reference's maximum elsewhere, including -0.0 / +0.0 ties."""
    from relay_backend.op.nn.pool import MaxPool2DAttrs
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype("float32")
    x[rng.random(shape) < 0.02] = np.nan
    x[rng.random(shape) < 0.05] = -0.0
    x[rng.random(shape) < 0.05] = 0.0
    attrs = MaxPool2DAttrs(pool_size=3, strides=2, padding=0, layout=layout, ceil_mode=True)
    want = get_op("nn.max_pool2d").ref(x, attrs)
    got = _run_impl("nn.max_pool2d", "max_pool2d.x86", [x], attrs)
    assert np.isnan(want).any() and not np.isnan(want).all()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)], want[~np.isnan(want)])


def test_selection_prefers_x86_and_batch1():
    from relay_backend.op.nn.dense import DenseAttrs
    from relay_backend.te_compiler.select import select_implementation
    op = get_op("nn.dense")
    for rows, expected in ((1, "dense_batch1.x86"), (8, "dense_dot.x86"), (512, "dense_pack.x86")):
        data, weight = te.placeholder((rows, 32)), te.placeholder((64, 32))
        out_type = op.rel([TensorType((rows, 32), "float32"), TensorType((64, 32), "float32")], DenseAttrs())
        impl, _ = select_implementation(op, DenseAttrs(), [data, weight], out_type, "llvm")
        assert impl.name == expected and impl.plevel > 10


def test_dense_schedule_is_parallel_register_blocked_and_vectorized():
    from relay_backend.op.nn.dense import DenseAttrs
    data, weight = te.placeholder((256, 128), name="A"), te.placeholder((256, 128), name="W")
    out_type = TensorType((256, 256), "float32")
    outs = x86_dense.dense_pack_compute(DenseAttrs(), [data, weight], out_type)
    func = te.lower(x86_dense.dense_pack_schedule(DenseAttrs(), outs, "llvm"), [data, weight] + outs, "d")
    text = str(func)
    assert "parallel(" in text and "vectorized(" in text and "unrolled(" in text
    assert "scope='local'" in text, "no register-tile accumulator"


def test_lazy_select_does_not_load_outside_the_input():
    """te.if_then_else around a load (a padded read) compiles to a branch: the load at index -1
    never runs, and the border values are the fill."""
    x = te.placeholder((64,), name="x")
    y = te.compute((66,), lambda i: te.if_then_else(tir.all(i >= 1, i < 65), x[i - 1], tir.const(-5.0, "float32")),
                   name="y")
    s = te.create_schedule([y])
    mod = build(te.lower(s, [x, y], "padk"))
    assert "sel_then" in mod.get_source("ll") or "select" not in mod.get_source("ll")
    xs = np.arange(64, dtype="float32")
    out = nd.empty((66,), "float32")
    mod["padk"](nd.array(xs), out)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([[-5.0], xs, [-5.0]]).astype("float32"))


def test_depthwise_conv2d_rows_and_fused_bias_relu():
    from relay_backend.op.nn.conv import Conv2DAttrs
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 32, 20, 20)).astype("float32")
    w = rng.standard_normal((32, 1, 3, 3)).astype("float32")
    b = rng.standard_normal(32).astype("float32")
    attrs = Conv2DAttrs(padding=(1, 1), groups=32)
    want = get_op("nn.conv2d").ref(x.astype("float64"), w.astype("float64"), attrs)
    got = _run_impl("nn.conv2d", "depthwise_conv2d_nchw.x86", [x, w], attrs, _bias_relu(1, b))
    _check(got, np.maximum(want + b[:, None, None], 0).astype("float32"))


def test_zero_size_dense_falls_back_to_generic():
    """A zero extent fails the x86 specializations' condition, so the generic dense is chosen,
    and mlp(batch_size=0) compiles on every compiled executor and matches the interpreter."""
    import relay_backend as relay
    from relay_backend.op.nn.dense import DenseAttrs
    from relay_backend.te_compiler.select import select_implementation
    from relay_backend.testing import mlp
    op = get_op("nn.dense")
    for dshape, wshape in (((0, 32), (64, 32)), ((1, 0), (64, 0)), ((8, 32), (0, 32))):
        data, weight = te.placeholder(dshape), te.placeholder(wshape)
        out_type = op.rel([TensorType(dshape, "float32"), TensorType(wshape, "float32")], DenseAttrs())
        impl, _ = select_implementation(op, DenseAttrs(), [data, weight], out_type, "llvm")
        assert not impl.name.endswith(".x86"), (dshape, wshape, impl.name)
    mod, params = mlp.get_workload(batch_size=0)
    x = np.zeros((0, 1, 28, 28), "float32")
    want = relay.create_executor("debug", mod=mod, params=params).evaluate()(x).numpy()
    assert want.shape == (0, 10)
    for kind in ("graph", "vm", "aot"):
        got = relay.create_executor(kind, mod=mod, params=params).evaluate()(x).numpy()
        assert got.shape == want.shape, kind


def _symbolic_vm_run(mod, args):
    import relay_backend as relay
    return relay.create_executor("vm", mod=mod).evaluate()(*args).numpy()


def test_x86_dense_and_conv2d_serve_symbolic_sizes():
    """A symbolic batch (dense) and symbolic H/W (conv2d) select the same x86 schedules as static
    shapes, compiled once over the size variables; results match numpy at several sizes,
    including ones that leave partial row / width blocks."""
    import relay_backend as relay
    from relay_backend.te_compiler.lower import lower_to_te
    n, h, w = te.size_var("n"), te.size_var("h"), te.size_var("w")
    x, wt = relay.var("x", shape=(n, 24)), relay.var("wt", shape=(20, 24))
    xc, kc = relay.var("xc", shape=(n, 8, h, w)), relay.var("kc", shape=(16, 8, 3, 3))
    dense = relay.nn.relu(relay.nn.dense(x, wt))
    conv = relay.nn.conv2d(xc, kc, padding=(1, 1), strides=(1, 2))
    for params, body, chosen in (([x, wt], dense, ("nn.dense", "dense_pack.x86")),
                                 ([xc, kc], conv, ("nn.conv2d", "conv2d_nchw.x86"))):
        prim = relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function(params, body).with_attr("Primitive", 1)))["main"]
        assert chosen in lower_to_te(prim, "llvm").implementations
    rng = np.random.default_rng(5)
    wv = rng.standard_normal((20, 24)).astype("float32")
    dense_mod = relay.IRModule.from_expr(relay.Function([x, wt], dense))
    for batch in (1, 5, 8, 19):
        xv = rng.standard_normal((batch, 24)).astype("float32")
        _check(_symbolic_vm_run(dense_mod, (xv, wv)), np.maximum(xv @ wv.T, 0))
    kv = rng.standard_normal((16, 8, 3, 3)).astype("float32")
    conv_mod = relay.IRModule.from_expr(relay.Function([xc, kc], conv))
    for shape in ((1, 8, 5, 7), (2, 8, 9, 20), (1, 8, 1, 1)):
        xv = rng.standard_normal(shape).astype("float32")
        want = get_op("nn.conv2d").ref(xv, kv, get_op("nn.conv2d").attrs_type(padding=(1, 1), strides=(1, 2)))
        _check(_symbolic_vm_run(conv_mod, (xv, kv)), want)
