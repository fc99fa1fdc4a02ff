"""x86 nn.conv2d in the layouts other than NCHW / OIHW (NHWC data, HWIO / HWOI / OHWI kernels,
any output layout), every groups value: plain, grouped and depthwise. The NCHW / OIHW cases
are x86_conv.py's (a channel-blocked micro-kernel, or the row schedule for groups > 1), and at
opt_level 3 AlterOpLayout's NCHWc kernels; without this file a channel-last convolution got
the generic schedule (scalar reduction innermost, no parallel loop).

conv2d_nhwc.x86 / group_conv2d_nhwc.x86 / depthwise_conv2d_nhwc.x86 (plevel 15) are the op's
own compute (so the semantics are the generic ones) with x86_conv_nd.schedule_window_tiles:

    for (n, oh, ow, oc.outer) in parallel:            # NHWC output; one tile per task
        acc[bc] = 0                                     # bc output channels: a few SIMD registers
        for rc, kh: for kw (unrolled when short): for oc in vectorized(bc):
            acc[oc] += data[n, oh*sh + kh*dh - top, ow*sw + kw*dw - left, g(oc)*I + rc]
                       * weight[kh, kw, rc, oc]          # HWIO: one vector load of taps
        for oc in vectorized(bc): out[n, oh, ow, oc] = epilogue(acc[oc])

With a channel-last output the innermost, vectorized axis is the output channel: a depthwise
tap is then one vector load of the input's channels times one vector of taps (the NHWC
counterpart of the NCHWc depthwise kernel), a plain NHWC convolution broadcasts each input
value against a vector of output channels. The zero padding is inlined into the loads.
Symbolic shapes keep the generic schedule.
"""
from .base import register_strategy
from .common import all_static, nonempty, static_shape
from .x86_conv_nd import schedule_window_tiles
from ..op.registry import get as get_op

PLEVEL = 15


def implementation_name(attrs, data_shape) -> str:
    """Which of the three names a call's implementation carries (one schedule; the name tells
    tuning records and profiles apart)."""
    channels = data_shape[attrs.data_layout.index("C")]
    if attrs.groups == 1:
        return "conv2d_nhwc.x86"
    return "depthwise_conv2d_nhwc.x86" if attrs.groups == channels else "group_conv2d_nhwc.x86"


@register_strategy("nn.conv2d", "x86")
def conv2d_layouts_strategy_x86(strategy, attrs, inputs, out_type, target):
    if attrs.data_layout == "NCHW" and attrs.kernel_layout == "OIHW":
        return          # x86_conv.py's
    if not all_static(*inputs):
        return
    op = get_op("nn.conv2d")
    strategy.add_implementation(op.compute, schedule_window_tiles,
                                implementation_name(attrs, static_shape(inputs[0])), PLEVEL,
                                condition=nonempty)
