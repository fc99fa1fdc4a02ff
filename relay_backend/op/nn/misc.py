"""Shape-level and bookkeeping nn operators: nn.bias_add (BROADCAST), nn.batch_flatten and
nn.pad (INJECTIVE), nn.dropout (OPAQUE; identity at inference, returning (data, mask) as TVM).
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs, always_printed, check_choice
from ...ir.expr import Constant, Expr, TupleWrapper, const
from ...ir.dims import is_static
from ...ir.shape_math import add, prod
from ...ir.types import TensorType, TupleType
from .. import samples as S
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T


# --- nn.bias_add ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class BiasAddAttrs(Attrs):
    axis: int = 1

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))


def _bias_add_rel(arg_types, attrs) -> TensorType:
    """(data, bias of shape (data.shape[axis],)) -> data type."""
    op = "nn.bias_add"
    data = C.tensor_arg(op, arg_types[0], "data")
    bias = C.tensor_arg(op, arg_types[1], "bias")
    types = dict(data=data, bias=bias)
    ax = C.norm_axis(op, attrs.axis, data.ndim, **types)
    C.same_dtype(op, **types)
    C.channel_vector(op, bias, data.shape[ax], "bias", **types)
    return data


def channel_params_fill(*indices):
    """fill_inputs for per-channel parameters (bias, gamma, beta, moving stats, alpha) at
    `indices`: each unannotated one is a (C,) vector of the data's dtype, C = data.shape[axis],
    as TVM's BiasAddRel / BatchNormRel / LayerNormRel / PReluRel assign them."""
    def fill_inputs(arg_types, attrs) -> dict:
        data = arg_types[0]
        if not isinstance(data, TensorType) or not -data.ndim <= attrs.axis < data.ndim:
            return {}
        vec = TensorType((data.shape[attrs.axis],), data.dtype)
        return {i: vec for i in indices if arg_types[i] is None}
    return fill_inputs


def _bias_add_ref(x, bias, attrs):
    shape = [1] * x.ndim
    shape[attrs.axis % x.ndim] = bias.shape[0]
    return (x + bias.reshape(shape)).astype(x.dtype)


def _bias_add_compute(attrs, inputs, out_type):
    """data[i] + bias[i[axis]]."""
    x, bias = inputs
    ax = T.norm_axis(attrs.axis, x.ndim)
    return [te.compute(x.shape, lambda *i: x[i] + bias[i[ax]], name="bias_add", tag=BIAS_ADD.tag)]


BIAS_ADD = defop("nn.bias_add", inputs=("data", "bias"), attrs=BiasAddAttrs, rel=_bias_add_rel,
                 pattern=OpPattern.BROADCAST, ref=_bias_add_ref, level=1, compute=_bias_add_compute,
                 fill_inputs=channel_params_fill(1),
                 samples=lambda rng: [
                     Sample([S.rand(rng, (2, 3, 2, 2)), S.rand(rng, (3,))], BiasAddAttrs()),
                     Sample([S.rand(rng, (4, 5), "float64"), S.rand(rng, (5,), "float64")], BiasAddAttrs(-1)),
                     Sample([S.rand(rng, (1, 2, 2, 6), "float16"), S.rand(rng, (6,), "float16")], BiasAddAttrs(3)),
                     Sample([S.rand(rng, (3, 4), "int32", -9, 9), S.rand(rng, (4,), "int32", -9, 9)],
                            BiasAddAttrs())],
                 doc="out = data + bias broadcast along axis")


def bias_add(data, bias, axis=1):
    """Add a 1-D bias to `data` along one axis.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    bias : relay.Expr
        The bias, a 1-D tensor of length data.shape[axis] and data's dtype.
    axis : int, optional
        The axis of `data` that the bias runs along. Defaults to 1 (the channels of NCHW).

    Returns
    -------
    result : relay.Expr
        A tensor of data's shape and dtype.
    """
    return BIAS_ADD(data, bias, attrs=BiasAddAttrs(axis))


# --- nn.batch_flatten ----------------------------------------------------------------------------
def _batch_flatten_rel(arg_types, attrs=None) -> TensorType:
    """(N, d1, d2, ...) -> (N, d1 * d2 * ...); an Any among d_i gives Any (a static 0 gives 0)."""
    op = "nn.batch_flatten"
    data = C.tensor_arg(op, arg_types[0], "data")
    if data.ndim < 1:
        raise C.rel_error(op, "data must have rank >= 1 (a batch axis)", data=data)
    return TensorType((data.shape[0], prod(data.shape[1:])), data.dtype)


def _batch_flatten_compute(attrs, inputs, out_type):
    """out[n, j] = data[n, unravel(j)] (row-major over the non-batch axes)."""
    x, = inputs
    shape = T.dims(x)
    flat = 1
    for d in shape[1:]:
        flat = flat * d

    def f(n, j):
        index = []
        for d in reversed(shape[1:]):
            index.append(j % d)
            j = j // d
        return x[(n,) + tuple(reversed(index))]
    return [te.compute((shape[0], flat), f, name="batch_flatten", tag=BATCH_FLATTEN.tag)]


BATCH_FLATTEN = defop("nn.batch_flatten", inputs=("data",), rel=_batch_flatten_rel, pattern=OpPattern.INJECTIVE,
                      is_reshape=True,
                      compute=_batch_flatten_compute,
                      ref=lambda x, a: x.reshape(x.shape[0], int(np.prod(x.shape[1:], dtype=np.int64))),
                      level=1,
                      samples=lambda rng: [Sample([S.rand(rng, (2, 3, 4, 5))]),
                                           Sample([S.rand(rng, (3, 7), "float64")]),
                                           Sample([S.rand(rng, (1, 2, 3), "int32", -5, 5)]),
                                           Sample([S.rand(rng, (4,), "float16")])],
                      doc="out[n, i] = data[n].flat[i]")


def batch_flatten(data):
    """Flatten every axis but the first: (N, d1, d2, ...) becomes (N, d1 * d2 * ...).

    Parameters
    ----------
    data : relay.Expr
        The input tensor, at least 1-D.

    Returns
    -------
    result : relay.Expr
        The 2-D flattened tensor.
    """
    return BATCH_FLATTEN(data)


# --- nn.pad --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class PadAttrs(Attrs):
    pad_width: tuple = always_printed(())
    pad_mode: str = "constant"

    def __post_init__(self):
        try:
            widths = tuple((int(b), int(a)) for b, a in self.pad_width)
        except (TypeError, ValueError) as err:
            raise AttrsError(f"attribute pad_width={self.pad_width!r} must be a sequence of (before, after) "
                             "int pairs, one per axis") from err
        if any(b < 0 or a < 0 for b, a in widths):
            raise AttrsError(f"attribute pad_width={widths} must be non-negative (use strided_slice to crop)")
        object.__setattr__(self, "pad_width", widths)
        check_choice("pad_mode", self.pad_mode, ("constant", "edge", "reflect"))


def _pad_rel(arg_types, attrs) -> TensorType:
    """(data, scalar pad_value) -> data padded by pad_width (Any stays Any)."""
    op = "nn.pad"
    data = C.tensor_arg(op, arg_types[0], "data")
    value = C.tensor_arg(op, arg_types[1], "pad_value")
    types = dict(data=data, pad_value=value)
    if value.ndim != 0:
        raise C.rel_error(op, f"pad_value must be a scalar, got shape {value.shape}", **types)
    if len(attrs.pad_width) != data.ndim:
        raise C.rel_error(op, f"pad_width has {len(attrs.pad_width)} (before, after) pairs but data has rank "
                              f"{data.ndim}; give one pair per axis", **types)
    out = []
    for axis, (d, (before, after)) in enumerate(zip(data.shape, attrs.pad_width)):
        if not is_static(d):       # Any stays Any, a symbolic size gets the padding added
            out.append(add(d, before + after))
            continue
        if attrs.pad_mode == "reflect" and max(before, after) >= max(d, 1):
            raise C.rel_error(op, f"reflect padding of ({before}, {after}) on axis {axis} needs the axis to be "
                                  f"longer than the padding, but it has {d} elements", **types)
        if attrs.pad_mode == "edge" and d == 0 and before + after:
            raise C.rel_error(op, f"edge padding on axis {axis} needs a non-empty axis", **types)
        out.append(d + before + after)
    return TensorType(out, data.dtype)


def _pad_ref(x, value, attrs):
    if attrs.pad_mode == "constant":
        return np.pad(x, attrs.pad_width, mode="constant", constant_values=np.asarray(value).astype(x.dtype))
    return np.pad(x, attrs.pad_width, mode=attrs.pad_mode)


def _pad_samples(rng):
    A = PadAttrs
    return [Sample([S.rand(rng, (2, 3)), np.array(0, "float32")], A(((1, 2), (0, 3)))),
            Sample([S.rand(rng, (1, 2, 3, 3)), np.array(-1.5, "float32")], A(((0, 0), (0, 0), (1, 1), (2, 0)))),
            Sample([S.rand(rng, (3, 4), "int32", -9, 9), np.array(7, "int32")], A(((2, 0), (1, 1)))),
            Sample([S.rand(rng, (4, 3), "float64"), np.array(0, "float64")], A(((1, 2), (2, 1)), "edge")),
            Sample([S.rand(rng, (4, 5)), np.array(0, "float32")], A(((3, 2), (1, 4)), "reflect")),
            Sample([S.rand(rng, (5,), "float16"), np.array(2, "float16")], A(((2, 2),)))]


def _pad_source_index(i, before: int, size, mode: str):
    """The data index read for output index i on one axis (edge: clamp; reflect: mirror without
    repeating the edge, one reflection suffices since the relation keeps padding < size)."""
    j = i - before
    if mode == "edge":
        return tir.max(tir.min(j, size - 1), 0)
    j = tir.if_then_else(j < 0, -j, j)
    return tir.if_then_else(j >= size, 2 * (size - 1) - j, j)


def pad_stage(x, value, widths, mode: str, out_shape):
    """The te stage of a pad: constant: pad_value (cast to data's dtype) outside the data;
    edge/reflect: index maps. `widths` are (before, after) pairs of ints or index expressions
    (dyn.nn.pad reads them from a tensor), `out_shape` the output's te dims."""
    shape = T.dims(x)
    if mode == "constant":
        def f(*i):
            inside = tir.all(*[T.in_range(k, b, b + d) for k, d, (b, _) in zip(i, shape, widths)])
            source = tuple(k - b for k, (b, _) in zip(i, widths))
            return te.if_then_else(inside, x[source], value[()].astype(x.dtype))
    else:
        def f(*i):
            return x[tuple(_pad_source_index(k, b, d, mode) for k, d, (b, _) in zip(i, shape, widths))]
    return te.compute(out_shape, f, name="pad", tag=PAD.tag)


def _pad_compute(attrs, inputs, out_type):
    x, value = inputs
    out_shape = [d + b + a for d, (b, a) in zip(T.dims(x), attrs.pad_width)]
    return [pad_stage(x, value, attrs.pad_width, attrs.pad_mode, out_shape)]


PAD = defop("nn.pad", inputs=("data", "pad_value"), attrs=PadAttrs, rel=_pad_rel, pattern=OpPattern.INJECTIVE,
            ref=_pad_ref, samples=_pad_samples, level=2, compute=_pad_compute,
            doc="out = data surrounded by pad_width cells: pad_value, the edge value, or a reflection")


def pad(data, pad_width, pad_value=0, pad_mode="constant"):
    """Pad `data` on each axis.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    pad_width : tuple of tuple of int or relay.Expr
        One (before, after) pair per axis: how many cells to add on each side. A non-constant
        Relay expression (a (rank, 2) integer tensor) builds dyn.nn.pad, as TVM does.
    pad_value : float or relay.Expr, optional
        The value of the added cells in "constant" mode (a number or a scalar expression).
        Defaults to 0.
    pad_mode : str, optional
        "constant" (the default) fills with `pad_value`, "edge" repeats the edge value,
        "reflect" mirrors the tensor without repeating the edge.

    Returns
    -------
    result : relay.Expr
        The padded tensor.
    """
    if not isinstance(pad_value, Expr):
        pad_value = const(pad_value)
    if isinstance(pad_width, Constant):
        pad_width = pad_width.data.numpy().tolist()
    if isinstance(pad_width, Expr):
        from ..dyn import nn as dyn_nn     # dyn ops build on this module's ops
        return dyn_nn.pad(data, pad_width, pad_value, pad_mode)
    return PAD(data, pad_value, attrs=PadAttrs(pad_width, pad_mode))


# --- nn.dropout ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DropoutAttrs(Attrs):
    rate: float = 0.5

    def __post_init__(self):
        object.__setattr__(self, "rate", float(self.rate))
        if not 0.0 <= self.rate < 1.0:
            raise AttrsError(f"attribute rate={self.rate} must be in [0, 1)")


def _dropout_rel(arg_types, attrs) -> TupleType:
    """data -> (data type, mask of the data type)."""
    data = C.tensor_arg("nn.dropout", arg_types[0], "data")
    return TupleType([data, data])


def _dropout_compute(attrs, inputs, out_type):
    """Inference form, as the reference: (a copy of data, a mask of ones)."""
    x, = inputs
    one = T.const(1, x.dtype)
    return [te.compute(x.shape, lambda *i: x[i], name="dropout", tag=DROPOUT.tag),
            te.compute(x.shape, lambda *i: one, name="dropout_mask", tag=DROPOUT.tag)]


DROPOUT = defop("nn.dropout", inputs=("data",), attrs=DropoutAttrs, rel=_dropout_rel, pattern=OpPattern.OPAQUE,
                ref=lambda x, a: (x.copy(), np.ones_like(x)), level=1, compute=_dropout_compute,
                samples=lambda rng: [Sample([S.rand(rng, (2, 5))], DropoutAttrs()),
                                     Sample([S.rand(rng, (3, 2, 2), "float64")], DropoutAttrs(0.1))],
                doc="inference: out = data, mask = 1 (SimplifyInference removes it)")


# the parameter the dropout constructors share (constructor_docs completes their docstrings)
DROPOUT_PARAMETERS = {"rate": ("float, optional",
                               "The probability of dropping an element during training, in [0, 1).")}


@documented(DROPOUT_PARAMETERS)
def dropout_raw(data, rate=0.5):
    """Dropout as the (output, mask) pair Relay's nn.dropout op returns.

    In inference (what the executors run) the output is `data` and the mask is ones;
    SimplifyInference removes the op.

    Returns
    -------
    result : relay.TupleWrapper
        The 2-tuple (output, mask).
    """
    return TupleWrapper(DROPOUT(data, attrs=DropoutAttrs(rate)), 2)


@documented(DROPOUT_PARAMETERS)
def dropout(data, rate=0.5):
    """Dropout: the output of dropout_raw (`data` itself at inference).

    Returns
    -------
    result : relay.Expr
        The output tensor, of data's shape.
    """
    return dropout_raw(data, rate)[0]


__all__ = ["bias_add", "batch_flatten", "pad", "dropout", "dropout_raw", "BiasAddAttrs", "PadAttrs",
           "DropoutAttrs"]
