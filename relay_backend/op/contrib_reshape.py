"""contrib_reverse_reshape (TVM v0.18 name; relay.reverse_reshape): reshape whose special codes
(0 copy, -1 infer, -2 copy the rest, -3 merge two) are read from right to left, e.g. (10, 5, 4)
with newshape (-1, 0) gives (50, 4) where reshape gives (40, 5). It is reshape applied to the
reversed shapes, so it shares reshape's rules and compute; INJECTIVE and a reshape (TReshapeOp).
"""
import numpy as np

from ..errors import AttrsError
from ..ir.types import TensorType
from . import index_math as IM
from . import samples as S
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor
from .reshape import ReshapeAttrs, reshape_shape


def reverse_reshape_shape(data: TensorType, attrs: ReshapeAttrs, ishape=None) -> tuple:
    """The output shape: reshape's rules on the reversed input shape and newshape, reversed."""
    if -4 in attrs.newshape:
        raise AttrsError(f"contrib_reverse_reshape: newshape {attrs.newshape} uses -4, which has no "
                         f"right-to-left reading; use 0, -1, -2 or -3")
    dims = tuple(data.shape if ishape is None else ishape)[::-1]
    flipped = ReshapeAttrs(attrs.newshape[::-1], attrs.allowzero)
    return tuple(reshape_shape(TensorType(tuple(data.shape)[::-1], data.dtype), flipped, dims))[::-1]


def _reverse_reshape_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "contrib_reverse_reshape data")
    return TensorType(reverse_reshape_shape(data, attrs), data.dtype)


def _reverse_reshape_compute(attrs, inputs, out_type):
    """Each output element reads the input element of the same row-major flat index."""
    x = inputs[0]
    ishape = IM.te_dims(x)
    oshape = reverse_reshape_shape(IM.probe_type(x), attrs, ishape)
    return [IM.compute(REVERSE_RESHAPE, oshape, lambda *i: x[tuple(IM.unravel(IM.ravel(i, oshape), ishape))])]


REVERSE_RESHAPE = defop(
    "contrib_reverse_reshape", inputs=("data",), attrs=ReshapeAttrs, rel=_reverse_reshape_rel,
    pattern=OpPattern.INJECTIVE, compute=_reverse_reshape_compute, is_reshape=True, level=10,
    ref=lambda x, attrs: x.reshape(reverse_reshape_shape(TensorType(x.shape, str(x.dtype)), attrs)),
    samples=lambda rng: [Sample([S.rand(rng, (10, 5, 4))], ReshapeAttrs((-1, 0)), "TVM's example"),
                         Sample([S.rand(rng, (2, 3, 4), "int32")], ReshapeAttrs((-2, 4))),
                         Sample([S.rand(rng, (2, 3, 4), "float64")], ReshapeAttrs((-3, 0))),
                         Sample([S.rand(rng, (6, 2))], ReshapeAttrs((3, -1, 0)))],
    doc="reshape with the special codes inferred from right to left")


def reverse_reshape(data, newshape):
    """relay.reverse_reshape: reshape reading newshape's special values from the right.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    newshape : int or tuple of int
        The new shape with reshape's special codes (0 copy, -1 infer, -2 copy the rest, -3
        merge two), matched against data's shape from the last axis backwards.
    Returns
    -------
    result : relay.Expr
        The reshaped tensor.
    """
    if isinstance(newshape, (int, np.integer)):
        newshape = [int(newshape)]
    return REVERSE_RESHAPE(data, attrs=ReshapeAttrs(tuple(newshape)))


__all__ = ["reverse_reshape"]
