"""CUDA nn.conv2d (NCHW, OIHW, groups 1): a thread computes OC_BLOCK output channels of one
output pixel, so each input value it loads feeds OC_BLOCK multiply-adds from registers.

conv2d_nchw.cuda (plevel 15; the op's own compute, so results are the generic ones):

    for (n, oc.outer, oh, ow) fused in (blockIdx.x, threadIdx.x):   # adjacent threads: adjacent
        acc[OC_BLOCK] = 0                                             # output columns (coalesced)
        for rc, ry, rx: v = pad(data)[n, rc, oh*sh + ry*dh, ow*sw + rx*dw]
                        for o in unrolled(OC_BLOCK): acc[o] += v * weight[oc.outer*B + o, rc, ry, rx]
        for o: out[n, oc.outer*B + o, oh, ow] = epilogue(acc[o])
"""
from .. import te
from .base import register_strategy
from .common import all_static, divisor_at_most, inline_except, last_reduction, static_shape
from .cuda_common import bind_spatial
from .cuda_generic import schedule_gpu_generic

OC_BLOCK = 4


def schedule_conv2d_nchw(attrs, outs, target):
    """The channel-blocked schedule above for a fused conv2d's single output."""
    s = te.create_schedule(outs)
    conv = last_reduction(s)
    if conv is None or len(outs) != 1 or static_shape(outs[0]) != static_shape(conv.output(0)):
        return schedule_gpu_generic(attrs, outs, target)
    inline_except(s)
    out = outs[0].op
    if out is conv:
        acc = s.cache_write(conv.output(0), "local").op
    else:
        acc = conv
        s[acc].set_scope("local")
    so = s[out]
    n, oc, oh, ow = out.axis
    block = divisor_at_most(static_shape(outs[0])[1], OC_BLOCK)
    oco, oci = so.split(oc, factor=block)
    so.reorder(n, oco, oh, ow, oci)
    _, tx = bind_spatial(so, [n, oco, oh, ow], target)
    sa = s[acc]
    sa.compute_at(so, tx)
    *data, = acc.axis
    sa.reorder(*acc.reduce_axis, *data)
    sa.unroll(data[1])
    return s


def _plain(attrs, inputs, out_type):
    return attrs.groups == 1 and all_static(*inputs)


@register_strategy("nn.conv2d", "cuda")
def conv2d_strategy_cuda(strategy, attrs, inputs, out_type, target):
    if attrs.data_layout != "NCHW" or attrs.kernel_layout != "OIHW":
        return
    from ..op.registry import get as get_op
    strategy.add_implementation(get_op("nn.conv2d").compute, schedule_conv2d_nchw,
                                "conv2d_nchw.cuda", 15, condition=_plain)
