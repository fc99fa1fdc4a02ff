"""te computes of the elementwise/broadcast (op/tensor.py), creation (op/creation.py) and
reduction (op/reduce.py) ops, checked against each op's numpy reference on every sample.

Each compute is lowered with an unscheduled te.create_schedule and run two ways: the tir
interpreter (the kernel-level oracle) and LLVM (marked `compile`). Tolerances: float16 2e-3,
float32 1e-5, float64 1e-10 (rel and abs); ints and bools exact.
"""
import numpy as np
import pytest

from relay_backend import codegen, te, tir
from relay_backend.ir.types import Any, TensorType
from relay_backend.op import list_ops
from relay_backend.runtime import nd

from .sample_cases import sample_params

AREA = ("relay_backend.op.tensor", "relay_backend.op.creation", "relay_backend.op.reduce")
TOLERANCE = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-10}
INTERP_MAX_ELEMENTS = 4096   # the Python interpreter is slow; bigger samples run on LLVM only


def _area_ops():
    """Ops declared in the files this test covers (their numpy reference lives there)."""
    return [op for op in list_ops() if op.ref.__module__ in AREA]


def _cases(compiled=False):
    return sample_params(_area_ops(), compiled=compiled)


def _lower(op, sample, name="kernel"):
    """(PrimFunc, output te tensors) of op's compute on placeholders shaped like the sample."""
    inputs = [np.asarray(x) for x in sample.inputs]
    placeholders = [te.placeholder(x.shape, str(x.dtype), name=f"in{k}") for k, x in enumerate(inputs)]
    out_type = op.rel([TensorType(x.shape, str(x.dtype)) for x in inputs], sample.attrs)
    outs = op.compute(sample.attrs, placeholders, out_type)
    assert isinstance(outs, list) and len(outs) == 1, f"{op.name}: compute must return [tensor]"
    assert outs[0].dtype == out_type.dtype, f"{op.name}: {outs[0].dtype} vs {out_type.dtype}"
    func = te.lower(te.create_schedule(outs), placeholders + outs, name)
    return func, outs


def _assert_close(actual, expected, what):
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    if expected.dtype.kind == "f":
        tol = TOLERANCE[str(expected.dtype)]
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def _reference(op, sample):
    return np.asarray(op.ref(*sample.inputs, sample.attrs))


def test_every_op_in_area_has_a_compute():
    ops = _area_ops()
    assert len(ops) >= 50, f"expected the tensor/creation/reduce ops, found {[o.name for o in ops]}"
    missing = [op.name for op in ops if op.compute is None]
    assert not missing, f"ops without a te compute: {missing}"


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_compute_interpreted_matches_reference(op, sample):
    expected = _reference(op, sample)
    if expected.size > INTERP_MAX_ELEMENTS:
        pytest.skip("too big for the tir interpreter (LLVM covers it)")
    func, _ = _lower(op, sample)
    out = np.empty(expected.shape, expected.dtype)
    tir.interp.run(func, *[np.array(x, order="C") for x in sample.inputs], out)
    _assert_close(out, expected, f"{op.name} on the tir interpreter")


@pytest.mark.compile
@pytest.mark.parametrize("op,sample", _cases(compiled=True))
def test_compute_llvm_matches_reference(op, sample):
    expected = _reference(op, sample)
    func, _ = _lower(op, sample)
    mod = codegen.build(func)
    out = nd.empty(expected.shape, str(expected.dtype))
    mod["kernel"](*[nd.array(np.array(x, order="C")) for x in sample.inputs], out)
    _assert_close(out.numpy(), expected, f"{op.name} on llvm")


def test_tags_follow_the_op_pattern():
    rng = np.random.default_rng(0)
    for name, tag in (("exp", "elemwise"), ("add", "broadcast"), ("sum", "comm_reduce"),
                      ("argmax", "comm_reduce"), ("zeros", "elemwise")):
        op = next(o for o in list_ops() if o.name == name)
        _, outs = _lower(op, op.samples(rng)[1])
        assert outs[0].op.tag == tag


# --- edge semantics the samples may not reach ------------------------------------------------------
def _run_llvm(op, inputs, attrs=None):
    from relay_backend.op.registry import Sample
    sample = Sample(inputs, attrs)
    func, _ = _lower(op, sample)
    expected = _reference(op, sample)
    out = nd.empty(expected.shape, str(expected.dtype))
    codegen.build(func)["kernel"](*[nd.array(x) for x in inputs], out)
    return out.numpy(), expected


def _op(name):
    return next(o for o in list_ops() if o.name == name)


@pytest.mark.compile
def test_edge_semantics_match_numpy():
    from relay_backend.op.reduce import ArgReduceAttrs
    from relay_backend.op.tensor import CastAttrs, ClipAttrs
    ints = np.array([-7, -6, -1, 0, 5, 7], "int32")
    divisors = np.array([2, -4, 3, -3, -2, 7], "int32")
    floats = np.array([-7.5, 6.0, 1.0, -5.5, np.nan, 3.0], "float32")
    fdiv = np.array([2.0, -4.0, 0.1, -2.5, 1.0, 0.0], "float32")
    cases = [
        ("divide", [ints, divisors], None),                 # truncates toward zero
        ("floor_divide", [ints, divisors], None),
        ("floor_mod", [ints, divisors], None),
        ("floor_divide", [floats, fdiv], None),             # 1 // 0.1 is 9, x / 0, NaN
        ("floor_mod", [floats[:5], fdiv[:5]], None),
        ("round", [np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], "float32")], None),  # half to even
        ("sign", [floats], None),
        ("nn.relu", [np.array([-3, 0, 4], "int8")], None),
        ("cast", [np.array([0.0, -0.0, 0.5, np.nan], "float32")], CastAttrs("bool")),
        ("clip", [np.array([-9, -3, -2, 0, 1, 2, 9], "int32")], ClipAttrs(-2.5, 1.7)),
        ("argmax", [np.array([[1.0, np.nan, 3.0, np.nan], [-np.inf] * 4], "float32")],
         ArgReduceAttrs(axis=1)),
        ("argmin", [np.array([[2, 1, 1, 3], [0, 0, 0, 0]], "int32")], ArgReduceAttrs(axis=1)),
        ("argmin", [np.array([[2, 1, 1, 3], [0, 0, 0, 0]], "int32")],
         ArgReduceAttrs(axis=1, select_last_index=True)),
    ]
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, inputs, attrs in cases:
            got, expected = _run_llvm(_op(name), inputs, attrs)
            np.testing.assert_array_equal(got, expected, err_msg=f"{name} {inputs}")


def test_integer_division_guards_on_the_tir_interpreter():
    """x / 0, x // 0 and x % 0 are 0 and x // -1 is -x in the compute itself (the tir interpreter
    runs only the taken side of a select, so an unguarded divide would raise ZeroDivisionError);
    INT_MIN / -1 and the native SIGFPE are covered in test_tensor_ops.py, in a subprocess."""
    from relay_backend.op.registry import Sample
    a = np.array([7, -7, 0, 5, -5, 9, -9, 4], "int32")
    b = np.array([0, 0, 0, -1, -1, 2, -2, -3], "int32")
    for name in ("divide", "floor_divide", "floor_mod"):
        for dtype in ("int32", "int64", "int8"):
            sample = Sample([a.astype(dtype), b.astype(dtype)])
            with np.errstate(divide="ignore"):
                expected = _reference(_op(name), sample)
            func, _ = _lower(_op(name), sample)
            out = np.empty(expected.shape, expected.dtype)
            tir.interp.run(func, *sample.inputs, out)
            _assert_close(out, expected, f"{name} {dtype} on the tir interpreter")
    ua, ub = np.array([7, 0, 255, 9], "uint8"), np.array([0, 0, 255, 4], "uint8")
    for name in ("divide", "floor_divide", "floor_mod"):
        sample = Sample([ua, ub])
        expected = _reference(_op(name), sample)
        func, _ = _lower(_op(name), sample)
        out = np.empty(expected.shape, expected.dtype)
        tir.interp.run(func, ua, ub, out)
        _assert_close(out, expected, f"{name} uint8 on the tir interpreter")


# --- symbolic dims: one compute, two run-time sizes ---------------------------------------------
def _symbolic_case(op, make_inputs, attrs, sym_shapes):
    """Lower op over placeholders with te.var dims (Any in the types); run at n = 3 and n = 8."""
    n = te.var("n")
    dims = lambda shape: tuple(n if d == "n" else d for d in shape)  # noqa: E731
    any_dims = lambda shape: tuple(Any() if d == "n" else d for d in shape)  # noqa: E731
    phs = [te.placeholder(dims(s), dt, name=f"in{k}") for k, (s, dt) in enumerate(sym_shapes)]
    out_type = op.rel([TensorType(any_dims(s), dt) for s, dt in sym_shapes], attrs)
    outs = op.compute(attrs, phs, out_type)
    mod = codegen.build(te.lower(te.create_schedule(outs), phs + outs, "kernel"))
    for size in (3, 8):
        inputs = make_inputs(size)
        expected = np.asarray(op.ref(*inputs, attrs))
        out = nd.empty(expected.shape, str(expected.dtype))
        mod["kernel"](*[nd.array(x) for x in inputs], out)
        _assert_close(out.numpy(), expected, f"{op.name} with n={size}")


@pytest.mark.compile
def test_symbolic_dims_unary_binary_where():
    rng = np.random.default_rng(1)
    _symbolic_case(_op("tanh"), lambda k: [rng.uniform(-3, 3, (k, 4)).astype("float32")], None,
                   [(("n", 4), "float32")])
    _symbolic_case(_op("add"), lambda k: [rng.uniform(-3, 3, (k, 1)).astype("float32"),
                                          rng.uniform(-3, 3, (5,)).astype("float32")], None,
                   [(("n", 1), "float32"), ((5,), "float32")])
    _symbolic_case(_op("where"), lambda k: [rng.random((k,)) < 0.5, rng.integers(0, 9, (k,), "int32"),
                                            np.array(-1, "int32")], None,
                   [(("n",), "bool"), (("n",), "int32"), ((), "int32")])


@pytest.mark.compile
def test_symbolic_dims_reductions():
    from relay_backend.op.reduce import ArgReduceAttrs, ReduceAttrs, VarianceAttrs
    rng = np.random.default_rng(2)
    data = lambda k: [rng.uniform(-2, 2, (k, 3)).astype("float32")]  # noqa: E731
    _symbolic_case(_op("mean"), data, ReduceAttrs(axis=0), [(("n", 3), "float32")])
    _symbolic_case(_op("sum"), data, ReduceAttrs(axis=1, keepdims=True), [(("n", 3), "float32")])
    _symbolic_case(_op("argmax"), data, ArgReduceAttrs(axis=0), [(("n", 3), "float32")])

    def var_inputs(k):
        x = rng.uniform(-2, 2, (k, 3)).astype("float32")
        return [x, x.mean(axis=0, keepdims=True)]
    _symbolic_case(_op("variance"), var_inputs, VarianceAttrs(axis=0, unbiased=True),
                   [(("n", 3), "float32"), ((1, 3), "float32")])
