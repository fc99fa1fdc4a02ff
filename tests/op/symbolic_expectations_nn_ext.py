"""Symbolic-shape cases of the issue-20 nn ops (tests/op/symbolic_expectations.py imports this
module, which adds its cases to the same table)."""
import relay_backend as relay

from .symbolic_expectations import H, M, N, W, _v, case

# (w + 2 - 3) // 1 + 1 = w; (h - 3) // 2 + 1, simplified
case("nn.conv1d", "Tensor[(n, 4, w), float32]")(
    lambda: relay.nn.conv1d(_v("x", (N, 3, W)), _v("k", (4, 3, 3)), padding=1))
case("nn.conv3d", "Tensor[(n, 8, m - 2, (h + 1) // 2 - 1, w), float32]")(
    lambda: relay.nn.conv3d(_v("x", (N, 3, M, H, W)), _v("k", (8, 3, 3, 3, 1)), strides=(1, 2, 1)))
# 2 * (w - 1) + 3 - 2 + 1 = w * 2
case("nn.conv1d_transpose", "Tensor[(n, 4, w * 2), float32]")(
    lambda: relay.nn.conv1d_transpose(_v("x", (N, 3, W)), _v("k", (3, 4, 3)), strides=2, padding=1,
                                      output_padding=1))
case("nn.conv2d_transpose", "Tensor[(n, 6, h * 2, w + 2), float32]")(
    lambda: relay.nn.conv2d_transpose(_v("x", (N, 2, H, W)), _v("k", (2, 3, 2, 3)), strides=(2, 1), groups=2))
case("nn.conv3d_transpose", "Tensor[(n, 5, m + 1, h + 1, w + 1), float32]")(
    lambda: relay.nn.conv3d_transpose(_v("x", (N, 3, M, H, W)), relay.var("k"), channels=5, kernel_size=2))
case("nn.max_pool1d", "Tensor[(n, 3, w // 2), float32]")(lambda: relay.nn.max_pool1d(_v("x", (N, 3, W)), 2, 2))
case("nn.avg_pool1d", "Tensor[(n, m, w), float32]")(
    lambda: relay.nn.avg_pool1d(_v("x", (N, M, W)), 3, 1, padding=1))
case("nn.max_pool3d", "Tensor[(n, 2, m // 2, h // 2, w // 2), float32]")(
    lambda: relay.nn.max_pool3d(_v("x", (N, 2, M, H, W)), 2, 2))
case("nn.avg_pool3d", "Tensor[(n, 2, m - 1, h - 1, w - 1), float32]")(
    lambda: relay.nn.avg_pool3d(_v("x", (N, 2, M, H, W)), 2))
case("nn.adaptive_max_pool1d", "Tensor[(n, m, 4), float32]")(
    lambda: relay.nn.adaptive_max_pool1d(_v("x", (N, M, W)), 4))
case("nn.adaptive_avg_pool1d", "Tensor[(n, m, w), float32]")(lambda: relay.nn.adaptive_avg_pool1d(_v("x", (N, M, W))))
case("nn.adaptive_max_pool2d", "Tensor[(n, m, 3, w), float32]")(
    lambda: relay.nn.adaptive_max_pool2d(_v("x", (N, M, H, W)), (3, None)))
case("nn.adaptive_max_pool3d", "Tensor[(n, 1, 1, 1, m), float32]")(
    lambda: relay.nn.global_max_pool3d(_v("x", (N, H, W, 2, M)), layout="NDHWC"))
case("nn.adaptive_avg_pool3d", "Tensor[(n, m, 2, 2, 2), float32]")(
    lambda: relay.nn.adaptive_avg_pool3d(_v("x", (N, M, H, W, 4)), 2))
case("nn.depth_to_space", "Tensor[(n, 2, h * 2, w * 2), float32]")(
    lambda: relay.nn.depth_to_space(_v("x", (N, 8, H, W)), 2))
case("nn.space_to_depth", "Tensor[(n, h // 3, w // 3, 18), float32]")(
    lambda: relay.nn.space_to_depth(_v("x", (N, H, W, 2)), 3, layout="NHWC"))
case("nn.space_to_batch_nd", "Tensor[(8, (h + 1) // 2, (w + 1) // 2 + 1, m), float32]")(
    lambda: relay.nn.space_to_batch_nd(_v("x", (2, H, W, M)), (2, 2), ((1, 0), (2, 1))))
case("nn.batch_to_space_nd", "Tensor[(2, h * 2 - 1, w * 2, m), float32]")(
    lambda: relay.nn.batch_to_space_nd(_v("x", (8, H, W, M)), (2, 2), ((1, 0), (0, 0))))
case("nn.mirror_pad", "Tensor[(n + 3, m), float32]")(
    lambda: relay.nn.mirror_pad(_v("x", (N, M)), ((1, 2), (0, 0)), "REFLECT"))
case("nn.dilate", "Tensor[(n, m * 2 - 1), float32]")(lambda: relay.nn.dilate(_v("x", (N, M)), (1, 2)))
# an integer scale keeps the size variable; a fractional one is known only at run time
case("nn.upsampling", "Tensor[(n, m, h * 2, ?), float32]")(
    lambda: relay.nn.upsampling(_v("x", (N, M, H, W)), 2, 1.5))
case("nn.upsampling3d", "Tensor[(n, 2, 2, h * 3, w), float32]")(
    lambda: relay.nn.upsampling3d(_v("x", (N, 2, 1, H, W)), 2, 3, 1))
case("dyn.nn.upsampling", "Tensor[(n, m, ?, ?), float32]")(
    lambda: relay.nn.upsampling(_v("x", (N, M, H, W)), _v("s", (), "float64"), 2.0))
case("dyn.nn.upsampling3d", "Tensor[(n, ?, ?, ?, m), float32]")(
    lambda: relay.nn.upsampling3d(_v("x", (N, 2, H, W, M)), _v("s", (), "float32"), 1, 2, layout="NDHWC"))
case("nn.instance_norm", "Tensor[(n, m, h), float32]")(
    lambda: relay.nn.instance_norm(_v("x", (N, M, H)), relay.var("g"), relay.var("b")))
case("nn.group_norm", "Tensor[(n, 6, h, w), float32]")(
    lambda: relay.nn.group_norm(_v("x", (N, 6, H, W)), relay.var("g"), relay.var("b"), num_groups=3))
case("nn.l2_normalize", "Tensor[(n, m), float32]")(lambda: relay.nn.l2_normalize(_v("x", (N, M)), 1e-6, [1]))
case("nn.cross_entropy", "float32")(lambda: relay.nn.cross_entropy(_v("p", (N, M)), _v("t", (N, M))))
case("nn.cross_entropy_with_logits", "float32")(
    lambda: relay.nn.cross_entropy_with_logits(_v("p", (N, M)), _v("t", (N, M))))
case("nn.nll_loss", "Tensor[(n, h), float32]")(
    lambda: relay.nn.nll_loss(_v("p", (N, M, H)), _v("t", (N, H), "int32"), _v("w", (M,)), reduction="none"))
case("nn.max_pool2d_grad", "Tensor[(n, m, h, w), float32]")(
    lambda: relay.nn.max_pool2d_grad(_v("g", (N, M, H, W)), _v("x", (N, M, H, W)), (3, 3), padding=(1, 1)))
case("nn.avg_pool2d_grad", "Tensor[(n, 3, 4, 4), float32]")(
    lambda: relay.nn.avg_pool2d_grad(_v("g", (N, 3, 2, 2)), _v("x", (N, 3, 4, 4)), (2, 2), (2, 2)))
case("nn.conv2d_backward_weight", "Tensor[(8, 3, 3, 3), float32]")(
    lambda: relay.nn.conv2d_backward_weight(_v("g", (N, 8, H, W)), _v("x", (N, 3, H, W)), padding=1, kernel_size=3))
case("nn.sparse_dense", "Tensor[(n, 4), float32]")(
    lambda: relay.nn.sparse_dense(_v("x", (N, 6)), (_v("d", (M,)), _v("i", (M,), "int32"), _v("p", (5,), "int32"))))
case("nn.sparse_transpose", "(Tensor[(m), float32], Tensor[(m), int32], Tensor[(5), int32])")(
    lambda: relay.nn.sparse_transpose((_v("d", (M,)), _v("i", (M,), "int32"), _v("p", (5,), "int32"))).astuple())
case("nn.sparse_add", "Tensor[(4, n), float32]")(
    lambda: relay.nn.sparse_add(_v("x", (4, N)), (_v("d", (M,)), _v("i", (M,), "int32"), _v("p", (5,), "int32"))))
case("nn.fifo_buffer", "Tensor[(n, 8), float32]")(lambda: relay.nn.fifo_buffer(_v("x", (N, 2)), _v("b", (N, 8)), 1))
# ceil((h + 2 - 2 * 2) / 1): the border of max_displacement 2 on each side, padding 1
case("nn.correlation", "Tensor[(n, 25, h - 2, w - 2), float32]")(
    lambda: relay.nn.correlation(_v("a", (N, M, H, W)), _v("b", (N, M, H, W)), 1, 2, 1, 1, 1, True, "NCHW"))
case("nn.deformable_conv2d", "Tensor[(n, 4, h, w), float32]")(
    lambda: relay.nn.deformable_conv2d(_v("x", (N, 3, H, W)), _v("o", (N, 18, H, W)), _v("k", (4, 3, 3, 3)),
                                       padding=1))
