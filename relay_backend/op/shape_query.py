"""shape_of and ndarray_size: a tensor's shape and element count as tensors (TVM v0.18 names).

They feed the dyn operators (`dyn.reshape(x, shape_of(y))`), so programs can compute shapes at
run time. The output is static in shape ((rank,) and ()); its values are the input's dims, read
by the kernel from its input buffer's shape (size variables bound at run time). Both are OPAQUE:
the kernel reads no element of its input, so it must not be fused after a producer.
"""
import dataclasses

import numpy as np

from .. import te, tir
from ..errors import AttrsError
from ..ir.attrs import Attrs, always_printed
from ..ir.types import TensorType
from . import index_math as IM
from . import samples as S
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor

_INDEX_DTYPES = ("int32", "int64")


@dataclasses.dataclass(frozen=True)
class ShapeOfAttrs(Attrs):
    dtype: str = always_printed("int32")

    def __post_init__(self):
        if self.dtype not in _INDEX_DTYPES:
            raise AttrsError(f"dtype must be one of {list(_INDEX_DTYPES)}, got {self.dtype!r}")


def _shape_of_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "shape_of data")
    return TensorType((data.ndim,), attrs.dtype)


def _shape_of_compute(attrs, inputs, out_type):
    dims = [IM.dim_expr(d).astype(attrs.dtype) for d in IM.te_dims(inputs[0])]
    if not dims:
        return [te.compute((0,), lambda i: tir.const(0, attrs.dtype), name="T_shape_of", tag="opaque")]
    return [te.compute((len(dims),), lambda i: IM.select_chain([(i == k, d) for k, d in enumerate(dims)]),
                       name="T_shape_of", tag="opaque")]


SHAPE_OF = defop(
    "shape_of", inputs=("data",), attrs=ShapeOfAttrs, rel=_shape_of_rel, pattern=OpPattern.OPAQUE, level=10,
    ref=lambda x, a: np.array(np.shape(x), dtype=a.dtype), compute=_shape_of_compute, shape_only=True,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3, 4))], ShapeOfAttrs()),
                         Sample([S.rand(rng, (5,), "int32")], ShapeOfAttrs("int64")),
                         Sample([S.rand(rng, ())], ShapeOfAttrs())],
    doc="out[k] = data.shape[k]")


def _ndarray_size_rel(arg_types, attrs):
    expect_tensor(arg_types[0], "ndarray_size data")
    return TensorType((), attrs.dtype)


def _ndarray_size_compute(attrs, inputs, out_type):
    size = tir.const(1, "int32")
    for d in IM.te_dims(inputs[0]):
        size = size * IM.dim_expr(d)
    return [te.compute((), lambda: size.astype(attrs.dtype), name="T_ndarray_size", tag="opaque")]


NDARRAY_SIZE = defop(
    "ndarray_size", inputs=("data",), attrs=ShapeOfAttrs, rel=_ndarray_size_rel, pattern=OpPattern.OPAQUE,
    level=10, ref=lambda x, a: np.array(np.size(x), dtype=a.dtype), compute=_ndarray_size_compute,
    shape_only=True,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3, 4))], ShapeOfAttrs()),
                         Sample([S.rand(rng, (0, 3), "int32")], ShapeOfAttrs("int64"))],
    doc="out = prod(data.shape)")


def shape_of(data, dtype="int32"):
    """The shape of `data` as a 1-D tensor.

    Parameters
    ----------
    data : relay.Expr
        The tensor whose shape is read (its dims may be known only at run time).
    dtype : str, optional
        The integer dtype of the result. Defaults to "int32".

    Returns
    -------
    result : relay.Expr
        A 1-D tensor of length ndim(data).
    """
    return SHAPE_OF(data, attrs=ShapeOfAttrs(dtype))


def ndarray_size(data, dtype="int32"):
    """The number of elements of `data` as a scalar tensor.

    Parameters
    ----------
    data : relay.Expr
        The tensor whose size is read.
    dtype : str, optional
        The integer dtype of the result. Defaults to "int32".

    Returns
    -------
    result : relay.Expr
        A scalar tensor, the product of data's dimensions.
    """
    return NDARRAY_SIZE(data, attrs=ShapeOfAttrs(dtype))


__all__ = ["shape_of", "ndarray_size"]
