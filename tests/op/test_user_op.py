"""Operators registered from user code with TVM's Python flow (relay.op.op).

Each test registers its own op in a fixture (removed afterwards), builds a program with it and
checks every stage a built-in op goes through: InferType calls its Python relation, FuseOps
groups it by its pattern, selection takes its highest-plevel implementation, the four
executors run it, and the printer, parser and JSON carry it. Expected values come from numpy.
"""
import dataclasses

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te
from relay_backend.errors import CompileError, ExecutionError, OpDefinitionError, TypeInferenceError
from relay_backend.ir import load_json, save_json
from relay_backend.ir.attrs import Attrs
from relay_backend.op import OpPattern
from relay_backend.op import op as reg
from relay_backend.op.registry import unregister

EXECUTORS = ["debug", "graph", "vm", "aot"]
RTOL = 1e-5   # float32 kernels against float32 numpy


@pytest.fixture
def scale_shift():
    """my.scale_shift(x) = 2x + 1, ELEMWISE, built step by step as in TVM's tutorial."""
    reg.register("my.scale_shift", "2 * x + 1, elementwise")
    op = reg.get("my.scale_shift")
    op.set_num_inputs(1)
    op.add_argument("data", "Tensor", "the input tensor")
    op.add_type_rel("Identity")
    op.set_support_level(10)
    reg.register_pattern("my.scale_shift", OpPattern.ELEMWISE)

    @reg.register_compute("my.scale_shift")
    def _compute(attrs, inputs, out_type):
        x, = inputs
        return [te.compute(x.shape, lambda *i: x[i] * te.const(2, x.dtype) + te.const(1, x.dtype),
                           name="scale_shift")]

    reg.register_injective_schedule("my.scale_shift")
    reg.register_reference("my.scale_shift", lambda x, attrs: (2 * x + 1).astype(x.dtype))
    yield op
    unregister("my.scale_shift")


@dataclasses.dataclass(frozen=True)
class ClampAddAttrs(Attrs):
    """Attributes of the test op my.clamp_add."""

    shift: float = 0.0
    limit: float = 1.0


def _clamp_add_rel(arg_types, attrs):
    """A type relation written in Python: both inputs of one shape and dtype, out the same."""
    lhs, rhs = arg_types
    if lhs != rhs:
        raise TypeInferenceError(f"my.clamp_add: inputs differ ({lhs} vs {rhs})")
    return relay.TensorType(lhs.shape, lhs.dtype)


def _clamp_add_good(attrs, inputs, out_type):
    lhs, rhs = inputs
    return [te.compute(lhs.shape, lambda *i: te.min(lhs[i] + rhs[i] + te.const(attrs.shift, lhs.dtype),
                                                    te.const(attrs.limit, lhs.dtype)))]


def _clamp_add_wrong(attrs, inputs, out_type):
    lhs, _ = inputs
    return [te.compute(lhs.shape, lambda *i: te.const(-100.0, lhs.dtype))]


@pytest.fixture
def clamp_add():
    """my.clamp_add(a, b, shift, limit) = min(a + b + shift, limit), with its own attrs and a
    strategy holding a wrong low-plevel implementation next to the right high-plevel one."""
    reg.register("my.clamp_add")
    op = reg.get("my.clamp_add")
    op.set_num_inputs(2)
    op.set_attrs_type_key("ClampAddAttrs")
    op.add_type_rel("ClampAddRel", _clamp_add_rel)
    reg.register_pattern("my.clamp_add", OpPattern.BROADCAST)

    @reg.register_strategy("my.clamp_add")
    def _strategy(attrs, inputs, out_type, target):
        strategy = reg.OpStrategy()
        strategy.add_implementation(_clamp_add_wrong, None, name="clamp_add.wrong", plevel=5)
        strategy.add_implementation(_clamp_add_good, None, name="clamp_add.good", plevel=15)
        return strategy

    reg.register_reference("my.clamp_add", lambda a, b, attrs: np.minimum(
        a + b + np.float32(attrs.shift), np.float32(attrs.limit)).astype(a.dtype))
    yield op
    unregister("my.clamp_add")


def _dense_relu_user(op):
    x = relay.var("x", shape=(2, 4), dtype="float32")
    w = relay.var("w", shape=(3, 4), dtype="float32")
    body = relay.Call(op, [relay.nn.relu(relay.nn.dense(x, w))])
    return relay.IRModule.from_expr(relay.Function([x, w], body))


def _primitive_bodies(mod):
    """The op names inside each primitive function FuseOps made (each in post order)."""
    groups = []

    def visit(node):
        if isinstance(node, relay.Function) and node.attrs.get("Primitive"):
            names = []
            relay.analysis.post_order_visit(node.body, lambda n: names.append(n.op.name)
                                            if isinstance(n, relay.Call) and isinstance(n.op, relay.op.OpDef)
                                            else None)
            groups.append(names)

    relay.analysis.post_order_visit(mod["main"], visit)
    return groups


def test_user_op_fuses_with_dense_relu_and_matches_numpy_on_every_executor(scale_shift):
    mod = _dense_relu_user(scale_shift)
    fused = relay.transform.FuseOps()(relay.transform.InferType()(mod))
    assert _primitive_bodies(fused) == [["nn.dense", "nn.relu", "my.scale_shift"]]
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 4), dtype="float32"), rng.standard_normal((3, 4), dtype="float32")
    expected = 2 * np.maximum(x @ w.T, 0) + 1
    for kind in EXECUTORS:
        out = relay.create_executor(kind, mod=mod).evaluate()(x, w)
        np.testing.assert_allclose(out.numpy(), expected, rtol=RTOL, atol=RTOL, err_msg=kind)


def test_opaque_pattern_keeps_the_user_op_out_of_the_group(scale_shift):
    with reg.TempOpAttr("my.scale_shift", "TOpPattern", OpPattern.OPAQUE):
        fused = relay.transform.FuseOps()(relay.transform.InferType()(_dense_relu_user(scale_shift)))
        assert sorted(_primitive_bodies(fused)) == [["my.scale_shift"], ["nn.dense", "nn.relu"]]
    fused = relay.transform.FuseOps()(relay.transform.InferType()(_dense_relu_user(scale_shift)))
    assert _primitive_bodies(fused) == [["nn.dense", "nn.relu", "my.scale_shift"]]


def test_highest_plevel_implementation_is_chosen_and_attrs_reach_the_compute(clamp_add):
    a = relay.var("a", shape=(3,), dtype="float32")
    b = relay.var("b", shape=(3,), dtype="float32")
    call = clamp_add(a, b, attrs=ClampAddAttrs(shift=0.5, limit=2.0))
    mod = relay.IRModule.from_expr(relay.Function([a, b], call))
    an, bn = np.array([0, 1, 2], "float32"), np.array([0.1, 0.2, 0.3], "float32")
    expected = np.minimum(an + bn + 0.5, 2.0)
    for kind in EXECUTORS:
        out = relay.create_executor(kind, mod=mod).evaluate()(an, bn)
        np.testing.assert_allclose(out.numpy(), expected, rtol=RTOL, err_msg=kind)


def test_user_op_prints_parses_and_serializes(clamp_add):
    text = ('#[version = "0.0.5"]\n'
            'def @main(%a: Tensor[(3), float32], %b: Tensor[(3), float32]) {\n'
            '  my.clamp_add(%a, %b, shift=0.5f, limit=2f)\n'
            '}\n')
    mod = relay.transform.InferType()(relay.parse(text))
    call = mod["main"].body
    assert call.op is clamp_add and call.attrs == ClampAddAttrs(0.5, 2.0)
    relay.assert_structural_equal(relay.parse(mod.astext()), mod)
    relay.assert_structural_equal(load_json(save_json(mod)), mod)


def test_user_type_relation_errors_name_the_call(clamp_add):
    a = relay.var("a", shape=(3,), dtype="float32")
    b = relay.var("b", shape=(4,), dtype="float32")
    mod = relay.IRModule.from_expr(relay.Function([a, b], clamp_add(a, b, attrs=ClampAddAttrs())))
    with pytest.raises(TypeInferenceError, match="my.clamp_add: inputs differ"):
        relay.transform.InferType()(mod)


def test_temp_op_attr_replaces_the_compute_and_restores_it_even_on_error(scale_shift):
    mod = _dense_relu_user(scale_shift)
    x, w = np.ones((2, 4), "float32"), np.ones((3, 4), "float32")
    before = relay.create_executor("graph", mod=mod).evaluate()(x, w).numpy()
    np.testing.assert_allclose(before, np.full((2, 3), 9.0, "float32"))

    def triple(attrs, inputs, out_type):
        x_te, = inputs
        return [te.compute(x_te.shape, lambda *i: x_te[i] * te.const(3, x_te.dtype))]

    original = scale_shift.compute
    with pytest.raises(RuntimeError, match="inside the block"):
        with reg.TempOpAttr("my.scale_shift", "FTVMCompute", triple):
            # the kernel compiled before must not be served: the op's compute changed
            inside = relay.create_executor("graph", mod=mod).evaluate()(x, w).numpy()
            np.testing.assert_allclose(inside, np.full((2, 3), 12.0, "float32"))
            raise RuntimeError("inside the block")
    assert scale_shift.compute is original
    after = relay.create_executor("graph", mod=mod).evaluate()(x, w).numpy()
    np.testing.assert_allclose(after, before)


def test_temp_op_attr_on_a_builtin_op_restores_its_pattern_and_level():
    relu = relay.op.get("nn.relu")
    pattern, level = relu.pattern, relu.attr_level("TOpPattern")
    with pytest.raises(ValueError):
        with reg.TempOpAttr("nn.relu", "TOpPattern", OpPattern.OPAQUE):
            assert relu.pattern == OpPattern.OPAQUE and relu.tag == "opaque"
            raise ValueError("leave the block by an error")
    assert relu.pattern == pattern and relu.tag == "elemwise" and relu.attr_level("TOpPattern") == level


def test_reregistering_an_attribute_needs_a_higher_level(scale_shift):
    with pytest.raises(OpDefinitionError, match="level > 10"):
        reg.register_compute("my.scale_shift", scale_shift.compute)
    reg.register_compute("my.scale_shift", scale_shift.compute, level=11)   # deliberate override
    with pytest.raises(OpDefinitionError, match="registered twice"):
        reg.register("my.scale_shift")


def test_bad_attribute_values_are_rejected_with_the_op_named(scale_shift):
    with pytest.raises(OpDefinitionError, match="my.scale_shift: TOpPattern must be an OpPattern"):
        reg.register_pattern("my.scale_shift", "fast", level=20)
    with pytest.raises(OpDefinitionError, match="must be a function"):
        reg.register_reference("my.scale_shift", 3, level=20)
    with pytest.raises(OpDefinitionError, match="schedule must be callable"):
        reg.OpStrategy().add_implementation(scale_shift.compute, "injective")


def test_missing_pieces_are_reported_where_they_are_needed():
    reg.register("my.bare")
    try:
        op = reg.get("my.bare")
        op.set_num_inputs(1)
        x = relay.var("x", shape=(2,), dtype="float32")
        mod = relay.IRModule.from_expr(relay.Function([x], relay.Call(op, [x])))
        with pytest.raises(TypeInferenceError, match="add_type_rel"):
            relay.transform.InferType()(mod)
        op.add_type_rel("Identity")
        with pytest.raises(ExecutionError, match="register_reference"):
            relay.create_executor("debug", mod=mod).evaluate()(np.ones(2, "float32"))
        with pytest.raises(CompileError, match="register_compute"):
            relay.create_executor("graph", mod=mod).evaluate()(np.ones(2, "float32"))
    finally:
        unregister("my.bare")


def test_gradient_and_custom_attributes_are_kept_on_the_op(scale_shift):
    def grad(orig, out_grad):
        return [relay.multiply(out_grad, relay.const(2.0))]

    reg.register_gradient("my.scale_shift", grad)
    reg.register_op_attr("my.scale_shift", "FMyAnalysis", "anything")
    assert scale_shift.get_attr("FPrimalGradient") is grad
    assert scale_shift.get_attr("FMyAnalysis") == "anything"
    assert scale_shift.get_attr("FNotThere") is None


@pytest.fixture
def head():
    """my.head(x, n) = x[:n]: a data-dependent output shape, given by its shape function."""
    reg.register("my.head")
    op = reg.get("my.head")
    op.set_num_inputs(2)
    op.add_type_rel("HeadRel", lambda types, attrs: relay.TensorType((relay.Any(),), types[0].dtype))

    def compute(attrs, inputs, out_type):
        x, _ = inputs
        return [te.compute((te.var("head_len"),), lambda i: x[i], name="head")]

    reg.register_compute("my.head", compute)
    reg.register_reference("my.head", lambda x, n, attrs: x[: int(n)])
    reg.register_shape_func("my.head", [False, True],
                            lambda attrs, arrays: relay.TensorType((int(arrays[1]),), "float32"))
    yield op
    unregister("my.head")


def test_data_dependent_user_op_runs_on_debug_and_vm(head):
    x = relay.var("x", shape=(5,), dtype="float32")
    n = relay.var("n", shape=(), dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([x, n], relay.exp(relay.Call(head, [x, n]))))
    xn = np.arange(5, dtype="float32")
    for kind in ("debug", "vm"):
        out = relay.create_executor(kind, mod=mod).evaluate()(xn, np.int32(3))
        np.testing.assert_allclose(out.numpy(), np.exp(xn[:3]), rtol=RTOL, err_msg=kind)
