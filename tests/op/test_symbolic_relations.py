"""Every op's type relation on symbolic shapes.

1. For every registered op and every conformance sample, each input dim larger than 1 becomes a
   size variable (one per distinct size, so dims that are equal stay provably equal; a dyn op's
   integer shape arguments stay static). The
   relation must accept the symbolic shapes, and its output, evaluated at the sample's sizes,
   must be the output of the relation on the concrete shapes (or Any where the size is known
   only at run time). A new op is covered with no new test code.
2. A table with one symbolic program per op and its expected output type written out
   (tests/op/symbolic_expectations.py), checked against InferType, plus a check that the table
   names every registered op.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te
from relay_backend.errors import TypeInferenceError
from relay_backend.ir.dims import is_any, is_static
from relay_backend.ir.shape_math import eval_dim
from relay_backend.op import list_ops
from relay_backend.transform import InferTypeLocal

from .symbolic_expectations import EXPECTED, SIZE_VARS, build_case

# (op, sample index) -> why the relation rejects symbolic inputs there, as TVM's does
REJECTS_SYMBOLIC = {
    ("squeeze", 0): "axis=None needs static dims (TVM: 'axis needs to be defined for dynamic input')",
    ("squeeze", 3): "axis=None needs static dims",
    **{("broadcast_to", i): "a size variable meeting a static target dim other than 1 is not provably "
                            "equal to it (TVM's BroadcastRel)" for i in (0, 1, 3)},
    **{(name, i): "a generator state is Tensor[(10), uint64]: a size variable is not provably 10 (TVM's "
                  "ThreefryKeyType)" for name, count in (("random.threefry_generate", 5), ("random.threefry_split", 5),
                                                         ("random.uniform", 3), ("random.normal", 2),
                                                         ("random.multinomial", 4)) for i in range(count)},
    **{(name, i): "the index tuple length (indices' first dim) must be static (TVM's GatherNDRel/ScatterNDRel)"
       for name, i in (("gather_nd", 0), ("gather_nd", 1), ("gather_nd", 3), ("scatter_nd", 1),
                       ("scatter_nd", 4), ("scatter_nd", 5))},
    **{("collapse_sum_to", i): "the shape tensor's length must be static (TVM's CollapseSumToRel)" for i in (0, 1)},
    **{("unravel_index", i): "the shape tensor's length must be static (TVM's topi reads it as a constant)"
       for i in (0, 1, 2)},
    ("strided_set", 0): "begin/end/strides lengths must be static (TVM's topi loops over them)",
}


def _symbolic(value, sizes, keep_int=False):
    """The sample value's type with dims > 1 made size variables; `keep_int` keeps an integer
    tensor static (a dyn op's shape argument: its length is the output rank, static in TVM too)."""
    if isinstance(value, (list, tuple)):
        return relay.TupleType([_symbolic(v, sizes) for v in value])
    value = np.asarray(value)
    if keep_int and value.dtype.kind in "iu":
        return relay.TensorType(value.shape, str(value.dtype))
    dims = []
    for d in value.shape:
        if d > 1:
            dims.append(sizes.setdefault(d, te.size_var(f"d{d}")))
        else:
            dims.append(d)
    return relay.TensorType(dims, str(value.dtype))


def _concrete(value):
    if isinstance(value, (list, tuple)):
        return relay.TupleType([_concrete(v) for v in value])
    value = np.asarray(value)
    return relay.TensorType(value.shape, str(value.dtype))


def _leaves(ty):
    if isinstance(ty, relay.TupleType):
        return [t for f in ty.fields for t in _leaves(f)]
    return [ty]


def _cases():
    for op in list_ops():
        for i, sample in enumerate(op.samples(np.random.default_rng(0))):
            yield pytest.param(op, i, sample, id=f"{op.name}-{i}")


@pytest.mark.parametrize("op,index,sample", list(_cases()))
def test_relation_on_symbolic_shapes_agrees_with_concrete(op, index, sample):
    sizes = {}
    sym_types = [_symbolic(v, sizes, keep_int=op.to_static is not None) for v in sample.inputs]
    if not sizes:
        pytest.skip("no input dim larger than 1")
    concrete = op.rel([_concrete(v) for v in sample.inputs], sample.attrs)
    params = [relay.var(f"in{i}", t) for i, t in enumerate(sym_types)]
    call = op(*params, attrs=sample.attrs)
    if (op.name, index) in REJECTS_SYMBOLIC:
        with pytest.raises(TypeInferenceError):
            InferTypeLocal(call)
        return
    symbolic = InferTypeLocal(call)
    env = {var: size for size, var in sizes.items()}
    got, want = _leaves(symbolic), _leaves(concrete)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and len(g.shape) == len(w.shape), f"{g} vs {w}"
        for k, (gd, wd) in enumerate(zip(g.shape, w.shape)):
            if is_any(gd):
                continue
            assert eval_dim(gd, env) == int(wd), \
                f"{op.name}: dim {k} of {g} is {eval_dim(gd, env)} at {env}, the concrete relation gives {w}"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_symbolic_relation_expected_type(name):
    expr = build_case(name)
    assert str(InferTypeLocal(expr)) == EXPECTED[name]


def test_every_op_has_a_written_out_symbolic_case():
    ops = {op.name for op in list_ops()}
    missing = sorted(ops - {name.split(":")[0] for name in EXPECTED})
    assert not missing, f"add a symbolic case to tests/op/symbolic_expectations.py for {missing}"


def test_size_vars_print_by_name():
    assert [str(v) for v in SIZE_VARS] == ["n", "m", "h", "w"]
    assert all(not is_static(v) for v in SIZE_VARS)


@pytest.mark.parametrize("rhs_dim, fragment", [
    (te.size_var("m"), "dimension 0 (from the right: 2) is n vs m; symbolic dims broadcast only when"),
    (3, "dimension 0 (from the right: 2) is n vs 3; symbolic dims broadcast only when"),
])
def test_broadcast_of_dims_not_provably_equal_is_an_error_as_in_tvm(rhs_dim, fragment):
    n = SIZE_VARS[0]
    x, y = relay.var("x", shape=(n, 4)), relay.var("y", shape=(rhs_dim, 4))
    with pytest.raises(TypeInferenceError, match="Incompatible broadcast type") as err:
        InferTypeLocal(relay.add(x, y))
    assert fragment in str(err.value)


def test_annotations_unify_size_variables_as_tvm_unify_dim():
    n, m = SIZE_VARS[:2]
    x = relay.var("x", shape=(n, 3))
    # a size variable meets a constant: bound to it for the rest of the function
    fn = relay.Function([x], x, ret_type=relay.TensorType((2, 3)))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(fn))
    assert str(mod["main"].body.checked_type) == "Tensor[(2, 3), float32]"
    # two different size variables do not unify
    fn = relay.Function([x], x, ret_type=relay.TensorType((m, 3)))
    with pytest.raises(TypeInferenceError, match=r"dimension 0 conflicts: m does not match n|"
                                                 r"dimension 0 conflicts: n does not match m"):
        relay.transform.InferType()(relay.IRModule.from_expr(fn))
    # Any unifies with anything, equal expressions with each other
    fn = relay.Function([x], relay.concatenate([x, x], 0), ret_type=relay.TensorType((n * 2, 3)))
    relay.transform.InferType()(relay.IRModule.from_expr(fn))
    fn = relay.Function([x], x, ret_type=relay.TensorType((relay.Any(), 3)))
    relay.transform.InferType()(relay.IRModule.from_expr(fn))


def test_dims_that_provably_differ_are_rejected_and_others_left_for_run_time():
    n = SIZE_VARS[0]
    with pytest.raises(TypeInferenceError, match=r"input has n \+ 1 features but weight expects n"):
        InferTypeLocal(relay.nn.dense(relay.var("x", shape=(2, n + 1)), relay.var("w", shape=(4, n))))
    # n vs 8 may be equal: accepted now (TVM's AssertEQ); the VM checks the concrete shapes
    assert str(InferTypeLocal(relay.nn.dense(relay.var("x", shape=(2, n)), relay.var("w", shape=(4, 8))))) \
        == "Tensor[(2, 4), float32]"
