"""Pad's pads/axes, Slice's axes, Split's sizes, the reductions' axes, TopK's K, CumSum's and DFT's
axis, CenterCropPad's shape, AffineGrid's size and Resize's sizes and scales given as graph inputs and supplied at run time (RelayBackend.prepare(bind_inputs=False)): the dyn
forms of converters/runtime_shapes.py, compared with onnxruntime on the debug interpreter and the
VM (tolerance: conftest.assert_close, rtol 1e-5 / atol 1e-5 scaled to the output; integers
exactly); the graph executor refusing them as unsupported (static shapes only); DynamicToStatic
turning them back into static ops once the values are bound; and bad run-time values stopping
the run with a RelayError."""
import numpy as np
import onnx
import pytest
from onnx import helper

from .conftest import run_ort
from .test_onnx_sequences import F, I64, _model, _same, _t, _x

import relay_backend as relay  # noqa: E402
from relay_backend.errors import OpNotImplemented, RelayError  # noqa: E402
from relay_backend.frontend.onnx.backend import RelayBackend  # noqa: E402
from relay_backend.frontend.onnx.node_tests import run_node_test  # noqa: E402
from relay_backend.ir.types import tuple_leaves  # noqa: E402
from relay_backend.transform.bind_params import bind_params_by_name  # noqa: E402


def _node_model(op, inputs, n_out=1, opset=18, **attrs):
    """One `op` node over graph inputs [(name, elem type, shape)] (name "": an omitted optional
    input), outputs of undeclared shape."""
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, [name for name, _, _ in inputs], outs, **attrs)
    elem = {"TopK": [F, I64]}.get(op, [F] * n_out)
    out_info = [_t(name, ty, None) for name, ty in zip(outs, elem)]
    for info in out_info:   # a shape field without dims (the checker wants one; the importer ignores it)
        info.type.tensor_type.shape.SetInParent()
    return _model([node], [_t(*i) for i in inputs if i[0]], out_info, opset=opset)


def _i64(*values):
    return np.array(values, "int64")


# (op, inputs, feeds for the shape-like inputs, attrs (and the opset, default 18), outputs)
CASES = {
    "pad_constant": ("Pad", [("x", F, [1, 3, 4, 5]), ("pads", I64, [8]), ("value", F, [])],
                     {"pads": _i64(0, 0, 1, 3, 0, 0, 2, 4), "value": np.array(1.5, "float32")}, {}, 1),
    "pad_axes_negative": ("Pad", [("x", F, [2, 3, 4]), ("pads", I64, [4]), ("value", F, []), ("axes", I64, [2])],
                          {"pads": _i64(1, 0, 2, 3), "value": np.array(0.0, "float32"), "axes": _i64(-1, 0)},
                          {}, 1),
    "pad_edge": ("Pad", [("x", F, [3, 4]), ("pads", I64, [4])], {"pads": _i64(2, 0, 1, 3)}, {"mode": "edge"}, 1),
    "pad_reflect": ("Pad", [("x", F, [3, 4]), ("pads", I64, [4])], {"pads": _i64(1, 2, 2, 1)},
                    {"mode": "reflect"}, 1),
    "slice_axes_steps": ("Slice", [("x", F, [6, 5, 4]), ("s", I64, [2]), ("e", I64, [2]), ("a", I64, [2]),
                                   ("t", I64, [2])],
                         {"s": _i64(-1, 1), "e": _i64(-100, 1000), "a": _i64(2, 0), "t": _i64(-2, 2)}, {}, 1),
    "slice_no_axes": ("Slice", [("x", F, [6, 5]), ("s", I64, [1]), ("e", I64, [1])],
                      {"s": _i64(2), "e": _i64(-1)}, {}, 1),
    "split_sizes": ("Split", [("x", F, [2, 7]), ("sp", I64, [3])], {"sp": _i64(2, 0, 5)}, {"axis": -1}, 3),
    "reduce_sum_keepdims": ("ReduceSum", [("x", F, [3, 4, 5]), ("a", I64, [2])], {"a": _i64(-1, 0)}, {}, 1),
    "reduce_max_drop": ("ReduceMax", [("x", F, [3, 4, 5]), ("a", I64, [2])], {"a": _i64(2, 1)},
                        {"keepdims": 0}, 1),
    "reduce_mean_drop": ("ReduceMean", [("x", F, [3, 4, 5, 2]), ("a", I64, [1])], {"a": _i64(-2)},
                         {"keepdims": 0}, 1),
    "reduce_log_sum_exp": ("ReduceLogSumExp", [("x", F, [3, 4, 5]), ("a", I64, [2])], {"a": _i64(0, 2)},
                           {"keepdims": 0}, 1),
    "reduce_l2": ("ReduceL2", [("x", F, [3, 4]), ("a", I64, [1])], {"a": _i64(1)}, {}, 1),
    "reduce_empty_axis": ("ReduceSum", [("x", F, [2, 0, 3]), ("a", I64, [1])], {"a": _i64(1)}, {}, 1),
    "reduce_empty_axes_noop": ("ReduceProd", [("x", F, [2, 3]), ("a", I64, [0])], {"a": _i64()},
                               {"noop_with_empty_axes": 1}, 1),
    "cumsum_axis": ("CumSum", [("x", F, [3, 4, 2]), ("axis", I64, [])], {"axis": np.array(-2, "int64")},
                    {"reverse": 1, "exclusive": 1}, 1),
    "dft_axis": ("DFT", [("x", F, [2, 5, 3, 2]), ("", I64, []), ("axis", I64, [])], {"axis": np.array(-3, "int64")},
                 {"inverse": 1, "opset": 20}, 1),
    "center_crop_pad": ("CenterCropPad", [("x", F, [5, 4, 3]), ("shape", I64, [2])], {"shape": _i64(2, 7)},
                        {"axes": [0, -2]}, 1),
    "affine_grid_2d": ("AffineGrid", [("x", F, [2, 2, 3]), ("size", I64, [4])], {"size": _i64(2, 1, 3, 4)},
                       {"align_corners": 1, "opset": 20}, 1),
    "affine_grid_3d": ("AffineGrid", [("x", F, [1, 3, 4]), ("size", I64, [5])], {"size": _i64(1, 2, 2, 3, 1)},
                       {"opset": 20}, 1),
    "top_k": ("TopK", [("x", F, [3, 6]), ("k", I64, [1])], {"k": _i64(4)}, {"axis": -1, "largest": 0}, 2),
    "resize_sizes_axes": ("Resize", [("x", F, [1, 2, 3, 4]), ("", F, [0]), ("", F, [0]), ("sizes", I64, [2])],
                          {"sizes": _i64(7, 5)}, {"axes": [3, 2], "mode": "linear"}, 1),
    "resize_sizes_nearest": ("Resize", [("x", F, [1, 1, 4, 4]), ("", F, [0]), ("", F, [0]), ("sizes", I64, [4])],
                             {"sizes": _i64(1, 1, 3, 6)}, {"mode": "nearest", "nearest_mode": "ceil"}, 1),
    "resize_crop_roi": ("Resize", [("x", F, [1, 1, 4, 4]), ("roi", F, [8]), ("", F, [0]), ("sizes", I64, [4])],
                        {"roi": np.array([0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8], "float32"), "sizes": _i64(1, 1, 3, 3)},
                        {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
                         "extrapolation_value": 10.0}, 1),
}


def _case(name):
    op, inputs, feeds, attrs, n_out = CASES[name]
    model = _node_model(op, inputs, n_out, **attrs)   # attrs may hold opset=
    feeds = dict(feeds)
    feeds["x"] = _x(*inputs[0][2])
    return model, feeds


@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_like_inputs_at_run_time_match_onnxruntime(name):
    model, feeds = _case(name)
    refs = run_ort(model, feeds)
    for kind in ("debug", "vm"):
        _same(RelayBackend.prepare(model, executor=kind, bind_inputs=False).run(feeds), refs)


@pytest.mark.parametrize("name", ["pad_constant", "slice_axes_steps", "split_sizes", "reduce_max_drop", "top_k"])
def test_graph_executor_refuses_run_time_shapes_as_unsupported(name):
    """Output shapes that depend on input values: the graph executor (static shapes only) refuses
    the model with an OpNotImplemented naming the dynamic type and the VM, never a wrong answer."""
    model, _ = _case(name)
    with pytest.raises(OpNotImplemented, match="static shapes.*vm"):
        RelayBackend.prepare(model, executor="graph", bind_inputs=False)


def test_node_suite_counts_a_graph_refusal_as_unsupported():
    op, err = run_node_test("test_constant_pad", "graph", bind_inputs=False)
    assert op == "Pad" and err.startswith("unsupported: ") and "static shapes" in err
    op, err = run_node_test("test_constant_pad", "debug", bind_inputs=False)
    assert err is None


@pytest.mark.parametrize("name", ["pad_constant", "reduce_mean_drop", "resize_sizes_nearest", "affine_grid_2d"])
def test_default_backend_binds_the_values_for_the_graph_executor(name):
    """The ONNX backend's default way (bind_inputs=True): the graph executor refuses the dyn form,
    so each run imports again with the integer inputs bound, and the static ops run."""
    model, feeds = _case(name)
    _same(RelayBackend.prepare(model, executor="graph").run(feeds), run_ort(model, feeds))


@pytest.mark.parametrize("name", ["pad_axes_negative", "slice_axes_steps", "split_sizes", "reduce_max_drop",
                                  "reduce_log_sum_exp", "top_k", "resize_sizes_axes", "cumsum_axis",
                                  "center_crop_pad", "affine_grid_3d"])
def test_dynamic_to_static_folds_the_dyn_forms_once_values_are_bound(name):
    """Imported with the shape-like inputs as parameters, then bound to constants: DynamicToStatic
    leaves a main with static types that the graph executor runs, matching onnxruntime."""
    model, feeds = _case(name)
    refs = run_ort(model, feeds)
    mod, params = relay.frontend.from_onnx(model)
    bound = {k: v for k, v in feeds.items() if k != "x"}
    mod = mod.copy()
    mod["main"] = bind_params_by_name(mod["main"], bound)
    mod = relay.transform.DynamicToStatic()(mod)
    leaves = tuple_leaves(mod["main"].checked_type.ret_type)
    assert all(not t.is_dynamic for t in leaves), mod["main"].checked_type
    out = relay.create_executor("graph", mod=mod, params=params or None).evaluate()(x=feeds["x"])
    outs = [o.numpy() for o in out.fields] if hasattr(out, "fields") else [out.numpy()]
    _same(outs, refs)


@pytest.mark.parametrize("name, bad", [
    ("reduce_sum_keepdims", {"a": _i64(1, 1)}),       # a repeated axis
    ("reduce_max_drop", {"a": _i64(0, 3)}),           # out of range
    ("split_sizes", {"sp": _i64(2, 2, 2)}),           # does not add up to the axis
    ("split_sizes", {"sp": _i64(8, 0, -1)}),          # negative size
    ("cumsum_axis", {"axis": np.array(3, "int64")}),  # axis out of range
    ("pad_edge", {"pads": _i64(-1, 0, 0, 0)}),        # a negative pad (a crop)
])
def test_bad_run_time_values_stop_the_run(name, bad):
    model, feeds = _case(name)
    feeds.update(bad)
    for kind in ("debug", "vm"):
        with pytest.raises(RelayError):
            RelayBackend.prepare(model, executor=kind, bind_inputs=False).run(feeds)


@pytest.mark.parametrize("lengths", [(2, 7), (5, 4), (4, 1), (6, 0)])
def test_center_crop_pad_with_constant_lengths_is_static(lengths):
    """A constant shape builds strided_slice and nn.pad: the graph executor runs it."""
    from onnx import numpy_helper
    model = _node_model("CenterCropPad", [("x", F, [5, 4, 3])], axes=[0, -2])
    model.graph.node[0].input.append("shape")
    model.graph.initializer.append(numpy_helper.from_array(_i64(*lengths), "shape"))
    feeds = {"x": _x(5, 4, 3)}
    _same(RelayBackend.prepare(model, executor="graph", bind_inputs=False).run(feeds), run_ort(model, feeds))


def test_run_time_resize_scales_run_on_debug_and_vm():
    """Resize's scales fed at run time (dyn.image.resize2d_scales); the graph executor refuses the
    dynamic output as unsupported; antialias with run-time scales stays unsupported, with the reason."""
    model = _node_model("Resize", [("x", F, [1, 1, 2, 2]), ("roi", F, [0]), ("scales", F, [4])], mode="linear")
    for scales in ([1, 1, 1.5, 2.5], [1, 1, 0.6, 3.0]):
        feeds = {"x": _x(1, 1, 2, 2), "roi": np.zeros(0, "float32"), "scales": np.array(scales, "float32")}
        for kind in ("debug", "vm"):
            _same(RelayBackend.prepare(model, executor=kind, bind_inputs=False).run(feeds), run_ort(model, feeds))
    with pytest.raises(OpNotImplemented, match="static shapes"):
        RelayBackend.prepare(model, executor="graph", bind_inputs=False)
    antialiased = _node_model("Resize", [("x", F, [1, 1, 4, 4]), ("roi", F, [0]), ("scales", F, [4])],
                              mode="linear", antialias=1)
    with pytest.raises(OpNotImplemented, match="antialias"):
        RelayBackend.prepare(antialiased, executor="debug", bind_inputs=False)


def test_run_time_axis_that_would_decide_the_output_shape_is_unsupported():
    """A onesided DFT keeps n // 2 + 1 bins of the transformed axis: which axis shrinks depends on
    the run-time axis value, so the output cannot be typed."""
    model = _node_model("DFT", [("x", F, [4, 6, 1]), ("", I64, []), ("axis", I64, [])], onesided=1, opset=20)
    with pytest.raises(OpNotImplemented, match="output shape would depend on it"):
        RelayBackend.prepare(model, executor="debug", bind_inputs=False)


def test_run_time_axes_of_unknown_length_are_unsupported():
    """The axes' length decides the output rank: a run-time axes of unknown length cannot be typed."""
    model = _node_model("ReduceSum", [("x", F, [3, 4]), ("a", I64, ["n"])], keepdims=0)
    onnx.checker.check_model(model)
    with pytest.raises(OpNotImplemented, match="static length"):
        RelayBackend.prepare(model, executor="debug", bind_inputs=False)
