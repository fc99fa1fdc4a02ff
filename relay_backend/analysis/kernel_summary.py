"""What a fused kernel does, for profiles and pictures: its Relay ops and its multiply-adds.

`relay_ops(prim)` lists the operator names inside a primitive function in post-order (e.g.
["nn.conv2d", "add", "nn.relu"]); `mac_count(prim)` counts the multiply-accumulates of its
matrix-product ops (tvm.relay.analysis.get_total_mac_number; also the channel-blocked and packed
forms opt_level 3's AlterOpLayout makes), so a profile can report GFLOP/s (2 FLOPs per MAC). Ops without a MAC rule count 0: their cost is memory, not arithmetic.
"""
import math

from ..ir.expr import Call
from ..ir.functor import post_order
from ..ir.dims import is_static_shape
from ..ir.types import TensorType
from ..op.registry import OpDef


def op_calls(prim) -> list:
    """The operator calls inside `prim`'s body, in post-order."""
    return [n for n in post_order(prim.body) if isinstance(n, Call) and isinstance(n.op, OpDef)]


def relay_ops(prim) -> list:
    """The op names inside a primitive function in post-order, e.g. [nn.conv2d, add, nn.relu]."""
    return [call.op.name for call in op_calls(prim)]


def _static_shape(expr):
    ty = getattr(expr, "_checked_type_", None) or getattr(expr, "checked_type", None)
    if not isinstance(ty, TensorType) or not is_static_shape(ty.shape):
        return None
    return tuple(int(d) for d in ty.shape)


def _conv2d_macs(call, out):
    weight = _static_shape(call.args[1])
    layout = getattr(call.attrs, "kernel_layout", "OIHW") or "OIHW"
    if weight is None or "O" not in layout or len(layout) != len(weight):
        return 0
    return math.prod(out) * math.prod(weight) // max(weight[layout.index("O")], 1)


def _reduce_last(call, out, transpose_attr=None):
    """out elements x K, K the reduced length of the first operand (its last axis, or the one
    before when `transpose_attr` is set)."""
    data = _static_shape(call.args[0])
    if data is None or not data:
        return 0
    transposed = bool(transpose_attr and getattr(call.attrs, transpose_attr, False))
    k = data[-2] if transposed and len(data) >= 2 else data[-1]
    return math.prod(out) * k


def _blocked_conv_macs(call, out):
    """A channel-blocked convolution (opt_level 3's NCHWc kernels): the weight is
    (O/ob, I/ib or 1, KH, KW, ib or 1, ob), so each output sums prod(weight) / (O/ob * ob) terms."""
    weight = _static_shape(call.args[1])
    if weight is None or len(weight) < 3:
        return 0
    return math.prod(out) * math.prod(weight) // max(weight[0] * weight[-1], 1)


MAC_RULES = {
    "nn.conv2d": _conv2d_macs,
    "nn.contrib_conv2d_NCHWc": _blocked_conv_macs,
    "nn.contrib_depthwise_conv2d_NCHWc": _blocked_conv_macs,
    "nn.contrib_dense_pack": lambda call, out: _reduce_last(call, out),   # data (.., K), weight packed
    "nn.dense": lambda call, out: _reduce_last(call, out),
    "nn.matmul": lambda call, out: _reduce_last(call, out, "transpose_a"),
    "nn.batch_matmul": lambda call, out: _reduce_last(call, out, "transpose_a"),
}


def mac_count(prim) -> int:
    """Multiply-accumulates of one run of `prim` (a typed primitive function); 0 when it has no
    matrix products or their shapes are not static."""
    total = 0
    for call in op_calls(prim):
        rule = MAC_RULES.get(call.op.name)
        out = _static_shape(call)
        if rule is not None and out is not None:
            total += rule(call, out)
    return total


__all__ = ["relay_ops", "mac_count", "op_calls", "MAC_RULES"]
