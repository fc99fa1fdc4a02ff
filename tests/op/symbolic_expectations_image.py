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
case("image.crop_and_resize", "Tensor[(m, 3, 4, 5), float32]")(
    lambda: relay.image.crop_and_resize(_v("x", (N, 3, H, W)), _v("b", (M, 4)), _v("i", (M,), "int32"), (4, 5),
                                        "NCHW"))
case("image.dilation2d", "Tensor[(n, 3, h - 2, (w + 1) // 2 - 1), float32]")(
    lambda: relay.image.dilation2d(_v("x", (N, 3, H, W)), _v("k", (3, 3, 3)), strides=(1, 2)))
case("image.affine_grid", "Tensor[(n, 2, 4, 5), float32]")(
    lambda: relay.image.affine_grid(_v("t", (N, 2, 3)), (4, 5)))
case("image.grid_sample", "Tensor[(n, m, h, w), float32]")(
    lambda: relay.image.grid_sample(_v("x", (N, M, 7, 7)), _v("g", (N, 2, H, W))))
