"""Reduction operators: sum, mean, max, min, prod, all, any, argmax, argmin, variance; std,
mean_variance, mean_std and logsumexp are constructors composed from them.

All are COMM_REDUCE and share relations.reduce_rel / arg_reduce_rel. `axis` is normalized to a
tuple or None; as in TVM, None or an empty list means "every axis" (and then `exclude` is ignored).
te computes: one comm_reduce stage (sum/max/min/prod/all/any); mean and variance add an
"elemwise" divide stage; argmax/argmin are one (index, value) tuple reduction returning the index.
float16 sums and products add up in float32, mean and variance in a wider dtype still
(accumulation.py), then cast back; on bools sum/max are `or`, prod/min `and` (numpy's meaning),
while mean and variance of bools are rejected. argmax/argmin over an empty axis are rejected.
"""
import builtins
import dataclasses

import numpy as np

from ..errors import AttrsError, TypeInferenceError
from ..ir import expr as _expr
from ..ir.attrs import Attrs, as_int_tuple
from ..ir.types import type_to_str
from .. import te
from . import compute_common as C
from . import samples as S
from .accumulation import acc_dtype, average_acc_dtype
from .constructor_docs import constructor_doc, documented
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import (arg_reduce_rel, broadcast_shape, expect_tensor, no_bool_rel, reduce_axes, reduce_rel,
                        reduce_shape)


# --- attrs ----------------------------------------------------------------------------------------
def _norm_axis(axis):
    """None / int / sequence -> None or a tuple of ints; an empty sequence means all axes (None)."""
    if axis is None:
        return None
    items = axis if isinstance(axis, (list, tuple)) else [axis]
    if builtins.any(isinstance(a, (bool, float, np.floating)) for a in items):
        raise AttrsError(f"attribute axis must be an int or a sequence of ints, got {axis!r}")
    out = as_int_tuple(axis, name="axis")
    return out if out else None


@dataclasses.dataclass(frozen=True)
class ReduceAttrs(Attrs):
    axis: tuple = None
    keepdims: bool = False
    exclude: bool = False

    def __post_init__(self):
        object.__setattr__(self, "axis", _norm_axis(self.axis))
        object.__setattr__(self, "keepdims", bool(self.keepdims))
        object.__setattr__(self, "exclude", bool(self.exclude))


@dataclasses.dataclass(frozen=True)
class ArgReduceAttrs(ReduceAttrs):
    select_last_index: bool = False

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "select_last_index", bool(self.select_last_index))


@dataclasses.dataclass(frozen=True)
class VarianceAttrs(ReduceAttrs):
    unbiased: bool = False

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "unbiased", bool(self.unbiased))


# --- samples --------------------------------------------------------------------------------------
_SHAPES = ((5,), (2, 3), (3, 1, 4), (2, 3, 2, 2))


def _random_axis(rng, ndim):
    """None, one axis or a few distinct axes, some given as negative numbers."""
    kind = rng.integers(0, 3)
    if kind == 0 or ndim == 0:
        return None
    count = 1 if kind == 1 else int(rng.integers(1, ndim + 1))
    axes = rng.choice(ndim, size=count, replace=False)
    signed = [int(a) - ndim if rng.random() < 0.5 else int(a) for a in axes]
    return signed[0] if count == 1 else tuple(signed)


def _reduce_samples(attrs_cls, dtypes, low=-2.0, high=2.0, long_range=None, with_bool=False, **extra):
    """Samples over several ranks and dtypes with random axes, keepdims and exclude; with
    `long_range` (lo, hi) also a float16 reduction over S.FLOAT16_REDUCTION_TERMS values drawn
    from it (the accumulation guard), with `with_bool` also bool reductions."""
    def gen(rng):
        out = [Sample([S.rand(rng, (), dtypes[0], low, high)], attrs_cls(**extra), "0-d"),
               Sample([S.rand(rng, (2, 3), dtypes[0], low, high)], attrs_cls(axis=(), **extra), "axis=[]")]
        for i, shape in enumerate(_SHAPES):
            for j, dtype in enumerate(dtypes):
                axis = _random_axis(rng, len(shape))
                keep, excl = bool((i + j) % 2), bool(i == 3 and axis is not None)
                out.append(Sample([S.rand(rng, shape, dtype, low, high)],
                                  attrs_cls(axis=axis, keepdims=keep, exclude=excl, **extra)))
        if long_range is not None:
            long_x = S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS), "float16", *long_range)
            out.append(Sample([long_x], attrs_cls(axis=1, **extra), "float16, long reduction"))
        if with_bool:
            out += [Sample([S.rand(rng, (3, 4), "bool")], attrs_cls(axis=1, **extra), "bool"),
                    Sample([S.rand(rng, (2, 3), "bool")], attrs_cls(**extra), "bool, every axis")]
        return out
    return gen


# --- sum, mean, max, min, prod, all, any --------------------------------------------------------------
def _ref_acc_dtype(dtype):
    """Accumulate floats in float64 (a reference should be more exact than the code it checks)."""
    return "float64" if np.dtype(dtype).kind == "f" else dtype


def _np_reduce(fn, accumulate=False):
    def ref(x, attrs):
        axes = reduce_axes(attrs, x.ndim)
        kw = {"dtype": _ref_acc_dtype(x.dtype)} if accumulate else {}
        return np.asarray(fn(x, axis=axes, keepdims=attrs.keepdims, **kw)).astype(x.dtype)
    return ref


def _extreme_ref(find_max):
    """max/min reference: an empty reduction gives the reducer's identity (-inf / the dtype's
    lowest value for max, +inf / its highest for min), as the te compute and TVM do; numpy
    alone raises on a zero-size reduction."""
    fn = np.max if find_max else np.min

    def ref(x, attrs):
        axes = reduce_axes(attrs, x.ndim)
        initial = _extreme_identity(x.dtype, lowest=find_max)
        return np.asarray(fn(x, axis=axes, keepdims=attrs.keepdims, initial=initial)).astype(x.dtype)
    return ref


def _extreme_identity(dtype, lowest):
    """The lowest (identity of max) or highest (identity of min) value of `dtype`."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return -np.inf if lowest else np.inf
    if dt.kind == "b":
        return not lowest
    info = np.iinfo(dt)
    return info.min if lowest else info.max


def _mean_ref(x, attrs):
    axes = reduce_axes(attrs, x.ndim)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    total = np.sum(x, axis=axes, keepdims=attrs.keepdims, dtype="float64")
    return np.asarray(total / count).astype(x.dtype)  # ints: truncates toward zero, like TVM's divide


def _bool_reduce_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "data")
    if data.dtype != "bool":
        raise TypeInferenceError(f"all/any: data must be a bool tensor, got {type_to_str(data)}; "
                                 "compare with a value first (e.g. not_equal(x, 0))")
    return reduce_rel(arg_types, attrs)


_AVERAGE_OF_BOOL = ('cast to a number first (relay.cast(x, "float32")): the mean of bools is a fraction, '
                    "which a bool result cannot hold")
_mean_rel = no_bool_rel("mean", reduce_rel, _AVERAGE_OF_BOOL)

_NUM = ("float32", "int32", "float64")
_FLOAT = ("float32", "float64")

def _mean_compute(attrs, inputs, out_type):
    """A sum stage (comm_reduce) in the average accumulation dtype, then an elementwise
    divide by the reduced element count and a cast back to the output dtype."""
    parts = C.ReduceParts(inputs[0], attrs)
    total = C.reduce_stage("mean", te.sum, inputs[0], parts, average_acc_dtype)
    return [C.divide_by_count("mean", total, parts.count, C.out_dtype(out_type))]


# name, relation, reference, te compute, sample dtypes, sample value range, long float16 sample
# range, whether bool samples apply (mean of bools is rejected), support level
REDUCE_OPS = [
    ("sum", reduce_rel, _np_reduce(np.sum, accumulate=True), C.reduce_compute("sum", te.sum, acc_dtype), _NUM,
     (-2.0, 2.0), (-2.0, 2.0), True, 4),
    ("mean", _mean_rel, _mean_ref, _mean_compute, _FLOAT, (-2.0, 2.0), (100.0, 101.0), False, 4),
    ("max", reduce_rel, _extreme_ref(True), C.reduce_compute("max", te.max), _NUM, (-9.0, 9.0), (-9.0, 9.0), True,
     4),
    ("min", reduce_rel, _extreme_ref(False), C.reduce_compute("min", te.min), _NUM, (-9.0, 9.0), (-9.0, 9.0), True,
     4),
    ("prod", reduce_rel, _np_reduce(np.prod, accumulate=True), C.reduce_compute("prod", C.prod, acc_dtype), _NUM,
     (0.5, 1.5), (0.998, 1.002), True, 4),
]


def _with_empty_reductions(gen):
    """Add zero-size reductions (the result is the reducer's identity) to a sample generator."""
    def samples(rng):
        return gen(rng) + [
            Sample([np.zeros((2, 0, 3), "float32")], ReduceAttrs(axis=1, keepdims=True), "empty-axis"),
            Sample([np.zeros((0, 4), "int32")], ReduceAttrs(axis=0), "empty-int"),
            Sample([np.zeros((3, 0), "float64")], ReduceAttrs(axis=(0, 1)), "empty-all")]
    return samples


for _name, _rel, _ref, _compute, _dtypes, (_lo, _hi), _long, _bool, _level in REDUCE_OPS:
    _gen = _reduce_samples(ReduceAttrs, _dtypes, _lo, _hi, long_range=_long, with_bool=_bool)
    defop(_name, inputs=("data",), attrs=ReduceAttrs, rel=_rel, pattern=OpPattern.COMM_REDUCE,
          ref=_ref, samples=_with_empty_reductions(_gen) if _name in ("max", "min") else _gen,
          level=_level, compute=_compute)

for _name, _fn, _reducer in (("all", np.all, C.all_reducer), ("any", np.any, C.any_reducer)):
    defop(_name, inputs=("data",), attrs=ReduceAttrs, rel=_bool_reduce_rel, pattern=OpPattern.COMM_REDUCE,
          ref=_np_reduce(_fn), samples=_reduce_samples(ReduceAttrs, ("bool",)), level=4,
          compute=C.reduce_compute(_name, _reducer))


# --- argmax, argmin ---------------------------------------------------------------------------------
def _arg_reduce_ref(find):
    """Index of the extreme value, flattened (row-major) over the reduced axes, as int32."""
    def ref(x, attrs):
        axes = reduce_axes(attrs, x.ndim)
        kept = [a for a in range(x.ndim) if a not in axes]
        moved = np.transpose(x, kept + list(axes))
        flat = moved.reshape(moved.shape[:len(kept)] + (int(np.prod(moved.shape[len(kept):], dtype=np.int64)),))
        if attrs.select_last_index:
            idx = flat.shape[-1] - 1 - find(flat[..., ::-1], axis=-1)
        else:
            idx = find(flat, axis=-1)
        return np.asarray(idx).reshape(reduce_shape(x.shape, axes, attrs.keepdims)).astype("int32")
    return ref


def _arg_samples(rng):
    out = _reduce_samples(ArgReduceAttrs, ("float32", "float64"), long_range=(-2.0, 2.0), with_bool=True)(rng)
    for last in (False, True):  # small ints make ties, which select_last_index decides
        out.append(Sample([S.rand(rng, (3, 4), "int32", 0, 2)], ArgReduceAttrs(axis=1, select_last_index=last)))
        out.append(Sample([S.rand(rng, (2, 3, 2), "int32", 0, 1)],
                          ArgReduceAttrs(axis=(0, 2), keepdims=True, select_last_index=last)))
    return out


def _arg_reduce_compute(op_name, find_max):
    """One tuple reduction over (flat index, value); the op's result is its index output."""
    def compute(attrs, inputs, out_type):
        data = inputs[0]
        parts = C.ReduceParts(data, attrs)
        reducer = C.arg_reducer(find_max, attrs.select_last_index, data.dtype)

        def body(*i):
            return reducer((parts.flat_reduce_index(), data[parts.index(i)]), axis=parts.raxes)
        index, _ = te.compute(parts.out_shape, body, name=C.stage_name(op_name), tag=C.op_tag(op_name))
        return [index]
    return compute


ARGMAX = defop("argmax", inputs=("data",), attrs=ArgReduceAttrs, rel=arg_reduce_rel("argmax"),
               pattern=OpPattern.COMM_REDUCE, ref=_arg_reduce_ref(np.argmax), samples=_arg_samples, level=4,
               compute=_arg_reduce_compute("argmax", True))
ARGMIN = defop("argmin", inputs=("data",), attrs=ArgReduceAttrs, rel=arg_reduce_rel("argmin"),
               pattern=OpPattern.COMM_REDUCE, ref=_arg_reduce_ref(np.argmin), samples=_arg_samples, level=4,
               compute=_arg_reduce_compute("argmin", False))


# --- variance (data, mean) ----------------------------------------------------------------------------
def _variance_rel(arg_types, attrs):
    """variance takes the data and its mean (keepdims shape, broadcastable to data)."""
    data = expect_tensor(arg_types[0], "data")
    mean_t = expect_tensor(arg_types[1], "mean")
    if mean_t.dtype != data.dtype:
        raise TypeInferenceError(f"variance: mean has dtype {mean_t.dtype} but data has {data.dtype} "
                                 f"(data: {type_to_str(data)}, mean: {type_to_str(mean_t)})")
    if len(broadcast_shape(data.shape, mean_t.shape, data, mean_t)) != data.ndim:
        raise TypeInferenceError(f"variance: mean {type_to_str(mean_t)} has a higher rank than data "
                                 f"{type_to_str(data)}; compute it with keepdims=True")
    return reduce_rel([data], attrs)


def _variance_ref(x, m, attrs):
    axes = reduce_axes(attrs, x.ndim)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    d = x.astype("float64") - m.astype("float64")
    total = np.sum(d * d, axis=axes, keepdims=attrs.keepdims)
    return np.asarray(total / builtins.max(count - int(attrs.unbiased), 1)).astype(x.dtype)


def _variance_samples(rng):
    out = []
    for sample in _reduce_samples(VarianceAttrs, _FLOAT, long_range=(-2.0, 2.0))(rng):
        x, attrs = sample.inputs[0], sample.attrs.with_(unbiased=bool(rng.integers(0, 2)))
        axes = reduce_axes(attrs, x.ndim)
        if int(np.prod([x.shape[a] for a in axes], dtype=np.int64)) < 2:
            attrs = attrs.with_(unbiased=False)
        out.append(Sample([x, np.mean(x, axis=axes, keepdims=True).astype(x.dtype)], attrs))
    return out


def _variance_compute(attrs, inputs, out_type):
    """sum((x - mean)^2) over the axes (mean broadcast against x) in the average accumulation
    dtype, then / max(N - unbiased, 1) and a cast back to the output dtype."""
    data, mean_t = inputs
    parts = C.ReduceParts(data, attrs)
    acc = average_acc_dtype(data.dtype)

    def body(*i):
        idx = parts.index(i)
        d = C.cast(data[idx], acc) - C.cast(mean_t[C.broadcast_index(mean_t, idx, data.shape)], acc)
        return te.sum(d * d, axis=parts.raxes)
    total = te.compute(parts.out_shape, body, name=C.stage_name("variance"), tag=C.op_tag("variance"))
    count = parts.count - int(attrs.unbiased)
    count = te.max(count, 1) if attrs.unbiased else count
    return [C.divide_by_count("variance", total, count, C.out_dtype(out_type))]


VARIANCE = defop("variance", inputs=("data", "mean"), attrs=VarianceAttrs,
                 rel=no_bool_rel("variance", _variance_rel, _AVERAGE_OF_BOOL),
                 pattern=OpPattern.COMM_REDUCE, ref=_variance_ref, samples=_variance_samples, level=4,
                 compute=_variance_compute)


# --- Python constructors with tvm.relay's names ---------------------------------------------------------
# One line per reduction for the constructors' docstrings (constructor_docs adds the sections).
SUMMARIES = {"sum": "The sum of the elements over the given axes.",
             "mean": "The arithmetic mean of the elements over the given axes.",
             "max": "The largest element over the given axes.",
             "min": "The smallest element over the given axes.",
             "prod": "The product of the elements over the given axes.",
             "all": "Logical and of a bool tensor's elements over the given axes.",
             "any": "Logical or of a bool tensor's elements over the given axes."}


def _reduce_ctor(op_name):
    from .registry import get
    op = get(op_name)

    def ctor(data, axis=None, keepdims=False, exclude=False):
        return op(data, attrs=ReduceAttrs(axis, keepdims, exclude))
    ctor.__name__ = op_name
    summary = SUMMARIES.get(op_name, f"Reduce `data` with relay.{op_name} over the given axes.")
    ctor.__doc__ = constructor_doc(summary, ctor)
    return ctor


sum, mean, max, min, prod, all, any = (_reduce_ctor(n) for n in  # noqa: A001
                                       ("sum", "mean", "max", "min", "prod", "all", "any"))

_ARG_MEANINGS = {"select_last_index": ("bool", "If True, a tie returns the index of the last extreme "
                                                "element; if False, of the first.")}
_INDEX_RESULT = ("result", "relay.Expr", "An int32 tensor of indices into the reduced axes.")
_UNBIASED = {"unbiased": ("bool", "If True, divide by N - 1 (Bessel's correction, the sample estimate) "
                                   "instead of N.")}


@documented(_ARG_MEANINGS, _INDEX_RESULT)
def argmax(data, axis=None, keepdims=False, exclude=False, select_last_index=False):
    """The int32 index of the largest element over the given axes (counted in the flattened
    reduced axes when there are several)."""
    return ARGMAX(data, attrs=ArgReduceAttrs(axis, keepdims, exclude, select_last_index))


@documented(_ARG_MEANINGS, _INDEX_RESULT)
def argmin(data, axis=None, keepdims=False, exclude=False, select_last_index=False):
    """The int32 index of the smallest element over the given axes (counted in the flattened
    reduced axes when there are several)."""
    return ARGMIN(data, attrs=ArgReduceAttrs(axis, keepdims, exclude, select_last_index))


def _variance_call(data, axis, keepdims, exclude, unbiased):
    m = mean(data, axis, keepdims=True, exclude=exclude)
    return m, VARIANCE(data, m, attrs=VarianceAttrs(axis, keepdims, exclude, unbiased))


def _mean_and_variance(data, axis, keepdims, exclude, unbiased):
    """(mean, variance) exprs; the mean is recomputed without keepdims only when it must be."""
    m, v = _variance_call(data, axis, keepdims, exclude, unbiased)
    return (m if keepdims else mean(data, axis, keepdims=False, exclude=exclude)), v


@documented(_UNBIASED)
def variance(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """The variance over the given axes: the mean squared deviation from the mean."""
    return _variance_call(data, axis, keepdims, exclude, unbiased)[1]


@documented(_UNBIASED)
def std(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """The standard deviation over the given axes: the square root of variance()."""
    from .tensor import sqrt
    return sqrt(variance(data, axis, keepdims, exclude, unbiased))


@documented(_UNBIASED, ("result", "relay.TupleWrapper", "A 2-tuple (mean, variance) of expressions."))
def mean_variance(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """The mean and the variance over the given axes, sharing one computation of the mean."""
    m, v = _mean_and_variance(data, axis, keepdims, exclude, unbiased)
    return _expr.TupleWrapper(_expr.Tuple([m, v]), 2)


@documented(_UNBIASED, ("result", "relay.TupleWrapper", "A 2-tuple (mean, std) of expressions."))
def mean_std(data, axis=None, keepdims=False, exclude=False, unbiased=False):
    """The mean and the standard deviation over the given axes."""
    from .tensor import sqrt
    m, v = _mean_and_variance(data, axis, keepdims, exclude, unbiased)
    return _expr.TupleWrapper(_expr.Tuple([m, sqrt(v)]), 2)


@documented()
def logsumexp(data, axis=None, keepdims=False):
    """log(sum(exp(data))) over the given axes, computed stably as max + log(sum(exp(data - max)))."""
    from .tensor import exp, log
    peak = max(data, axis, keepdims=True)
    out = log(sum(exp(data - peak), axis, keepdims=True)) + peak
    if keepdims:
        return out
    from .transform import squeeze
    return squeeze(out, axis=axis)


__all__ = ["sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin", "variance", "std",
           "mean_variance", "mean_std", "logsumexp"]
