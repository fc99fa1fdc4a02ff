"""te computes of the shape and indexing ops (op/transform.py, op/reshape.py, op/indexing.py).

For every op declared there and every registered sample: build placeholders, call op.compute,
lower with an unscheduled te schedule, run the PrimFunc with the tir interpreter and with the
LLVM JIT, and compare with the op's numpy reference. These ops only move data, so results must
match the reference exactly (bit for bit) for every dtype. Each stage must also inline into a
consumer (what the generic injective schedule does), and a symbolic-dim test runs one op of each
index-mapping kind at two sizes through LLVM.
"""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.ir.types import TensorType, TupleType
from relay_backend.op import get, list_ops
from relay_backend.op.indexing import SplitAttrs, StridedSliceAttrs, TakeAttrs
from relay_backend.op.transform import AxisAttrs, ReshapeAttrs, ShapeAttrs, TransposeAttrs

from .sample_cases import sample_params

AREA = {"relay_backend.op.transform", "relay_backend.op.reshape", "relay_backend.op.indexing"}
OPS = [op for op in list_ops() if op.rel.__module__ in AREA]
INTERP_MAX_ELEMENTS = 4096  # the Python tir interpreter is slow; bigger samples run on LLVM only


CASES = sample_params(OPS)
COMPILED_CASES = sample_params(OPS, compiled=True)


def _prepare(op, sample):
    """(flat input arrays, relay argument types, reference outputs) of one sample."""
    inputs, arg_types = [], []
    for value in sample.inputs:
        if isinstance(value, (list, tuple)):  # a tuple input contributes its fields, in order
            arrays = [np.array(v, order="C") for v in value]
            arg_types.append(TupleType([TensorType(a.shape, a.dtype) for a in arrays]))
        else:
            arrays = [np.array(value, order="C")]
            arg_types.append(TensorType(arrays[0].shape, arrays[0].dtype))
        inputs.extend(arrays)
    ref = op.ref(*sample.inputs, sample.attrs)
    refs = [np.asarray(r) for r in (ref if isinstance(ref, tuple) else [ref])]
    return inputs, arg_types, refs


def _stages(op, sample):
    """(placeholders, op.compute's output tensors, flat inputs, references), with the outputs'
    count, shapes, dtypes and tags checked against the relation and the reference."""
    inputs, arg_types, refs = _prepare(op, sample)
    placeholders = [te.placeholder(a.shape, str(a.dtype), name=f"in{k}") for k, a in enumerate(inputs)]
    out_type = op.rel(arg_types, sample.attrs)
    outs = op.compute(sample.attrs, placeholders, out_type)
    out_types = list(out_type.fields) if isinstance(out_type, TupleType) else [out_type]
    assert isinstance(outs, list) and len(outs) == len(refs) == len(out_types)
    for t, r, ty in zip(outs, refs, out_types):
        shape = tuple(int(tir.simplify(d).value) for d in t.shape)
        assert shape == r.shape == ty.shape, f"{op.name}: compute shape {shape}, ref {r.shape}, type {ty.shape}"
        assert t.dtype == ty.dtype == str(r.dtype)
        assert t.op.tag == op.tag
    return placeholders, outs, inputs, refs


def _lower(op, sample):
    """(unscheduled PrimFunc, flat input arrays, reference outputs) for one sample."""
    placeholders, outs, inputs, refs = _stages(op, sample)
    func = te.lower(te.create_schedule(outs), placeholders + outs, name=f"k_{op.name.replace('.', '_')}")
    return func, inputs, refs


def _check(got, refs, how):
    for k, (g, r) in enumerate(zip(got, refs)):
        np.testing.assert_array_equal(g, r, err_msg=f"{how}: output {k}")


def test_every_op_in_area_has_a_compute():
    assert {"reshape", "transpose", "concatenate", "split", "strided_slice", "take"} <= {op.name for op in OPS}
    missing = [op.name for op in OPS if not callable(op.compute)]
    assert not missing, f"ops without compute=: {missing}"


@pytest.mark.parametrize("op,sample", CASES)
def test_compute_matches_reference_in_tir_interpreter(op, sample):
    func, inputs, refs = _lower(op, sample)
    if sum(a.size for a in inputs) + sum(r.size for r in refs) > INTERP_MAX_ELEMENTS:
        pytest.skip("too big for the Python tir interpreter (covered by the LLVM test)")
    outs = [np.full(r.shape, 7, dtype=r.dtype) for r in refs]
    tir.interp.run(func, *inputs, *outs)
    _check(outs, refs, f"{op.name} (tir interpreter)")


@pytest.mark.compile
@pytest.mark.parametrize("op,sample", COMPILED_CASES)
def test_compute_matches_reference_in_llvm(op, sample):
    from relay_backend.codegen import build
    from relay_backend.runtime import nd
    func, inputs, refs = _lower(op, sample)
    outs = [nd.array(np.full(r.shape, 7, dtype=r.dtype)) for r in refs]
    build(func)[func.name](*[nd.array(a) for a in inputs], *outs)
    _check([o.numpy() for o in outs], refs, f"{op.name} (llvm)")


@pytest.mark.compile
@pytest.mark.parametrize("op,sample", COMPILED_CASES)
def test_compute_inlines_into_a_consumer(op, sample):
    """The generic injective schedule inlines these stages: check the inlined kernel is still exact."""
    from relay_backend.codegen import build
    from relay_backend.runtime import nd
    placeholders, stages, inputs, refs = _stages(op, sample)
    consumers = [te.compute(t.shape, lambda *i, t=t: t[i] + t[i], name=f"twice{k}") for k, t in enumerate(stages)]
    s = te.create_schedule(consumers)
    for t in stages:
        s[t].compute_inline()
    func = te.lower(s, placeholders + consumers, name="inlined")
    assert sum(isinstance(n, tir.Allocate) for n in tir.walk(func.body)) == 0, "a stage was not inlined"
    outs = [nd.array(np.zeros(r.shape, r.dtype)) for r in refs]
    build(func)["inlined"](*[nd.array(a) for a in inputs], *outs)
    _check([o.numpy() for o in outs], [r + r for r in refs], f"{op.name} inlined (llvm)")


def test_symbolic_slice_range_matches_python_slices():
    """slice_range over a symbolic dim agrees with slice.indices once the dim is known."""
    from relay_backend.op.index_math import slice_range
    n = te.var("n")
    bounds = (None, -9, -4, -1, 0, 1, 3, 9)
    for b in bounds:
        for e in bounds:
            for step in (-3, -1, 1, 2):
                start, length = slice_range(b, e, step, n)
                for size in (0, 1, 4, 7):
                    env = {n: tir.const(size)}
                    got = [tir.simplify(tir.substitute(tir.convert(v), env)).value for v in (start, length)]
                    want = range(*slice(b, e, step).indices(size))
                    assert got[1] == len(want), (b, e, step, size)
                    if len(want):
                        assert got[0] == want[0], (b, e, step, size)


# --- symbolic dims: the compute sizes its output from te vars, one build serves every n ----------------
SYMBOLIC = [
    # (op, attrs, [(shape, dtype)] with "n" for the symbolic dim, inputs(n, rng), numpy reference)
    ("reshape", ReshapeAttrs((-1, 2)), [(("n", 4), "float32")],
     lambda n, r: [r.standard_normal((n, 4)).astype("float32")], lambda xs: xs[0].reshape(-1, 2)),
    ("transpose", TransposeAttrs((1, 0)), [(("n", 3), "int32")],
     lambda n, r: [r.integers(-9, 9, (n, 3)).astype("int32")], lambda xs: xs[0].T),
    ("broadcast_to", ShapeAttrs((2, 5)), [(("n",), "float32")],
     lambda n, r: [r.standard_normal((1 if n == 3 else 5,)).astype("float32")],  # n is 1 (broadcast) or 5
     lambda xs: np.broadcast_to(xs[0], (2, 5))),
    ("concatenate", AxisAttrs(0), [(("n", 3), "float32"), ((2, 3), "float32")],
     lambda n, r: [r.standard_normal((n, 3)).astype("float32"), r.standard_normal((2, 3)).astype("float32")],
     lambda xs: np.concatenate(xs, 0)),
    ("strided_slice", StridedSliceAttrs((-2,), (0,), (-1,)), [(("n",), "float64")],
     lambda n, r: [r.standard_normal((n,))], lambda xs: xs[0][-2:0:-1]),
    ("strided_slice", StridedSliceAttrs((-2,), (2,), slice_mode="size"), [(("n",), "float32")],
     lambda n, r: [r.standard_normal((n,)).astype("float32")], lambda xs: xs[0][-2:]),
    ("take", TakeAttrs(0, mode="wrap"), [(("n", 2), "float32"), ((4,), "int64")],
     lambda n, r: [r.standard_normal((n, 2)).astype("float32"), r.integers(-9, 9, (4,))],
     lambda xs: np.take(xs[0], np.mod(xs[1], xs[0].shape[0]), axis=0)),
    ("split", SplitAttrs(2, axis=1), [((3, "n"), "float32")],
     lambda n, r: [r.standard_normal((3, 2 * n)).astype("float32")], lambda xs: np.split(xs[0], 2, axis=1)),
]


@pytest.mark.compile
@pytest.mark.parametrize("op_name,attrs,specs,make_inputs,reference", SYMBOLIC, ids=[f"{s[0]}-{k}" for k, s in enumerate(SYMBOLIC)])
def test_symbolic_dim_runs_at_two_sizes(op_name, attrs, specs, make_inputs, reference):
    from relay_backend.codegen import build
    from relay_backend.runtime import nd
    n_var = te.var("n")
    phs = [te.placeholder(tuple(n_var if d == "n" else d for d in shape), dtype, name=f"in{k}")
           for k, (shape, dtype) in enumerate(specs)]
    outs = get(op_name).compute(attrs, phs, None)  # shapes come from the placeholders, not out_type
    func = te.lower(te.create_schedule(outs), phs + outs, name=f"sym_{op_name}")
    kernel = build(func)[func.name]
    rng = np.random.default_rng(1)
    for n in (3, 5):
        xs = [np.array(x, order="C") for x in make_inputs(n, rng)]
        refs = reference(xs)
        refs = refs if isinstance(refs, list) else [refs]
        bound = next(x.shape[k] for x, (shape, _) in zip(xs, specs) for k, d in enumerate(shape) if d == "n")
        env = {n_var: tir.const(bound)}
        assert [tuple(tir.simplify(tir.substitute(d, env)).value for d in t.shape) for t in outs] == \
            [r.shape for r in refs]
        results = [nd.array(np.zeros(r.shape, r.dtype)) for r in refs]
        kernel(*[nd.array(x) for x in xs], *results)
        for got, want in zip(results, refs):
            np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{op_name} at n={n}")
