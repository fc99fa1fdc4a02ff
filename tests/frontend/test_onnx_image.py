"""ONNX Resize, Upsample and GridSample against onnxruntime: every mode with constant scales or
sizes (static image.resize*d, compiled by the graph executor), ONNX's scale arithmetic where it
differs from TVM's (non-integer in * scale), antialias, roi, axes, run-time sizes (bound per run
by the ONNX backend), run-time scales and keep-aspect-ratio sizes (dyn.image.resize2d_scales on
debug and VM); GridSample in 2-D and 3-D, AffineGrid, NonMaxSuppression (dynamic output: debug
and VM) and RoiAlign."""
import numpy as np
import pytest
from onnx import helper

import relay_backend as relay
from relay_backend.errors import CompileError, OpNotImplemented

from .conftest import assert_close, make_model, run_ort, run_relay

F = "float32"
RNG = np.random.default_rng(0)


def _resize(shape, *, scales=None, sizes=None, roi=None, opset=13, runtime=(), out_shape=None, **attrs):
    """A one-node Resize model; scales / sizes / roi are initializers unless named in `runtime`."""
    names = ["x", "roi" if roi is not None else "", "scales" if scales is not None else "",
             "sizes" if sizes is not None else ""]
    while names[-1] == "":
        names.pop()
    inits, inputs = {}, [("x", F, list(shape))]
    for name, value, dtype in (("roi", roi, F), ("scales", scales, F), ("sizes", sizes, "int64")):
        if value is None:
            continue
        value = np.asarray(value, dtype)
        if name in runtime:
            inputs.append((name, dtype, list(value.shape)))
        else:
            inits[name] = value
    node = helper.make_node("Resize", names, ["y"], **attrs)
    return make_model([node], inputs, [("y", F, out_shape)], inits, opset=opset)


CASES = [
    ("linear_half_pixel_downscale", (1, 2, 5, 7), dict(scales=[1, 1, 0.6, 0.8], mode="linear")),
    ("cubic_align_corners_fractional", (1, 1, 4, 5), dict(scales=[1, 1, 1.7, 0.8], mode="cubic",
                                                          coordinate_transformation_mode="align_corners")),
    ("cubic_exclude_A05", (1, 1, 4, 4), dict(scales=[1, 1, 0.75, 1.5], mode="cubic", cubic_coeff_a=-0.5,
                                             exclude_outside=1)),
    ("nearest_floor_asymmetric", (1, 2, 3, 4), dict(sizes=[1, 2, 7, 9], mode="nearest", nearest_mode="floor",
                                                    coordinate_transformation_mode="asymmetric")),
    ("nearest_ceil_half_pixel", (1, 1, 4, 3), dict(sizes=[1, 1, 9, 5], mode="nearest", nearest_mode="ceil")),
    ("nearest_round_prefer_ceil", (1, 1, 2, 2), dict(sizes=[1, 1, 7, 8], mode="nearest",
                                                     nearest_mode="round_prefer_ceil")),
    ("nearest_boundary_2_to_7", (1, 1, 2, 2), dict(sizes=[1, 1, 7, 8], mode="nearest")),
    ("pytorch_half_pixel_linear", (1, 1, 6, 6), dict(sizes=[1, 1, 3, 1], mode="linear",
                                                     coordinate_transformation_mode="pytorch_half_pixel")),
    ("tf_half_pixel_for_nn", (1, 1, 3, 5), dict(scales=[1, 1, 2.0, 0.6], mode="nearest",
                                                coordinate_transformation_mode="tf_half_pixel_for_nn")),
    ("tf_crop_and_resize", (1, 1, 4, 4), dict(roi=[0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7], sizes=[1, 1, 3, 3],
                                              mode="linear", extrapolation_value=10.0,
                                              coordinate_transformation_mode="tf_crop_and_resize")),
    ("resize1d_linear", (2, 3, 5), dict(scales=[1, 1, 1.6], mode="linear")),
    ("resize3d_nearest", (1, 1, 2, 3, 4), dict(sizes=[1, 1, 3, 5, 2], mode="nearest")),
    ("opset18_axes", (1, 2, 3, 4), dict(sizes=[6, 2], mode="linear", axes=[3, 2], opset=18)),
    ("opset18_not_larger", (1, 1, 4, 6), dict(sizes=[3, 3], mode="nearest", axes=[2, 3], opset=18,
                                              keep_aspect_ratio_policy="not_larger")),
    # no axes: the aspect-ratio scale is taken over every axis, batch and channel included
    ("opset18_not_larger_all_axes", (1, 1, 2, 2), dict(sizes=[1, 1, 3, 4], mode="nearest", opset=18,
                                                       keep_aspect_ratio_policy="not_larger")),
    ("opset18_not_smaller_all_axes", (1, 1, 4, 6), dict(sizes=[1, 1, 3, 3], mode="nearest", opset=18,
                                                        keep_aspect_ratio_policy="not_smaller")),
    ("opset18_antialias_linear", (1, 1, 8, 9), dict(scales=[1, 1, 0.5, 0.4], mode="linear", antialias=1,
                                                    opset=18)),
    ("opset18_antialias_cubic", (1, 1, 7, 7), dict(sizes=[1, 1, 3, 4], mode="cubic", antialias=1, opset=18)),
    ("opset19_half_pixel_symmetric", (1, 1, 4, 5), dict(scales=[1, 1, 0.6, 1.7], mode="linear", opset=19,
                                                        coordinate_transformation_mode="half_pixel_symmetric")),
    ("opset10", (1, 1, 3, 3), dict(scales=[1, 1, 2.0, 1.5], mode="nearest", opset=10)),
]


# onnxruntime sizes align_corners by the integer output length; the standard (and its reference
# implementation, which the node tests' expected outputs come from) by the float in * scale
ONNX_REFERENCE_ONLY = {"cubic_align_corners_fractional"}


def _onnx_reference(model, feeds):
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(model).run(None, feeds)


@pytest.mark.parametrize("name,shape,kw", CASES, ids=[c[0] for c in CASES])
def test_resize_matches_onnxruntime(name, shape, kw):
    kw = dict(kw)
    opset = kw.pop("opset", 13)
    if opset == 10:
        node = helper.make_node("Resize", ["x", "scales"], ["y"], mode=kw["mode"])
        model = make_model([node], [("x", F, list(shape))], [("y", F, None)],
                           {"scales": np.asarray(kw["scales"], F)}, opset=10)
    else:
        model = _resize(shape, opset=opset, **kw)
    x = RNG.uniform(-2, 2, shape).astype(F)
    want = _onnx_reference(model, {"x": x}) if name in ONNX_REFERENCE_ONLY else run_ort(model, {"x": x})
    for kind in ("debug", "graph"):
        assert_close(run_relay(model, {"x": x}, kind), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["cubic", "nearest"])
def test_run_time_sizes_are_bound_per_run_by_the_onnx_backend(mode):
    """Sizes given as a graph input: from_onnx builds dyn.image.resize2d (output height and width
    Any), which the graph executor cannot run, so the ONNX backend imports again per distinct
    value there, and every executor runs the resize."""
    from relay_backend.frontend.onnx.backend import RelayBackend
    model = _resize((1, 2, 2, 4), sizes=[1, 2, 5, 7], mode=mode, runtime=("sizes",), out_shape=["n", "c", "h", "w"])
    mod, _ = relay.frontend.from_onnx(model)
    assert mod["main"].checked_type.ret_type.is_dynamic
    x = RNG.uniform(size=(1, 2, 2, 4)).astype(F)
    for kind in ("graph", "vm"):
        rep = RelayBackend.prepare(model, executor=kind)
        for hw in ([5, 7], [7, 9]):      # 2 -> 7 puts a half_pixel coordinate exactly on 0.5
            feeds = {"x": x, "sizes": np.array([1, 2] + hw, "int64")}
            assert_close(rep.run([x, feeds["sizes"]]), run_ort(model, feeds))


@pytest.mark.parametrize("mode,kinds", [("linear", ("debug", "graph", "vm")), ("nearest", ("debug", "vm"))])
def test_run_time_roi_of_tf_crop_and_resize(mode, kinds):
    """A roi fed at run time: linear runs as image.crop_and_resize (static, every executor), the
    other methods as dyn.image.resize2d (debug and VM)."""
    model = _resize((2, 3, 5, 6), sizes=[2, 3, 4, 3], roi=[0, 0, 0.1, 0.2, 1, 1, 0.9, 1.3], mode=mode,
                    coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-3.0, runtime=("roi",))
    x = RNG.uniform(size=(2, 3, 5, 6)).astype(F)
    for roi in ([0, 0, 0.1, 0.2, 1, 1, 0.9, 1.3], [0, 0, -0.2, 0.3, 1, 1, 0.7, 0.6]):
        feeds = {"x": x, "roi": np.array(roi, F)}
        want = run_ort(model, feeds)
        for kind in kinds:
            assert_close(run_relay(model, feeds, kind), want)


RUN_TIME_SCALES = [
    ("linear_half_pixel", (1, 2, 5, 7), dict(scales=[1, 1, 0.6, 0.8], mode="linear"),
     [[1, 1, 0.6, 0.8], [1, 1, 1.7, 2.3]]),
    ("cubic_align_corners", (1, 1, 4, 5), dict(scales=[1, 1, 1.7, 0.8], mode="cubic",
                                               coordinate_transformation_mode="align_corners"),
     [[1, 1, 1.7, 0.8], [1, 1, 0.5, 3.0]]),
    ("nearest_asymmetric_floor", (1, 2, 3, 4), dict(scales=[1, 1, 2.0, 1.5], mode="nearest", nearest_mode="floor",
                                                    coordinate_transformation_mode="asymmetric"),
     [[1, 1, 2.0, 1.5], [1, 1, 0.7, 3.0]]),
    ("linear_half_pixel_symmetric", (1, 1, 4, 5), dict(scales=[1, 1, 0.6, 2.3], mode="linear", opset=19,
                                                       coordinate_transformation_mode="half_pixel_symmetric"),
     [[1, 1, 0.6, 2.3], [1, 1, 1.5, 0.5]]),
    ("tf_crop_and_resize", (1, 1, 4, 4), dict(roi=[0, 0, 0.2, 0.1, 1, 1, 0.9, 1.2], scales=[1, 1, 0.8, 1.4],
                                              mode="cubic", extrapolation_value=5.0,
                                              coordinate_transformation_mode="tf_crop_and_resize"),
     [[1, 1, 0.8, 1.4], [1, 1, 1.3, 0.5]]),
    ("axes_3_2", (1, 1, 2, 3), dict(scales=[2.5, 1.5], mode="nearest", axes=[3, 2], opset=18),
     [[2.5, 1.5], [0.7, 2.0]]),
]


@pytest.mark.parametrize("name,shape,kw,runs", RUN_TIME_SCALES, ids=[c[0] for c in RUN_TIME_SCALES])
def test_run_time_scales_on_debug_and_vm(name, shape, kw, runs):
    """Scales given as a graph input: dyn.image.resize2d_scales reads them per run (output length
    floor(in * scale), the coordinates divide by the scale as ONNX's), on the debug interpreter
    and the VM, for several scale values through one import; against onnxruntime, or ONNX's
    reference where onnxruntime departs from the standard."""
    model = _resize(shape, runtime=("scales",), out_shape=[None] * len(shape), **kw)
    # as ONNX_REFERENCE_ONLY: these modes size by the float width in * scale, onnxruntime does not
    float_width = kw.get("coordinate_transformation_mode") in ("align_corners", "tf_crop_and_resize")
    mod, _ = relay.frontend.from_onnx(model)
    assert mod["main"].checked_type.ret_type.is_dynamic
    x = RNG.uniform(-2, 2, shape).astype(F)
    feeds = {"x": x, **({"roi": np.asarray(kw["roi"], F)} if "roi" in kw else {})}
    for kind in ("debug", "vm"):
        run = relay.create_executor(kind, mod=mod).evaluate()
        for scales in runs:
            feeds["scales"] = np.asarray(scales, F)
            got = run(*[feeds[i.name_hint] for i in mod["main"].params]).numpy()
            want = _onnx_reference(model, feeds) if float_width else run_ort(model, feeds)
            assert_close([got], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("policy,axes,sizes", [("not_larger", [2, 3], [[3, 3], [9, 5]]),
                                                ("not_smaller", None, [[1, 1, 3, 3], [1, 1, 5, 7]])])
def test_run_time_sizes_with_a_keep_aspect_ratio_policy(policy, axes, sizes):
    """keep_aspect_ratio_policy with sizes fed at run time: one scale min (max) of sizes / in
    sets the lengths round(scale * in) and the coordinates (dyn.image.resize2d_scales)."""
    extra = {} if axes is None else {"axes": axes}
    model = _resize((1, 1, 4, 6), sizes=sizes[0], mode="nearest", opset=18, keep_aspect_ratio_policy=policy,
                    runtime=("sizes",), out_shape=[None] * 4, **extra)
    mod, _ = relay.frontend.from_onnx(model)
    x = RNG.uniform(size=(1, 1, 4, 6)).astype(F)
    for kind in ("debug", "vm"):
        run = relay.create_executor(kind, mod=mod).evaluate()
        for value in sizes:
            feeds = {"x": x, "sizes": np.asarray(value, "int64")}
            assert_close([run(x, feeds["sizes"]).numpy()], run_ort(model, feeds))


def test_run_time_scales_on_the_graph_executor_are_a_clear_error():
    model = _resize((1, 2, 3, 4), scales=[1, 1, 0.6, 2], mode="linear", runtime=("scales",), out_shape=[None] * 4)
    mod, _ = relay.frontend.from_onnx(model)
    with pytest.raises(CompileError, match="dynamic|Any|shape"):
        relay.create_executor("graph", mod=mod).evaluate()


@pytest.mark.parametrize("scales", [[2, 1, 1, 1], [1, 1, 0.0, 1], [1, 1, np.nan, 2], [1, 1, -1, 2],
                                    [1, 1, 1e30, 1], [1, 1, 1e9, 1e9]])
def test_bad_run_time_scales_are_input_errors(scales):
    """A batch / channel scale other than 1, a scale that is not a positive finite number, or one
    whose output length overflows int64 are InputErrors; an output over the size limit is an
    AllocationError, raised before anything allocates it."""
    from relay_backend.errors import AllocationError, InputError
    error = AllocationError if scales[2] == 1e9 else InputError
    model = _resize((1, 2, 3, 4), scales=[1, 1, 0.6, 2], mode="linear", runtime=("scales",), out_shape=[None] * 4)
    mod, _ = relay.frontend.from_onnx(model)
    x = RNG.uniform(size=(1, 2, 3, 4)).astype(F)
    for kind in ("debug", "vm"):
        with pytest.raises(error):
            relay.create_executor(kind, mod=mod).evaluate()(x, np.asarray(scales, F))


def test_run_time_scales_with_antialias_are_a_clear_error():
    model = _resize((1, 2, 5, 4), scales=[1, 1, 0.6, 0.5], mode="linear", antialias=1, opset=18,
                    runtime=("scales",))
    with pytest.raises(OpNotImplemented, match="antialias"):
        relay.frontend.from_onnx(model)


def test_resize_of_the_channel_axis_is_refused():
    with pytest.raises(OpNotImplemented, match="batch or channel"):
        relay.frontend.from_onnx(_resize((1, 2, 3, 4), scales=[1, 2, 1, 1], mode="nearest"))


@pytest.mark.parametrize("opset,scales", [(9, None), (7, [1.0, 1.0, 2.0, 3.0])])
def test_upsample_matches_onnxruntime(opset, scales):
    x = RNG.uniform(size=(1, 2, 2, 3)).astype(F)
    if opset == 9:
        node = helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest")
        model = make_model([node], [("x", F, [1, 2, 2, 3])], [("y", F, None)],
                           {"s": np.array([1, 1, 3, 2], F)}, opset=9)
    else:
        node = helper.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=scales)
        model = make_model([node], [("x", F, [1, 2, 2, 3])], [("y", F, None)], opset=7)
    want = run_ort(model, {"x": x})
    for kind in ("debug", "graph"):
        assert_close(run_relay(model, {"x": x}, kind), want)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample_with_run_time_scales(mode):
    """Upsample 9 with its scales a graph input: ONNX's floor(in * scale) lengths and asymmetric
    coordinates on debug and VM, fractional scales included (the same dyn resize as Resize)."""
    node = helper.make_node("Upsample", ["x", "s"], ["y"], mode=mode)
    model = make_model([node], [("x", F, [1, 2, 3, 4]), ("s", F, [4])], [("y", F, None)], opset=9)
    mod, _ = relay.frontend.from_onnx(model)
    x = RNG.uniform(size=(1, 2, 3, 4)).astype(F)
    for kind in ("debug", "vm"):
        run = relay.create_executor(kind, mod=mod).evaluate()
        for scales in ([1, 1, 2, 3], [1, 1, 1.5, 2.5], [1, 1, 1.7, 1]):
            feeds = {"x": x, "s": np.array(scales, F)}
            assert_close([run(x, feeds["s"]).numpy()], run_ort(model, feeds))


GRID = [(16, "bilinear", "zeros", 0, 2), (16, "bicubic", "border", 1, 2), (16, "nearest", "reflection", 0, 2),
        (20, "cubic", "reflection", 1, 2), (20, "linear", "border", 0, 3), (20, "nearest", "zeros", 1, 3)]


@pytest.mark.parametrize("opset,mode,padding,align,k", GRID)
def test_grid_sample_matches_onnxruntime(opset, mode, padding, align, k):
    data_shape = (2, 3, 4, 5) if k == 2 else (1, 2, 3, 4, 3)
    grid_shape = (data_shape[0],) + ((3, 4) if k == 2 else (2, 3, 2)) + (k,)
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding, align_corners=align)
    model = make_model([node], [("x", F, list(data_shape)), ("g", F, list(grid_shape))], [("y", F, None)],
                       opset=opset)
    feeds = {"x": RNG.uniform(-1, 1, data_shape).astype(F), "g": RNG.uniform(-1.4, 1.4, grid_shape).astype(F)}
    want = run_ort(model, feeds)
    for kind in ("debug", "graph"):
        assert_close(run_relay(model, feeds, kind), want, rtol=1e-4, atol=1e-5)


def _nms_model(center=0, optional=3, opset=11):
    names = ["boxes", "scores", "max_out", "iou", "score"][:2 + optional]
    node = helper.make_node("NonMaxSuppression", names, ["y"], center_point_box=center)
    inputs = [("boxes", F, [2, 6, 4]), ("scores", F, [2, 3, 6]), ("max_out", "int64", [1]), ("iou", F, [1]),
              ("score", F, [1])][:2 + optional]
    return make_model([node], inputs, [("y", "int64", None)], opset=opset)


def _nms_feeds(max_out=2, iou=0.4, score=0.2, center=0):
    rng = np.random.default_rng(3)
    corner = rng.uniform(0, 4, (2, 6, 2))
    size = rng.uniform(1, 3, (2, 6, 2))
    boxes = np.concatenate([corner + size / 2, size] if center else [corner, corner + size], axis=2)
    feeds = {"boxes": boxes.astype(F), "scores": np.round(rng.uniform(0, 1, (2, 3, 6)), 1).astype(F),
             "max_out": np.array([max_out], "int64"), "iou": np.array([iou], F), "score": np.array([score], F)}
    return feeds


@pytest.mark.parametrize("center,max_out,iou,score,optional", [
    (0, 2, 0.4, 0.2, 3), (1, 3, 0.3, 0.0, 3), (0, 0, 0.5, 0.1, 3), (0, 4, 0.0, 0.1, 3), (0, 5, 0.5, 0.0, 2),
    (0, 1, 0.6, 0.0, 0)])
def test_non_max_suppression_matches_onnxruntime(center, max_out, iou, score, optional):
    model = _nms_model(center, optional)
    feeds = _nms_feeds(max_out, iou, score, center)
    feeds = {k: v for k, v in feeds.items() if k in [i.name for i in model.graph.input]}
    want = run_ort(model, feeds)
    for kind in ("debug", "vm"):
        assert_close(run_relay(model, feeds, kind), want)
    with pytest.raises(CompileError, match="needs static shapes"):
        run_relay(model, feeds, "graph")


@pytest.mark.parametrize("opset,coord,ratio", [(16, "half_pixel", 0), (16, "output_half_pixel", 2), (10, None, 0)])
def test_roi_align_matches_onnxruntime(opset, coord, ratio):
    attrs = dict(output_height=3, output_width=2, sampling_ratio=ratio, spatial_scale=0.5)
    if coord:
        attrs["coordinate_transformation_mode"] = coord
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], **attrs)
    model = make_model([node], [("x", F, [2, 3, 8, 9]), ("rois", F, [4, 4]), ("idx", "int64", [4])],
                       [("y", F, None)], opset=opset)
    rng = np.random.default_rng(4)
    corner = rng.uniform(-2, 12, (4, 2))
    feeds = {"x": rng.uniform(-1, 1, (2, 3, 8, 9)).astype(F),
             "rois": np.concatenate([corner, corner + rng.uniform(0.5, 8, (4, 2))], 1).astype(F),
             "idx": np.array([0, 1, 1, 0], "int64")}
    want = run_ort(model, feeds)
    for kind in ("debug", "graph"):
        assert_close(run_relay(model, feeds, kind), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset,coord,ratio", [(16, "half_pixel", 2), (16, "output_half_pixel", 1), (10, None, 3)])
def test_roi_align_max_mode_matches_onnxruntime(opset, coord, ratio):
    """ONNX's max mode (the largest weighted corner of each sample, converters/roi_align_max.py),
    regions partly outside the image; node test test_roialign_mode_max."""
    attrs = dict(output_height=3, output_width=4, sampling_ratio=ratio, spatial_scale=0.5, mode="max")
    if coord:
        attrs["coordinate_transformation_mode"] = coord
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], **attrs)
    model = make_model([node], [("x", F, [2, 3, 8, 9]), ("rois", F, [5, 4]), ("idx", "int64", [5])],
                       [("y", F, None)], opset=opset)
    rng = np.random.default_rng(8)
    corner = rng.uniform(-4, 16, (5, 2))
    feeds = {"x": rng.uniform(-1, 1, (2, 3, 8, 9)).astype(F),
             "rois": np.concatenate([corner, corner + rng.uniform(0.5, 9, (5, 2))], 1).astype(F),
             "idx": np.array([0, 1, 1, 0, 1], "int64")}
    want = run_ort(model, feeds)
    for kind in ("debug", "graph"):
        assert_close(run_relay(model, feeds, kind), want, rtol=1e-4, atol=1e-5)


def test_roi_align_max_mode_with_an_adaptive_grid_is_refused():
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], mode="max")
    model = make_model([node], [("x", F, [1, 1, 4, 4]), ("rois", F, [1, 4]), ("idx", "int64", [1])],
                       [("y", F, None)], opset=16)
    with pytest.raises(OpNotImplemented, match="adaptive sampling grid"):
        relay.frontend.from_onnx(model)


@pytest.mark.parametrize("size,align", [([2, 3, 4, 5], 0), ([1, 2, 3, 2], 1), ([2, 1, 2, 3, 4], 0), ([1, 1, 3, 2, 2], 1)])
def test_affine_grid_matches_onnxruntime(size, align):
    k = len(size) - 2
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align)
    model = make_model([node], [("theta", F, [size[0], k, k + 1])], [("grid", F, None)],
                       {"size": np.array(size, "int64")}, opset=20)
    feeds = {"theta": RNG.uniform(-1, 1, (size[0], k, k + 1)).astype(F)}
    want = run_ort(model, feeds)
    for kind in ("debug", "graph"):
        assert_close(run_relay(model, feeds, kind), want)
