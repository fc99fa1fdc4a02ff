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
