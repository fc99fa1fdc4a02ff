"""ONNX reductions (ReduceMean/Sum/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp) and ArgMax/ArgMin.

`axes` is an attribute before ReduceSum-13 / the others-18 and an optional input after;
noop_with_empty_axes=1 with no axes returns the input unchanged.
"""
import numpy as np

from .... import op as _op
from ._registry import converter

_REDUCERS = {"ReduceMean": _op.mean, "ReduceSum": _op.sum, "ReduceMax": _op.max, "ReduceMin": _op.min,
             "ReduceProd": _op.prod}


def _axes(ctx, inputs):
    """The reduced axes (None: all), or 'noop' when noop_with_empty_axes applies."""
    axes_in_input = ctx.since >= (13 if ctx.op == "ReduceSum" else 18)
    if axes_in_input:
        axes = inputs[1] if len(inputs) > 1 else None
        axes = None if axes is None else [int(a) for a in np.asarray(ctx.value(axes, "axes")).reshape(-1)]
    else:
        axes = ctx.attrs.ints("axes")
        axes = list(axes) if axes is not None else None
    noop = int(ctx.attrs.get("noop_with_empty_axes", 0))
    if not axes:
        return "noop" if noop else None
    return axes


@converter(*_REDUCERS, "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")
def reduce(ctx, inputs):
    x = inputs[0]
    keepdims = bool(ctx.attrs.get("keepdims", 1))
    axes = _axes(ctx, inputs)
    if axes == "noop":
        return x
    if ctx.op in _REDUCERS:
        return _REDUCERS[ctx.op](x, axis=axes, keepdims=keepdims)
    if ctx.op == "ReduceL1":
        return _op.sum(_op.abs(x), axis=axes, keepdims=keepdims)
    if ctx.op == "ReduceSumSquare":
        return _op.sum(_op.multiply(x, x), axis=axes, keepdims=keepdims)
    if ctx.op == "ReduceL2":
        return _op.sqrt(_op.sum(_op.multiply(x, x), axis=axes, keepdims=keepdims))
    if ctx.op == "ReduceLogSum":
        return _op.log(_op.sum(x, axis=axes, keepdims=keepdims))
    m = _op.max(x, axis=axes, keepdims=True)  # ReduceLogSumExp, stabilized by the max
    s = _op.log(_op.sum(_op.exp(_op.subtract(x, m)), axis=axes, keepdims=keepdims))
    return _op.add(s, m if keepdims else _op.squeeze(m, axis=_norm_axes(axes, ctx.ndim(x))))


def _norm_axes(axes, nd):
    return list(range(nd)) if axes is None else [a % nd for a in axes]


@converter("ArgMax", "ArgMin")
def arg_reduce(ctx, inputs):
    fn = _op.argmax if ctx.op == "ArgMax" else _op.argmin
    out = fn(inputs[0], axis=[int(ctx.attrs.get("axis", 0))], keepdims=bool(ctx.attrs.get("keepdims", 1)),
             select_last_index=bool(ctx.attrs.get("select_last_index", 0)))
    return _op.cast(out, "int64")
