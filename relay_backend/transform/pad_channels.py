"""PadConvChannels: run a convolution whose output channels fill no whole SIMD register on
zero-padded channels, and slice the padding off as late as the channel-wise consumers allow.

    nn.relu(nn.bias_add(nn.conv2d(x, W[O]), b[O]))
      ->  strided_slice(nn.relu(nn.bias_add(nn.conv2d(x, W'[P]), b'[P])), channels 0:O)

W' and b' are W and b with P - O zero channels appended (computed here, so they stay constants).
The target decides whether and to how many channels a conv2d call is padded: the op attribute
"FTVMPadChannels"(call, target) returns P, or None to leave the call (strategy/
x86_alter_layout.py: on x86, when the channel block AlterOpLayout would pick fills fewer SIMD
lanes than padding to a multiple of a register does; SqueezeNet's 1000-class 1x1 convolution
on AVX-512 runs as 63 blocks of 16 instead of 100 blocks of 10 lanes, as onnxruntime pads it
to 1008). The slice then moves below the channel-wise consumers of the padded value: bias_add
on the channel axis with a constant bias, relu, clip, and global average / max pools in NCHW,
so the epilogue fuses into the padded convolution and only the pooled vector is sliced.

Guarantee: the result has the same values (the padded channels are computed and dropped; every
kept channel is the same sum of the same products). Applies to float32 NCHW / OIHW conv2d calls
of static shape without groups whose weight is a constant. Opt_level 3, before
CanonicalizeOps and AlterOpLayout; with no target nothing changes.
"""
import dataclasses

import numpy as np

from ..ir.expr import Call, Constant, Function
from ..ir.functor import ExprMutator
from ..ir.types import TensorType
from ..op.indexing import strided_slice
from ..op.registry import OpDef
from .pass_infra import function_pass
from .rewrite import typed_function

UNARY = ("nn.relu", "clip")
GLOBAL_POOLS = ("nn.global_avg_pool2d", "nn.global_max_pool2d")


def _op_name(expr) -> str:
    return expr.op.name if isinstance(expr, Call) and isinstance(expr.op, OpDef) else ""


def _padded_constant(const: Constant, axis: int, channels: int) -> Constant:
    """`const` with zeros appended on `axis` up to `channels`."""
    data = const.data.numpy()
    widths = [(0, 0)] * data.ndim
    widths[axis] = (0, channels - data.shape[axis])
    return Constant(np.pad(data, widths))


class _ChannelPadder(ExprMutator):
    """Rewrites bottom-up; `padded` maps each slice this pass made to (the padded value, its
    channels, the kept channels), so a channel-wise consumer of the slice is rebuilt on the
    padded value."""

    def __init__(self, target):
        super().__init__()
        self.target = target
        self.padded = {}

    def _slice(self, padded, total, channels):
        out = strided_slice(padded, begin=[0], end=[channels], axes=[1])
        self.padded[out] = (padded, total, channels)
        return out

    def visit_call(self, call):
        new = super().visit_call(call)
        name = _op_name(new)
        if name == "nn.conv2d":
            return self._pad_conv(call, new)
        source = self.padded.get(new.args[0]) if new.args else None
        if source is None:
            return new
        padded, total, channels = source
        if name == "nn.bias_add" and new.attrs.axis in (1, -3) and isinstance(new.args[1], Constant):
            bias = _padded_constant(new.args[1], 0, total)
            return self._slice(Call(new.op, [padded, bias], new.attrs, span=call.span), total, channels)
        if name in UNARY or (name in GLOBAL_POOLS and new.attrs.layout == "NCHW"):
            return self._slice(Call(new.op, [padded, *new.args[1:]], new.attrs, span=call.span), total, channels)
        return new

    def _pad_conv(self, call, new):
        alter = call.op.get_attr("FTVMPadChannels")
        data, weight = new.args
        if alter is None or not isinstance(weight, Constant) or not isinstance(call.checked_type, TensorType):
            return new
        total = alter(call, self.target)
        out_channels = int(call.checked_type.shape[1])
        if not total or total <= out_channels:
            return new
        attrs = dataclasses.replace(call.attrs, channels=total)
        conv = Call(new.op, [data, _padded_constant(weight, 0, total)], attrs, span=call.span)
        return self._slice(conv, total, out_channels)


def pad_conv_channels(func: Function, target, mod=None) -> Function:
    """The PadConvChannels rewrite of one function for `target` (unchanged when None).

    Parameters
    ----------
    func : Function
        The function to rewrite (types are inferred if missing).
    target : Target or str or None
        The target whose FTVMPadChannels rules decide.
    mod : IRModule, optional
        Its module, for type inference. Defaults to None.

    Returns
    -------
    rewritten : Function
        The function with the chosen convolutions on padded channels.
    """
    if target is None:
        return func
    return _ChannelPadder(target).visit(typed_function(func, mod))


def PadConvChannels(target=None):  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 3): conv2d on zero-padded output channels where `target` asks
    for it, the slice moved below bias_add / relu / clip / global pools (module doc).

    Parameters
    ----------
    target : None or str or Target, optional
        The target whose FTVMPadChannels rules decide (x86 "llvm": whole SIMD registers);
        None changes nothing. Defaults to None.

    Returns
    -------
    pass : FunctionPass
        The pass.
    """
    return function_pass(lambda func, mod, ctx: pad_conv_channels(func, target, mod), opt_level=3,
                         name="PadConvChannels", required=["InferType"])


__all__ = ["PadConvChannels", "pad_conv_channels"]
