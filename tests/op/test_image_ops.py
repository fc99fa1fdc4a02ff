"""relay.image ops: every sample's reference against the independent per-element formulas of
image_independent.py, a sweep of every resize mode x method x rounding, the guards (align_corners
or crop length 1, clamped box indices, exact integer upsampling), empty inputs, errors, and
dyn.image.resize2d (built by the constructor, run by the VM, removed by DynamicToStatic) and
dyn.image.resize2d_scales (scales read at run time, against the static op with those scales).

Tolerances: float16 1e-2, float32 1e-5, float64 1e-9 (relative and absolute); integers exact.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import AttrsError, InputError, OpNotImplemented, TypeInferenceError
from relay_backend.op import get, list_ops
from relay_backend.op.image.resize import Resize1DAttrs, Resize2DAttrs, Resize3DAttrs

from . import image_independent as ind

TOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-9}

INDEPENDENT = {
    "image.resize1d": ind.resize,
    "image.resize2d": ind.resize,
    "image.resize3d": ind.resize,
    "dyn.image.resize2d": lambda x, size, roi, a: ind.resize(
        x, a.with_(size=tuple(int(v) for v in size), roi=tuple(float(v) for v in roi))),
    "dyn.image.resize2d_scales": lambda x, size, roi, scales, a: ind.resize(
        x, a.with_(size=tuple(int(v) for v in size), roi=tuple(float(v) for v in roi),
                   scales=tuple(float(v) for v in scales))),
    "image.crop_and_resize": ind.crop_and_resize,
    "image.dilation2d": ind.dilation2d,
    "image.affine_grid": ind.affine_grid,
    "image.grid_sample": ind.grid_sample,
}
IMAGE_OPS = [op for op in list_ops() if op.name.startswith(("image.", "dyn.image."))]
CASES = [(op, i, s) for op in IMAGE_OPS for i, s in enumerate(op.samples(np.random.default_rng(3)))]


def _close(got, want, what=""):
    got = np.asarray(got)
    if got.dtype.kind == "f":
        tol = TOL[str(got.dtype)]
        np.testing.assert_allclose(got.astype("float64"), want, rtol=tol, atol=tol, err_msg=what)
    else:   # integer results saturate at the dtype's range, then truncate
        info = np.iinfo(got.dtype)
        want = np.clip(np.trunc(np.asarray(want)), info.min, info.max)
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=what)


def test_every_image_op_has_an_independent_reference():
    assert sorted(INDEPENDENT) == sorted(op.name for op in IMAGE_OPS)


@pytest.mark.parametrize("op,i,sample", CASES, ids=[f"{op.name}-{i}" for op, i, _ in CASES])
def test_reference_matches_independent(op, i, sample):
    got = op.ref(*sample.inputs, sample.attrs)
    _close(got, INDEPENDENT[op.name](*sample.inputs, sample.attrs), f"{op.name} sample {i}")


SWEEP = [(mode, method, rounding)
         for mode in ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn",
                      "tf_crop_and_resize")
         for method in ("nearest_neighbor", "linear", "cubic")
         for rounding in (("", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil")
                          if method == "nearest_neighbor" else ("",))]


@pytest.mark.parametrize("mode,method,rounding", SWEEP)
@pytest.mark.parametrize("size", [(7, 3), (2, 9), (1, 4)])
def test_resize2d_every_mode_against_independent(mode, method, rounding, size):
    x = np.random.default_rng(1).uniform(-2, 2, (1, 2, 4, 5)).astype("float32")
    a = Resize2DAttrs(size=size, method=method, coordinate_transformation_mode=mode, rounding_method=rounding,
                      roi=(0.1, -0.3, 0.9, 1.2), extrapolation_value=-9.0, cubic_exclude=int(size[0] == 2))
    _close(get("image.resize2d").ref(x, a), ind.resize(x, a))


@pytest.mark.parametrize("mode,method", [(m, k) for m in ("half_pixel", "align_corners", "asymmetric",
                                                          "pytorch_half_pixel", "tf_half_pixel_for_nn",
                                                          "tf_crop_and_resize")
                                         for k in ("nearest_neighbor", "linear", "cubic")])
def test_resize_modes_compile_and_match(mode, method):
    """Each mode and method through the compiler (LLVM, graph executor) in 1-D, 2-D and 3-D."""
    rng = np.random.default_rng(2)
    common = dict(method=method, coordinate_transformation_mode=mode, rounding_method="")
    cases = [(relay.image.resize1d, (1, 2, 5), (8,), (0.2, 0.9)),
             (relay.image.resize2d, (1, 1, 3, 4), (5, 2), (0.0, 0.1, 1.0, 0.8)),
             (relay.image.resize3d, (1, 1, 2, 3, 2), (3, 2, 4), (0.1, 0.0, 0.2, 0.9, 1.0, 1.1))]
    xs = [relay.var(f"x{k}", shape=shape) for k, (_, shape, _, _) in enumerate(cases)]
    outs = [make(x, size, roi=roi, **common) for x, (make, _, size, roi) in zip(xs, cases)]
    mod = relay.IRModule.from_expr(relay.Function(xs, relay.Tuple(outs)))
    data = [rng.uniform(-2, 2, shape).astype("float32") for _, shape, _, _ in cases]
    got = relay.create_executor("graph", mod=mod).evaluate()(*data)
    for k, (value, call) in enumerate(zip(data, outs)):
        attrs = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(xs, call)))["main"].body.attrs
        _close(got[k].numpy(), ind.resize(value, attrs), f"{mode}/{method} rank {k + 1}")


def test_align_corners_output_length_one_reads_the_first_pixel():
    x = np.arange(12, dtype="float32").reshape(1, 1, 3, 4)
    a = Resize2DAttrs(size=(1, 1), coordinate_transformation_mode="align_corners")
    assert get("image.resize2d").ref(x, a).tolist() == [[[[0.0]]]]


def test_nearest_asymmetric_integer_upsampling_is_exact():
    # scale 1/3 is inexact in float32; the integer path repeats every source pixel three times
    x = np.arange(7, dtype="float32").reshape(1, 1, 7)
    a = Resize1DAttrs(size=(21,), method="nearest_neighbor", coordinate_transformation_mode="asymmetric",
                      rounding_method="")
    np.testing.assert_array_equal(get("image.resize1d").ref(x, a)[0, 0], np.repeat(np.arange(7.0), 3))
    mod = relay.IRModule.from_expr(relay.image.resize1d(relay.var("x", shape=(1, 1, 7)), (21,),
                                                        method="nearest_neighbor",
                                                        coordinate_transformation_mode="asymmetric"))
    out = relay.create_executor("graph", mod=mod).evaluate()(x).numpy()
    np.testing.assert_array_equal(out[0, 0], np.repeat(np.arange(7.0), 3))


def test_empty_batch_resizes_to_an_empty_result():
    x = relay.var("x", shape=(0, 2, 3, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.image.resize2d(x, (4, 5), method="cubic")))
    for kind in ("debug", "graph", "vm"):
        out = relay.create_executor(kind, mod=mod).evaluate()(np.zeros((0, 2, 3, 3), "float32")).numpy()
        assert out.shape == (0, 2, 4, 5)


def test_crop_and_resize_guards():
    x = np.arange(32, dtype="float32").reshape(2, 1, 4, 4)
    boxes = np.array([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]], "float32")
    a = get("image.crop_and_resize").attrs_type(crop_size=(1, 1))
    # a crop of 1 samples the box centre (TensorFlow), not NaN
    got = get("image.crop_and_resize").ref(x, boxes, np.array([0, 1], "int32"), a)
    np.testing.assert_allclose(got[:, 0, 0, 0], [7.5, 23.5])
    # box indices outside the batch read the nearest image, on the compiled executors as well
    data = relay.var("d", shape=(2, 1, 4, 4))
    b = relay.var("b", shape=(2, 4))
    i = relay.var("i", shape=(2,), dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([data, b, i], relay.image.crop_and_resize(data, b, i, (2, 2),
                                                                                            "NCHW")))
    for kind in ("debug", "graph"):
        out = relay.create_executor(kind, mod=mod).evaluate()(x, boxes, np.array([-4, 9], "int32")).numpy()
        np.testing.assert_array_equal(out[0], x[0, :, ::3, ::3])
        np.testing.assert_array_equal(out[1], x[1, :, ::3, ::3])


def test_grid_sample_matches_torch_conventions_on_known_points():
    x = np.arange(12, dtype="float32").reshape(1, 1, 3, 4)
    # two points (x, y): (-1, -1) and (0, 1); channel 0 of the grid holds x
    grid = np.array([[[[-1.0, 0.0]], [[-1.0, 1.0]]]], "float32")
    op = get("image.grid_sample")
    aligned = op.ref(x, grid, op.attrs_type())
    np.testing.assert_allclose(aligned[0, 0, 0], [0.0, 9.5])    # (0, 0) and (row 2, col 1.5)
    half = op.ref(x, grid, op.attrs_type(align_corners=False))
    np.testing.assert_allclose(half[0, 0, 0], [0.0, 4.75])      # row 2.5: half the weight is outside (zeros)
    border = op.ref(x, grid, op.attrs_type(align_corners=False, padding_mode="border"))
    np.testing.assert_allclose(border[0, 0, 0], [0.0, 9.5])     # clamped back to row 2


@pytest.mark.parametrize("bad,error", [
    (dict(method="bicubic"), AttrsError), (dict(coordinate_transformation_mode="tf"), AttrsError),
    (dict(rounding_method="nearest"), AttrsError), (dict(layout="NCDHW"), OpNotImplemented),
    (dict(roi=(0.0, 1.0)), AttrsError), (dict(size=(2, 3, 4)), AttrsError)])
def test_resize_rejects_bad_attrs(bad, error):
    with pytest.raises(error):
        relay.image.resize2d(relay.var("x", shape=(1, 1, 2, 2)), **dict(dict(size=(3, 3)), **bad))


def test_resize_rejects_wrong_rank_with_the_types():
    call = relay.image.resize2d(relay.var("x", shape=(2, 2, 2)), (3, 3))
    with pytest.raises(TypeInferenceError, match="rank 4"):
        relay.transform.InferType()(relay.IRModule.from_expr(call))


def test_resize1d_and_3d_need_constant_sizes():
    with pytest.raises(OpNotImplemented, match="resize2d"):
        relay.image.resize1d(relay.var("x", shape=(1, 1, 2)), relay.var("s", shape=(1,), dtype="int64"))


def test_dyn_resize2d_runs_on_the_vm_and_becomes_static():
    x = relay.var("x", shape=(1, 2, 3, 4))
    size = relay.var("size", shape=(2,), dtype="int64")
    call = relay.image.resize2d(x, size, method="cubic", coordinate_transformation_mode="align_corners")
    assert call.op.name == "dyn.image.resize2d"
    data = np.random.default_rng(0).uniform(-1, 1, (1, 2, 3, 4)).astype("float32")
    mod = relay.IRModule.from_expr(relay.Function([x, size], call))
    for hw in ((5, 7), (2, 2)):
        out = relay.create_executor("vm", mod=mod).evaluate()(data, np.array(hw, "int64")).numpy()
        want = ind.resize(data, Resize2DAttrs(size=hw, method="cubic", coordinate_transformation_mode="align_corners"))
        _close(out, want)
    const_size = relay.image.resize2d(x, relay.const(np.array([5, 7], "int64")))
    assert const_size.op.name == "image.resize2d"      # a constant size is static at once, as TVM
    dyn = relay.IRModule.from_expr(relay.Function([x], get("dyn.image.resize2d")(
        x, relay.const(np.array([5, 7], "int64")), relay.const(np.zeros(4, "float32")), attrs=Resize2DAttrs())))
    static = relay.transform.DynamicToStatic()(dyn)
    assert "dyn." not in static.astext()
    assert str(static["main"].ret_type) == "Tensor[(1, 2, 5, 7), float32]"
    out = relay.create_executor("graph", mod=static).evaluate()(data).numpy()
    _close(out, ind.resize(data, Resize2DAttrs(size=(5, 7))))


def test_resize3d_roi_is_start_then_end_per_axis():
    x = np.random.default_rng(4).uniform(size=(1, 1, 3, 3, 3)).astype("float32")
    a = Resize3DAttrs(size=(2, 2, 2), coordinate_transformation_mode="tf_crop_and_resize",
                      roi=(0.0, 0.0, 0.5, 1.0, 1.0, 1.0))
    got = get("image.resize3d").ref(x, a)
    # depth and height span the whole image, width starts halfway: corners d, h in {0, 2}, w in {1, 2}
    np.testing.assert_allclose(got[0, 0], x[0, 0][np.ix_([0, 2], [0, 2], [1, 2])], rtol=1e-6)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_dilation2d_against_loops_in_both_layouts(layout):
    rng = np.random.default_rng(5)
    shape, kshape = ((1, 2, 6, 5), (2, 3, 2)) if layout == "NCHW" else ((1, 6, 5, 2), (3, 2, 2))
    x, w = rng.uniform(-1, 1, shape).astype("float32"), rng.uniform(-1, 1, kshape).astype("float32")
    call = relay.image.dilation2d(relay.var("x", shape=shape), relay.var("w", shape=kshape), strides=(2, 1),
                                  padding=(1, 1), dilations=(1, 2), data_layout=layout,
                                  kernel_layout="IHW" if layout == "NCHW" else "HWI")
    mod = relay.IRModule.from_expr(call)
    out = relay.create_executor("graph", mod=mod).evaluate()(x, w).numpy()
    attrs = relay.transform.InferType()(mod)["main"].body.attrs
    _close(out, ind.dilation2d(x, w, attrs))


def test_affine_grid_feeds_grid_sample_as_an_identity_warp():
    theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], "float32")
    x = np.random.default_rng(6).uniform(size=(1, 3, 4, 5)).astype("float32")
    t = relay.var("t", shape=(1, 2, 3))
    d = relay.var("d", shape=(1, 3, 4, 5))
    body = relay.image.grid_sample(d, relay.image.affine_grid(t, (4, 5)))
    mod = relay.IRModule.from_expr(relay.Function([t, d], body))
    for kind in ("debug", "graph"):
        np.testing.assert_allclose(relay.create_executor(kind, mod=mod).evaluate()(theta, x).numpy(), x, atol=1e-5)
    with pytest.raises(AttrsError, match="at least 2"):
        relay.image.affine_grid(t, (1, 5))


def test_grid_sample_bicubic_is_2d_only():
    with pytest.raises(AttrsError, match="2-D only"):
        relay.image.grid_sample(relay.var("x", shape=(1, 1, 2, 2, 2)), relay.var("g", shape=(1, 3, 1, 1, 1)),
                                method="bicubic", layout="NCDHW")



def test_affine_grid_without_target_shape_is_a_clear_error():
    """TVM's signature defaults target_shape to None, but a grid needs its size: a RelayError
    naming the attribute, not a TypeError from tuple(None)."""
    from relay_backend.errors import RelayError
    theta = relay.var("theta", shape=(1, 2, 3))
    with pytest.raises(RelayError, match="target_shape"):
        relay.image.affine_grid(theta)
    with pytest.raises(RelayError, match="target_shape"):
        relay.image.affine_grid(theta, 16)


def test_dyn_resize2d_scales_matches_the_static_op_on_the_vm():
    """Run-time scales (one compiled kernel, several values) against image.resize2d with the same
    scales as attrs, every coordinate mode the scales enter; bad scales are InputErrors."""
    x = relay.var("x", shape=(1, 2, 4, 5))
    size, roi, scales = (relay.var(n, shape=(k,), dtype=d) for n, k, d in
                         (("size", 2, "int64"), ("roi", 4, "float32"), ("scales", 2, "float32")))
    data = np.random.default_rng(1).uniform(-1, 1, (1, 2, 4, 5)).astype("float32")
    roi_values = np.array([0.1, 0.2, 0.9, 1.1], "float32")
    for mode in ("half_pixel", "half_pixel_symmetric", "align_corners", "asymmetric", "pytorch_half_pixel",
                 "tf_crop_and_resize"):
        call = relay.dyn.image.resize2d_scales(x, size, roi, scales, method="cubic",
                                               coordinate_transformation_mode=mode)
        run = relay.create_executor("vm", mod=relay.IRModule.from_expr(relay.Function([x, size, roi, scales],
                                                                                      call))).evaluate()
        for factors in ((0.6, 2.3), (1.0, 0.2), (0.25, 1.0)):
            hw = tuple(int(np.floor(n * np.float64(np.float32(f)))) for n, f in zip((4, 5), factors))
            want = ind.resize(data, Resize2DAttrs(size=hw, roi=tuple(roi_values.tolist()), method="cubic",
                                                  coordinate_transformation_mode=mode, scales=factors))
            _close(run(data, np.array(hw, "int64"), roi_values, np.array(factors, "float32")).numpy(), want, mode)
        with pytest.raises(InputError, match="positive finite"):
            run(data, np.array([2, 2], "int64"), roi_values, np.array([0.0, 1.0], "float32"))


def test_dyn_resize2d_scales_refuses_antialias_and_a_scales_attr():
    x = relay.var("x", shape=(1, 1, 4, 4))
    args = (relay.const(np.array([2, 2], "int64")), relay.const(np.zeros(4, "float32")),
            relay.var("s", shape=(2,)))
    for attrs, what in ((Resize2DAttrs(antialias=1), "antialias"), (Resize2DAttrs(scales=(0.5, 0.5)), "attr")):
        with pytest.raises(TypeInferenceError, match=what):
            relay.transform.InferType()(relay.IRModule.from_expr(get("dyn.image.resize2d_scales")(x, *args,
                                                                                                  attrs=attrs)))
