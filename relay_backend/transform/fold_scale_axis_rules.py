"""The per-operator rules of FoldScaleAxis, attached to the ops as Relay does:

  FScaleAxisForwardPrep(call, out_message) -> [message per argument]
  FScaleAxisForwardRewrite(call, new_args, message) -> ScaledValue | Expr | None
  FScaleAxisBackwardPrep(call, in_messages) -> message | None
  FScaleAxisBackwardTransform(call, message, scale, transformer) -> Expr

A message is (axes, require_positive): the axes along which a scale could be absorbed and
whether it must be positive (relu commutes only with positive scales). A ScaledValue is a value
whose true result is `value * scale` along `axes`, carried forward until a conv2d/dense folds
the scale into its weight (or realized as an explicit multiply).
"""
from typing import NamedTuple, Optional

import numpy as np

from .. import op as _op
from ..ir.expr import Call, Constant
from ..ir.dims import is_static, shape_key
from ..ir.shape_math import dims_equal
from ..ir.types import TensorType
from ..op.registry import register_op_attr
from .rewrite import type_locally


class Message(NamedTuple):
    axes: tuple
    require_positive: bool


class ScaledValue(NamedTuple):
    value: object
    axes: tuple
    scale: object       # 1-D (one axis) or the dims of `axes`


def intersect(a: Optional[Message], b: Optional[Message]) -> Optional[Message]:
    if a is None or b is None:
        return None
    axes = tuple(x for x in a.axes if x in b.axes)
    return Message(axes, a.require_positive or b.require_positive) if axes else None


def _ttype(expr) -> TensorType:
    return expr.checked_type


def expand_to_axes(scale, shape, axes):
    """`scale` (its dims being shape[a] for a in axes) reshaped to broadcast against a tensor of
    `shape`: size-1 everywhere else."""
    if len(axes) == 1:
        trailing = len(shape) - axes[0] - 1
        return _op.expand_dims(scale, axis=1, num_newaxis=trailing) if trailing > 0 else scale
    if not all(is_static(shape[a]) for a in axes):     # a reshape needs the sizes as ints
        return None
    return _op.reshape(scale, [int(shape[i]) if i in axes else 1 for i in range(len(shape))])


def realize(value):
    """An Expr: a ScaledValue becomes `value * scale` (typed); anything else is returned."""
    if not isinstance(value, ScaledValue):
        return value
    shape = _ttype(type_locally(value.value)).shape
    return type_locally(_op.multiply(value.value, expand_to_axes(value.scale, shape, value.axes)))


def match_broadcast_to_left_axes(tlhs: TensorType, trhs: TensorType, axes, rhs_value=None):
    """Whether rhs broadcasts against lhs only along `axes` (full size there, 1 elsewhere);
    with rhs_value, also the rhs squeezed to the dims of `axes` (Relay's helper)."""
    if tlhs.ndim < trhs.ndim:
        return False, None
    base = tlhs.ndim - trhs.ndim
    if trhs.ndim == 0 and rhs_value is not None and axes:
        if not all(is_static(tlhs.shape[a]) for a in axes):   # repeat counts are ints
            return False, None
        out = _op.expand_dims(rhs_value, 0, len(axes))
        for i, a in enumerate(axes):
            out = _op.repeat(out, int(tlhs.shape[a]), i)
        return True, out
    squeeze = []
    for i in range(tlhs.ndim):
        if i in axes:
            if i < base or not dims_equal(tlhs.shape[i], trhs.shape[i - base]):
                return False, None
        elif i >= base:
            if trhs.shape[i - base] != 1:
                return False, None
            squeeze.append(i - base)
    if rhs_value is not None and squeeze:
        rhs_value = _op.squeeze(rhs_value, axis=squeeze)
    return True, rhs_value


def is_all_positive_constant(expr) -> bool:
    """A constant > 0 everywhere, possibly behind expand_dims/reshape/transpose/squeeze/repeat."""
    while isinstance(expr, Call) and getattr(expr.op, "name", None) in (
            "expand_dims", "reshape", "transpose", "squeeze", "repeat"):
        expr = expr.args[0]
    return isinstance(expr, Constant) and bool(np.all(expr.data.view_numpy() > 0))


def _layout_axes(call):
    attrs = call.attrs
    return attrs.data_layout, attrs.kernel_layout, attrs.out_layout or attrs.data_layout


def _is_depthwise(call) -> bool:
    weight = _ttype(call.args[1]).shape
    kernel = call.attrs.kernel_layout
    return weight[kernel.index("O")] == call.attrs.groups and weight[kernel.index("I")] == 1


def _conv_foldable(call) -> bool:
    kernel = call.attrs.kernel_layout
    simple = kernel.isupper() and call.attrs.data_layout.isupper()
    return simple and (call.attrs.groups == 1 or _is_depthwise(call))


# --- forward: relu, add/subtract pass a scale through; multiply makes one; conv2d/dense fold it --
def relu_forward_prep(call, message):
    return [Message(message.axes, True) if message is not None else None]


def relu_forward_rewrite(call, new_args, message):
    x = new_args[0]
    if not isinstance(x, ScaledValue):
        return None
    return ScaledValue(Call(call.op, [x.value], call.attrs, call.type_args), x.axes, x.scale)


def add_sub_forward_prep(call, message):
    tlhs, trhs = _ttype(call.args[0]), _ttype(call.args[1])
    if message is not None:
        if match_broadcast_to_left_axes(tlhs, trhs, message.axes)[0]:
            return [message, None]
        if match_broadcast_to_left_axes(trhs, tlhs, message.axes)[0]:
            return [None, message]
    return [None, None]


def add_sub_forward_rewrite(call, new_args, message):
    lhs, rhs = new_args
    if isinstance(lhs, ScaledValue) == isinstance(rhs, ScaledValue):
        return None
    scaled, other, scaled_first = (lhs, rhs, True) if isinstance(lhs, ScaledValue) else (rhs, lhs, False)
    full = _ttype(call.args[0] if scaled_first else call.args[1])
    scale = expand_to_axes(scaled.scale, full.shape, scaled.axes)
    if scale is None:
        return None
    other = _op.divide(other, scale)
    args = [scaled.value, other] if scaled_first else [other, scaled.value]
    return ScaledValue(Call(call.op, args, call.attrs, call.type_args), scaled.axes, scaled.scale)


def multiply_forward_rewrite(call, new_args, message):
    if message is None or any(isinstance(a, ScaledValue) for a in new_args):
        return None
    lhs, rhs = new_args
    tlhs, trhs = _ttype(call.args[0]), _ttype(call.args[1])
    for value, factor, tv, tf in ((lhs, rhs, tlhs, trhs), (rhs, lhs, trhs, tlhs)):
        ok, squeezed = match_broadcast_to_left_axes(tv, tf, message.axes, factor)
        if ok and (not message.require_positive or is_all_positive_constant(squeezed)):
            return ScaledValue(value, message.axes, squeezed)
    return None


def conv2d_forward_prep(call, message):
    if not _conv_foldable(call):
        return [None, None]
    return [Message((call.attrs.data_layout.index("C"),), False), None]


def conv2d_forward_rewrite(call, new_args, message):
    data, weight = new_args
    if not isinstance(data, ScaledValue) or isinstance(weight, ScaledValue):
        return None
    kernel = call.attrs.kernel_layout
    axis = kernel.index("O") if _is_depthwise(call) and call.attrs.groups > 1 else kernel.index("I")
    scale = expand_to_axes(data.scale, _ttype(call.args[1]).shape, (axis,))
    return Call(call.op, [data.value, _op.multiply(weight, scale)], call.attrs, call.type_args)


def dense_forward_prep(call, message):
    return [Message((_ttype(call.args[0]).ndim - 1,), False), None]


def dense_forward_rewrite(call, new_args, message):
    data, weight = new_args
    if not isinstance(data, ScaledValue) or isinstance(weight, ScaledValue):
        return None
    return Call(call.op, [data.value, _op.multiply(weight, data.scale)], call.attrs, call.type_args)


# --- backward: conv2d/dense/bias_add/relu/add accept an output scale; multiply pushes it in ------
def relu_backward_prep(call, in_messages):
    m = in_messages[0]
    return Message(m.axes, True) if m is not None else None


def relu_backward_transform(call, message, scale, transformer):
    if message is None:
        return transformer.normal(call)
    return Call(call.op, [transformer.transform(call.args[0], message, scale)], call.attrs,
                call.type_args)


def add_sub_backward_prep(call, in_messages):
    tlhs, trhs = _ttype(call.args[0]), _ttype(call.args[1])
    ml, mr = in_messages
    if ml is not None and match_broadcast_to_left_axes(tlhs, trhs, ml.axes)[0]:
        return ml
    if mr is not None and match_broadcast_to_left_axes(trhs, tlhs, mr.axes)[0]:
        return mr
    if ml is not None and mr is not None and ml.axes == mr.axes and shape_key(tlhs.shape) == shape_key(trhs.shape):
        return ml
    return None


def add_sub_backward_transform(call, message, scale, transformer):
    if message is None:
        return transformer.normal(call)
    lhs_arg, rhs_arg = call.args
    ml, mr = transformer.message(lhs_arg), transformer.message(rhs_arg)
    if ml is not None and mr is not None:
        args = [transformer.transform(lhs_arg, message, scale),
                transformer.transform(rhs_arg, message, scale)]
    else:
        scaled_first = ml is not None
        full = _ttype(lhs_arg if scaled_first else rhs_arg)
        factor = expand_to_axes(scale, full.shape, message.axes)
        if factor is None:
            return transformer.normal(call)
        scaled = transformer.transform(lhs_arg if scaled_first else rhs_arg, message, scale)
        other = _op.multiply(transformer.transform(rhs_arg if scaled_first else lhs_arg), factor)
        args = [scaled, other] if scaled_first else [other, scaled]
    return Call(call.op, args, call.attrs, call.type_args)


def multiply_backward_transform(call, message, scale, transformer):
    lhs, rhs = call.args
    tlhs, trhs = _ttype(lhs), _ttype(rhs)
    for value, factor, tv, tf in ((lhs, rhs, tlhs, trhs), (rhs, lhs, trhs, tlhs)):
        m = transformer.message(value)
        if m is None:
            continue
        ok, squeezed = match_broadcast_to_left_axes(tv, tf, m.axes, factor)
        if ok and (not m.require_positive or is_all_positive_constant(squeezed)):
            return transformer.transform(value, m, squeezed)
        break
    return transformer.normal(call)


def conv2d_backward_prep(call, in_messages):
    if not _conv_foldable(call):
        return None
    _, _, out_layout = _layout_axes(call)
    return Message((out_layout.index("C"),), False)


def conv2d_backward_transform(call, message, scale, transformer):
    if message is None:
        return transformer.normal(call)
    data = transformer.transform(call.args[0])
    weight = transformer.transform(call.args[1])
    factor = expand_to_axes(scale, _ttype(call.args[1]).shape, (call.attrs.kernel_layout.index("O"),))
    return Call(call.op, [data, _op.multiply(weight, factor)], call.attrs, call.type_args)


def bias_add_backward_prep(call, in_messages):
    m = in_messages[0]
    axis = call.attrs.axis % _ttype(call.args[0]).ndim
    return m if m is not None and m.axes == (axis,) else None


def bias_add_backward_transform(call, message, scale, transformer):
    if message is None:
        return transformer.normal(call)
    data = transformer.transform(call.args[0], message, scale)
    bias = _op.multiply(transformer.transform(call.args[1]), scale)
    return Call(call.op, [data, bias], call.attrs, call.type_args)


def dense_backward_prep(call, in_messages):
    return Message((_ttype(call).ndim - 1,), False)


def dense_backward_transform(call, message, scale, transformer):
    if message is None:
        return transformer.normal(call)
    data = transformer.transform(call.args[0])
    weight = transformer.transform(call.args[1])
    return Call(call.op, [data, _op.multiply(weight, _op.expand_dims(scale, axis=1))], call.attrs,
                call.type_args)


_RULES = {
    "nn.relu": dict(ForwardPrep=relu_forward_prep, ForwardRewrite=relu_forward_rewrite,
                    BackwardPrep=relu_backward_prep, BackwardTransform=relu_backward_transform),
    "nn.leaky_relu": dict(ForwardPrep=relu_forward_prep, ForwardRewrite=relu_forward_rewrite,
                          BackwardPrep=relu_backward_prep, BackwardTransform=relu_backward_transform),
    "add": dict(ForwardPrep=add_sub_forward_prep, ForwardRewrite=add_sub_forward_rewrite,
                BackwardPrep=add_sub_backward_prep, BackwardTransform=add_sub_backward_transform),
    "subtract": dict(ForwardPrep=add_sub_forward_prep, ForwardRewrite=add_sub_forward_rewrite,
                     BackwardPrep=add_sub_backward_prep,
                     BackwardTransform=add_sub_backward_transform),
    "multiply": dict(ForwardRewrite=multiply_forward_rewrite,
                     BackwardTransform=multiply_backward_transform),
    "nn.conv2d": dict(ForwardPrep=conv2d_forward_prep, ForwardRewrite=conv2d_forward_rewrite,
                      BackwardPrep=conv2d_backward_prep, BackwardTransform=conv2d_backward_transform),
    "nn.bias_add": dict(BackwardPrep=bias_add_backward_prep,
                        BackwardTransform=bias_add_backward_transform),
    "nn.dense": dict(ForwardPrep=dense_forward_prep, ForwardRewrite=dense_forward_rewrite,
                     BackwardPrep=dense_backward_prep, BackwardTransform=dense_backward_transform),
}
for _op_name, _hooks in _RULES.items():
    for _hook, _fn in _hooks.items():
        register_op_attr(_op_name, "FScaleAxis" + _hook, _fn)

__all__ = ["Message", "ScaledValue", "intersect", "realize", "match_broadcast_to_left_axes",
           "is_all_positive_constant", "expand_to_axes"]
