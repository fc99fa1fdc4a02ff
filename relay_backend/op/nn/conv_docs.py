"""The numpydoc meanings of the parameters the convolution constructors share.

nn.conv1d / conv3d, the transposed convolutions, the channel-blocked NCHWc convolutions,
nn.deformable_conv2d and nn.conv2d_backward_weight all take TVM's convolution attributes
(strides, padding, dilation, groups, channels, kernel_size, the layouts, out_dtype); each
constructor's docstring writes only what is its own and `@documented(CONV_PARAMETERS, CONVOLVED)`
completes it from this table, so every meaning is written once. A window argument takes one
value per spatial axis of the data layout (W; H, W; D, H, W), or one int for every axis.
"""

CONV_PARAMETERS = {
    "data": ("relay.Expr", "The input tensor, in `data_layout`."),
    "weight": ("relay.Expr", "The kernel, in `kernel_layout`. When its type is not annotated it is "
                             "inferred from `channels` and `kernel_size`."),
    "strides": ("int or tuple of int, optional", "The step of the window along each spatial axis."),
    "padding": ("int or tuple of int, optional",
                "Zero padding around the input: one value for every side, one per spatial axis (both "
                "sides), or the padding before each spatial axis followed by the padding after each."),
    "dilation": ("int or tuple of int, optional", "The spacing between kernel taps along each spatial axis."),
    "groups": ("int, optional", "The number of groups the channels are split into: each output channel "
                                "reads only the input channels of its group."),
    "channels": ("None or int, optional", "The number of output channels, when known; None reads it from "
                                          "the kernel."),
    "kernel_size": ("None or tuple of int, optional", "The kernel's spatial extents, when known; None reads "
                                                      "them from the kernel."),
    "data_layout": ("str, optional", 'The order of the letters N, C and the spatial ones in `data` (e.g. '
                                     '"NCW", "NHWC", "NDHWC").'),
    "kernel_layout": ("str, optional", "The order of the letters O, I and the spatial ones in the kernel."),
    "out_layout": ("str, optional", 'The layout of the result; "" means `data_layout`.'),
    "out_dtype": ("str, optional", 'The dtype of the result and of the accumulation; "" means the dtype of '
                                   '`data`.'),
}
CONVOLVED = ("result", "relay.Expr", "The convolved tensor.")

__all__ = ["CONV_PARAMETERS", "CONVOLVED"]
