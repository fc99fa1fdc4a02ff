"""te computes of the nn operators (relay_backend/op/nn/) against their numpy references.

For every nn op and every registered sample: placeholders of the sample's shapes, the op's
compute, a default schedule (no scheduling), te.lower, then the PrimFunc is run by the tir
interpreter (the kernel-level oracle; skipped for samples too big for it) and compiled with
LLVM (each op's first sample in the default suite, the rest under -m slow). Both must match op.ref within: float32 1e-5 rel/abs (transcendental ops 2e-6 rel, 1e-5
abs), float16 2e-3, float64 1e-10, integers exactly. A few symbolic-shape computes (te.var
dims) are compiled once and run at two sizes.
"""
import numpy as np
import pytest

from relay_backend import codegen, te, tir
from relay_backend.ir.types import TensorType, TupleType
from relay_backend.op import registry
from relay_backend.runtime import nd

import relay_backend.op.nn  # noqa: F401  (registers the nn ops)

from .sample_cases import sample_params

NN_OPS = [op for op in registry.list_ops() if op.ref.__module__.startswith("relay_backend.op.nn")]
TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float16": dict(rtol=2e-3, atol=2e-3),
       "float64": dict(rtol=1e-10, atol=1e-10)}
INTERP_BUDGET = 60_000        # loop iterations the Python tir interpreter may spend on one sample


CASES = sample_params(NN_OPS)
COMPILED_CASES = sample_params(NN_OPS, compiled=True)


def _out_types(out_type):
    return list(out_type.fields) if isinstance(out_type, TupleType) else [out_type]


def _lowered(op, sample, name="kernel"):
    """(PrimFunc, output TensorTypes, the compute's output tensors) for one sample."""
    arg_types = [TensorType(x.shape, str(x.dtype)) for x in sample.inputs]
    out_type = op.rel(arg_types, sample.attrs)
    holders = [te.placeholder(x.shape, str(x.dtype), name=f"in{k}") for k, x in enumerate(sample.inputs)]
    outs = op.compute(sample.attrs, holders, out_type)
    assert isinstance(outs, list) and len(outs) == len(_out_types(out_type))
    func = te.lower(te.create_schedule(outs), holders + outs, name)
    return func, _out_types(out_type), outs


def _work(outs) -> int:
    """Loop iterations of a default schedule: every stage's output size times its reduction."""
    total, seen, stack = 0, set(), [t.op for t in outs]
    while stack:
        op = stack.pop()
        if id(op) in seen or not isinstance(op, te.ComputeOp):
            continue
        seen.add(id(op))
        size = 1
        for iv in list(op.axis) + list(op.reduce_axis):
            size *= tir.simplify(iv.dom.extent).value
        total += size
        stack.extend(t.op for t in op.input_tensors())
    return total


def _expected(op, sample):
    ref = op.ref(*sample.inputs, sample.attrs)
    return list(ref) if isinstance(ref, tuple) else [ref]


def _check(got, want, dtype, op):
    assert got.shape == want.shape and str(got.dtype) == str(want.dtype) == dtype
    if dtype in TOL:
        tol = dict(TOL[dtype])
        if dtype == "float32" and op.name in ("nn.softmax", "nn.log_softmax", "nn.lrn", "nn.layer_norm",
                                              "nn.batch_norm"):
            tol["rtol"] = 2e-6 if op.name != "nn.lrn" else 1e-5
        np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), **tol,
                                   err_msg=f"{op.name} ({dtype})")
    else:
        np.testing.assert_array_equal(got, want, err_msg=f"{op.name} ({dtype})")


def test_every_nn_op_has_a_compute():
    missing = [op.name for op in NN_OPS if op.compute is None]
    assert len(NN_OPS) >= 20
    assert not missing, f"nn ops without a te compute: {missing}"


@pytest.mark.parametrize("op,sample", CASES)
def test_compute_tir_interpreter(op, sample):
    func, types, outs = _lowered(op, sample)
    if _work(outs) > INTERP_BUDGET:
        pytest.skip("too big for the Python tir interpreter (run through LLVM only)")
    results = [np.full([int(d) for d in t.shape], 7, t.dtype) for t in types]
    tir.interp.run(func, *sample.inputs, *results)
    for got, want, t in zip(results, _expected(op, sample), types):
        _check(got, want, t.dtype, op)


@pytest.mark.compile
@pytest.mark.parametrize("op,sample", COMPILED_CASES)
def test_compute_llvm(op, sample):
    func, types, _ = _lowered(op, sample, "kernel")
    mod = codegen.build(func)
    args = [nd.array(np.array(x, order="C")) for x in sample.inputs]
    results = [nd.array(np.full([int(d) for d in t.shape], 7, t.dtype)) for t in types]
    mod["kernel"](*args, *results)
    for got, want, t in zip(results, _expected(op, sample), types):
        _check(got.numpy(), want, t.dtype, op)


def test_larger_conv2d_llvm_only():
    """1x3x32x32 -> 16 channels, strided and padded: too slow for the interpreter, so LLVM only."""
    from relay_backend.op.nn.conv import Conv2DAttrs
    rng = np.random.default_rng(1)
    sample = registry.Sample([rng.uniform(-1, 1, (1, 3, 32, 32)).astype("float32"),
                              rng.uniform(-1, 1, (16, 3, 3, 3)).astype("float32")],
                             Conv2DAttrs(strides=2, padding=1))
    op = registry.get("nn.conv2d")
    _, _, outs = _lowered(op, sample)
    assert _work(outs) > INTERP_BUDGET
    test_compute_llvm(op, sample)


# --- symbolic shapes: one kernel, compiled once, run at two sizes -----------------------------------
def _symbolic(name, attrs, shapes, dtypes="float32", sizes=(3, 9)):
    return pytest.param(name, attrs, shapes, dtypes, sizes, id=name)


def _symbolic_cases():
    def attrs(name, **kw):
        return registry.get(name).attrs_type(**kw)
    pool = dict(pool_size=3, strides=2, padding=1, ceil_mode=True)
    return [
        _symbolic("nn.dense", attrs("nn.dense"), [("n", 8), (4, 8)]),
        _symbolic("nn.batch_matmul", attrs("nn.batch_matmul"), [("n", 3, 5), (1, 4, 5)]),
        _symbolic("nn.conv2d", attrs("nn.conv2d", strides=2, padding=1, groups=2),
                  [(1, 4, "n", 6), (4, 2, 3, 3)], sizes=(5, 8)),
        _symbolic("nn.max_pool2d", attrs("nn.max_pool2d", **pool), [(1, 2, "n", 5)], sizes=(6, 9)),
        _symbolic("nn.avg_pool2d", attrs("nn.avg_pool2d", **pool), [(1, 2, 5, "n")], sizes=(6, 9)),
        _symbolic("nn.adaptive_avg_pool2d", attrs("nn.adaptive_avg_pool2d", output_size=(3, 2)),
                  [(1, 2, "n", 5)], sizes=(4, 11)),
        _symbolic("nn.softmax", attrs("nn.softmax", axis=-1), [(2, "n")]),
        _symbolic("nn.layer_norm", attrs("nn.layer_norm"), [("n", 6), (6,), (6,)]),
        _symbolic("nn.bias_add", attrs("nn.bias_add", axis=1), [("n", 3), (3,)]),
        _symbolic("nn.pad", attrs("nn.pad", pad_width=((1, 2), (2, 1)), pad_mode="reflect"), [("n", 4), ()]),
        _symbolic("nn.batch_flatten", None, [(2, "n", 3)]),
    ]


@pytest.mark.compile
@pytest.mark.parametrize("name,attrs,shapes,dtype,sizes", _symbolic_cases())
def test_symbolic_dim_two_sizes(name, attrs, shapes, dtype, sizes):
    from relay_backend.ir.types import Any
    op = registry.get(name)
    n = te.var("n")
    arg_types = [TensorType([Any() if d == "n" else d for d in s], dtype) for s in shapes]
    out_type = op.rel(arg_types, attrs)
    holders = [te.placeholder([n if d == "n" else d for d in s], dtype, name=f"in{k}")
               for k, s in enumerate(shapes)]
    outs = op.compute(attrs, holders, out_type)
    mod = codegen.build(te.lower(te.create_schedule(outs), holders + outs, "kernel"))
    rng = np.random.default_rng(2)
    for size in sizes:
        inputs = [rng.uniform(-2, 2, [size if d == "n" else d for d in s]).astype(dtype) for s in shapes]
        want = _expected(op, registry.Sample(inputs, attrs))
        results = [nd.array(np.full(w.shape, 7, w.dtype)) for w in want]
        mod["kernel"](*[nd.array(x) for x in inputs], *results)
        for got, w in zip(results, want):
            _check(got.numpy(), w, dtype, op)
