"""Symbolic-shape cases of the image and vision ops (registered into symbolic_expectations'
table; kept apart so each operator family adds its own file)."""
import relay_backend as relay

from .symbolic_expectations import H, M, N, W, _v, case

case("image.resize1d", "Tensor[(n, 3, 8), float32]")(
    lambda: relay.image.resize1d(_v("x", (N, 3, W)), (8,)))
case("image.resize2d", "Tensor[(n, 5, 7, m), float32]")(
    lambda: relay.image.resize2d(_v("x", (N, H, W, M)), (5, 7), layout="NHWC", method="cubic"))
case("image.resize3d", "Tensor[(n, m, 2, 3, 4), float64]")(
    lambda: relay.image.resize3d(_v("x", (N, M, H, H, W)), (2, 3, 4), out_dtype="float64"))
case("dyn.image.resize2d", "Tensor[(n, 3, ?, ?), float32]")(
    lambda: relay.image.resize2d(_v("x", (N, 3, H, W)), _v("size", (2,), "int64")))
case("dyn.image.resize2d_scales", "Tensor[(n, 3, ?, ?), float32]")(
    lambda: relay.dyn.image.resize2d_scales(_v("x", (N, 3, H, W)), _v("size", (2,), "int64"), _v("roi", (4,)),
                                            _v("scales", (2,))))
case("image.crop_and_resize", "Tensor[(m, 3, 4, 5), float32]")(
    lambda: relay.image.crop_and_resize(_v("x", (N, 3, H, W)), _v("b", (M, 4)), _v("i", (M,), "int32"), (4, 5),
                                        "NCHW"))
case("image.dilation2d", "Tensor[(n, 3, h - 2, (w + 1) // 2 - 1), float32]")(
    lambda: relay.image.dilation2d(_v("x", (N, 3, H, W)), _v("k", (3, 3, 3)), strides=(1, 2)))
case("image.affine_grid", "Tensor[(n, 2, 4, 5), float32]")(
    lambda: relay.image.affine_grid(_v("t", (N, 2, 3)), (4, 5)))
case("image.grid_sample", "Tensor[(n, m, h, w), float32]")(
    lambda: relay.image.grid_sample(_v("x", (N, M, 7, 7)), _v("g", (N, 2, H, W))))

# --- vision (detection outputs keep the batch and box counts symbolic) ------------------------------
case("vision.get_valid_counts", "(Tensor[(n), int32], Tensor[(n, m, 6), float32], Tensor[(n, m), int32])")(
    lambda: relay.vision.get_valid_counts(_v("d", (N, M, 6)), 0.5).astuple())
case("vision.non_max_suppression", "(Tensor[(n, m), int32], Tensor[(n, 1), int32])")(
    lambda: relay.vision.non_max_suppression(_v("d", (N, M, 6)), _v("c", (N,), "int32"),
                                             _v("i", (N, M), "int32")).astuple())
case("vision.non_max_suppression:boxes", "Tensor[(n, m, 6), float32]")(
    lambda: relay.vision.non_max_suppression(_v("d", (N, M, 6)), _v("c", (N,), "int32"), _v("i", (N, M), "int32"),
                                             return_indices=False))
case("vision.all_class_non_max_suppression", "(Tensor[(n * h * m, 3), int64], Tensor[(1), int64])")(
    lambda: relay.vision.all_class_non_max_suppression(_v("b", (N, M, 4)), _v("s", (N, H, M)), 3, 0.5,
                                                       0.1).astuple())
case("vision.regular_non_max_suppression",
     "(Tensor[(n, 5, 4), float32], Tensor[(n, 5), float32], Tensor[(n, 5), float32], Tensor[(n), int32])")(
    lambda: relay.vision.regular_non_max_suppression(_v("b", (N, M, 4)), _v("s", (N, M, 4)), 2, 5, 3, 0.5,
                                                     0.1).astuple())
case("vision.roi_align", "Tensor[(m, h, 2, 3), float32]")(
    lambda: relay.vision.roi_align(_v("x", (N, H, W, W)), _v("r", (M, 5)), (2, 3), 0.5))
case("vision.roi_pool", "Tensor[(m, 2, 2, h), float32]")(
    lambda: relay.vision.roi_pool(_v("x", (N, W, W, H)), _v("r", (M, 5)), (2, 2), 1.0, layout="NHWC"))
case("vision.multibox_prior", "Tensor[(1, h * w * 3, 4), float32]")(
    lambda: relay.vision.multibox_prior(_v("x", (N, 3, H, W)), (0.5, 0.3), (1.0, 2.0)))
case("vision.multibox_transform_loc", "(Tensor[(n, m, 6), float32], Tensor[(n), int32])")(
    lambda: relay.vision.multibox_transform_loc(_v("c", (N, 3, M)), _v("l", (N, M * 4)),
                                                _v("a", (1, M, 4))).astuple())
case("vision.proposal", "Tensor[(n * 10, 5), float32]")(
    lambda: relay.vision.proposal(_v("c", (N, 6, H, W)), _v("b", (N, 12, H, W)), _v("i", (N, 3)), (1.0, 2.0, 4.0),
                                  (1.0,), 16, 0.7, 100, 10, 4, False))
case("vision.yolo_reorg", "Tensor[(n, m * 4, h // 2, w // 2), float32]")(
    lambda: relay.vision.yolo_reorg(_v("x", (N, M, H, W)), 2))
