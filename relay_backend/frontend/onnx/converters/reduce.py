"""ONNX reductions (ReduceMean/Sum/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp) and ArgMax/ArgMin.

`axes` is an attribute before ReduceSum-13 / the others-18 and an optional input after;
noop_with_empty_axes=1 with no axes returns the input unchanged. An axes input known only at run
time is reduced over with runtime_shapes.reduce_over (its static length decides the output's
rank; an empty one means "no axes" without reading it).
"""
import numpy as np

from .... import op as _op
from ._registry import converter
from .runtime_shapes import reduce_over, runtime_input

_REDUCERS = {"ReduceMean": _op.mean, "ReduceSum": _op.sum, "ReduceMax": _op.max, "ReduceMin": _op.min,
             "ReduceProd": _op.prod}


def _axes(ctx, inputs):
    """The reduced axes (None: all), or 'noop' when noop_with_empty_axes applies."""
    axes_in_input = ctx.since >= (13 if ctx.op == "ReduceSum" else 18)
    if axes_in_input:
        axes = inputs[1] if len(inputs) > 1 else None
        if runtime_input(ctx, inputs, 1) is not None:
            if ctx.shape(axes) != (0,):
                return axes   # a run-time axes tensor (reduce() builds reduce_over)
            axes = None   # statically empty: no axes
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
    if isinstance(axes, (list, type(None))):
        return _reduction(ctx.op, x, axes, keepdims, lambda v, fn, keep: fn(v, axis=axes, keepdims=keep),
                          lambda m: _op.squeeze(m, axis=_norm_axes(axes, ctx.ndim(x))))
    return _reduction(ctx.op, x, axes, keepdims,
                      lambda v, fn, keep: reduce_over(ctx, v, axes, keep, lambda t, i: fn(t, axis=i, keepdims=True)),
                      None)


def _reduction(op, x, axes, keepdims, over, drop_kept):
    """ONNX reduction `op` of x: `over(value, relay_reducer, keepdims)` reduces over the node's axes
    (static or run time); `drop_kept(m)` removes the kept reduced axes of m (None: reduce m
    again without keepdims)."""
    if op in _REDUCERS:
        return over(x, _REDUCERS[op], keepdims)
    if op == "ReduceL1":
        return over(_op.abs(x), _op.sum, keepdims)
    if op == "ReduceSumSquare":
        return over(_op.multiply(x, x), _op.sum, keepdims)
    if op == "ReduceL2":
        return _op.sqrt(over(_op.multiply(x, x), _op.sum, keepdims))
    if op == "ReduceLogSum":
        return _op.log(over(x, _op.sum, keepdims))
    m = over(x, _op.max, True)  # ReduceLogSumExp, stabilized by the max
    s = _op.log(over(_op.exp(_op.subtract(x, m)), _op.sum, keepdims))
    if keepdims:
        return _op.add(s, m)
    return _op.add(s, drop_kept(m) if drop_kept else over(m, _op.max, False))


def _norm_axes(axes, nd):
    return list(range(nd)) if axes is None else [a % nd for a in axes]


@converter("ArgMax", "ArgMin")
def arg_reduce(ctx, inputs):
    fn = _op.argmax if ctx.op == "ArgMax" else _op.argmin
    out = fn(inputs[0], axis=[int(ctx.attrs.get("axis", 0))], keepdims=bool(ctx.attrs.get("keepdims", 1)),
             select_last_index=bool(ctx.attrs.get("select_last_index", 0)))
    return _op.cast(out, "int64")
