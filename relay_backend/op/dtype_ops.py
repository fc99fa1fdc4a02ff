"""Dtype changes beyond cast: reinterpret (the same bits read as another dtype of the same
width, TVM's relay.reinterpret) and cast_like (cast to the dtype of a second tensor, whose
values are never read). Both are ELEMWISE over the data input."""
import numpy as np

from .. import te
from ..errors import TypeInferenceError
from ..ir.types import TensorType
from . import index_math as IM
from . import samples as S
from .compute_common import cast as te_cast
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor
from .tensor import CastAttrs


# --- reinterpret -------------------------------------------------------------------------------
def _width(dtype: str) -> int:
    return 8 * np.dtype(dtype).itemsize


def _reinterpret_rel(arg_types, attrs) -> TensorType:
    data = expect_tensor(arg_types[0], "data")
    if "bool" in (data.dtype, attrs.dtype) or _width(data.dtype) != _width(attrs.dtype):
        raise TypeInferenceError(
            f"reinterpret: {data.dtype} -> {attrs.dtype} needs two non-bool dtypes of the same width "
            f"({_width(data.dtype)} vs {_width(attrs.dtype)} bits); use cast to convert values")
    return TensorType(data.shape, attrs.dtype)


def _reinterpret_ref(x, attrs):
    return np.ascontiguousarray(x).view(attrs.dtype)


def _reinterpret_compute(attrs, inputs, out_type):
    x, = inputs
    return [IM.compute(REINTERPRET, IM.te_dims(x), lambda *i: te.reinterpret(attrs.dtype, x[i]))]


def _reinterpret_samples(rng):
    finite = np.array([1.0, -2.5, 0.0, -0.0, 3e-3, 1e30, np.inf, 7.0], "float32")
    return [Sample([S.rand(rng, (2, 3), "float32")], CastAttrs("int32")),
            Sample([finite.view("int32").reshape(2, 4)], CastAttrs("float32")),
            Sample([S.rand(rng, (4,), "float64")], CastAttrs("uint64")),
            Sample([S.rand(rng, (5,), "int8", -100, 100)], CastAttrs("uint8")),
            Sample([S.rand(rng, (3,), "float16")], CastAttrs("int16")),
            Sample([S.rand(rng, (0, 2), "float32")], CastAttrs("uint32"))]


REINTERPRET = defop("reinterpret", inputs=("data",), attrs=CastAttrs, rel=_reinterpret_rel,
                    pattern=OpPattern.ELEMWISE, ref=_reinterpret_ref, compute=_reinterpret_compute, level=3,
                    samples=_reinterpret_samples, doc="the bits of data read as another dtype of the same width")


def reinterpret(data, dtype):
    """relay.reinterpret: the bits of `data` read as `dtype` (same width, e.g. float32 -> int32).

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    dtype : str
        The dtype the bits are read as; its width is data's.
    Returns
    -------
    result : relay.Expr
        The tensor of data's shape in `dtype`.
    """
    return REINTERPRET(data, attrs=CastAttrs(dtype))


# --- cast_like ---------------------------------------------------------------------------------
def _cast_like_rel(arg_types, attrs=None) -> TensorType:
    data = expect_tensor(arg_types[0], "data")
    like = expect_tensor(arg_types[1], "dtype_like")
    return TensorType(data.shape, like.dtype)


def _cast_like_compute(attrs, inputs, out_type):
    x, like = inputs
    return [IM.compute(CAST_LIKE, IM.te_dims(x), lambda *i: te_cast(x[i], like.dtype))]


CAST_LIKE = defop("cast_like", inputs=("data", "dtype_like"), rel=_cast_like_rel, pattern=OpPattern.ELEMWISE,
                  ref=lambda x, like, attrs: x.astype(like.dtype), compute=_cast_like_compute, level=3,
                  samples=lambda rng: [Sample([S.rand(rng, (2, 3), "float32", -9, 9), S.rand(rng, (4,), "int32")]),
                                       Sample([S.rand(rng, (5,), "int8", -9, 9), S.rand(rng, (), "float64")]),
                                       Sample([S.rand(rng, (3, 1), "float32"), S.rand(rng, (2,), "float16")]),
                                       Sample([S.rand(rng, (4,), "int32"), S.rand(rng, (1,), "bool")])],
                  doc="data cast to the dtype of dtype_like")


def cast_like(data, dtype_like):
    """relay.cast_like: `data` cast to the dtype of `dtype_like` (its values are not read).

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    dtype_like : relay.Expr
        The tensor whose dtype the result takes.
    Returns
    -------
    result : relay.Expr
        The cast tensor, of data's shape.
    """
    return CAST_LIKE(data, dtype_like)


__all__ = ["reinterpret", "cast_like"]
