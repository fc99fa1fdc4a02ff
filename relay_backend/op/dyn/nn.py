"""dyn.nn.pad: nn.pad with the pad widths given as a (rank, 2) integer tensor (TVM v0.18's name).

The pad value is a scalar tensor input as in nn.pad; the widths are read at run time, so every
output dim is Any and the compute reads before/after from the widths tensor.
"""
import dataclasses

import numpy as np

from ...errors import TypeInferenceError
from ...ir.attrs import Attrs, check_choice
from ...ir.types import TensorType, type_to_str
from .. import samples as S
from ..nn.misc import PAD, PadAttrs, pad_stage
from ..registry import Sample
from ..relations import expect_tensor
from .common import any_shape, defdyn, load_index, read_ints, shape_arg, te_out_shape


@dataclasses.dataclass(frozen=True)
class DynPadAttrs(Attrs):
    pad_mode: str = "constant"

    def __post_init__(self):
        check_choice("pad_mode", self.pad_mode, ("constant", "edge", "reflect"))


def _pad_rel(arg_types, attrs):
    op = "dyn.nn.pad"
    data = expect_tensor(arg_types[0], f"{op} data")
    widths = shape_arg(arg_types[1], op, "pad_width", ndim=2)
    value = expect_tensor(arg_types[2], f"{op} pad_value")
    if tuple(int(d) for d in widths.shape) != (data.ndim, 2):
        raise TypeInferenceError(f"{op}: pad_width must have shape ({data.ndim}, 2), one (before, after) "
                                 f"pair per axis of {type_to_str(data)}, got {type_to_str(widths)}")
    if value.ndim != 0:
        raise TypeInferenceError(f"{op}: pad_value must be a scalar, got {type_to_str(value)}")
    return TensorType(any_shape(data.ndim), data.dtype)


def _pad_static(attrs, values):
    flat = read_ints(values[1], "dyn.nn.pad", "pad_width")
    return PAD, PadAttrs(tuple(zip(flat[0::2], flat[1::2])), attrs.pad_mode)


def _pad_compute(attrs, inputs, out_type):
    x, widths, value = inputs
    pairs = [(load_index(widths, k, 0), load_index(widths, k, 1)) for k in range(len(x.shape))]
    return [pad_stage(x, value, pairs, attrs.pad_mode, te_out_shape(out_type, "out"))]


PAD_DYN = defdyn(
    "dyn.nn.pad", inputs=("data", "pad_width", "pad_value"), static_inputs=(0, 2), attrs=DynPadAttrs,
    to_static=_pad_static, rel=_pad_rel, compute=_pad_compute, level=2,
    samples=lambda rng: [
        Sample([S.rand(rng, (2, 3)), np.array([[1, 2], [0, 3]], "int64"), np.array(0.5, "float32")], DynPadAttrs()),
        Sample([S.rand(rng, (4, 3), "float64"), np.array([[1, 0], [2, 1]], "int32"), np.array(0, "float64")],
               DynPadAttrs("edge")),
        Sample([S.rand(rng, (4, 5)), np.array([[3, 2], [1, 4]], "int64"), np.array(0, "float32")],
               DynPadAttrs("reflect"))],
    doc="nn.pad(data, pad_width read at run time, pad_value)")


def pad(data, pad_width, pad_value, pad_mode="constant"):
    """dyn.nn.pad: padding whose widths are known only at run time.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    pad_width : relay.Expr
        A (rank, 2) integer tensor: the (before, after) widths of each axis.
    pad_value : relay.Expr
        A scalar, the value of the added cells in "constant" mode.
    pad_mode : str, optional
        "constant" (the default), "edge" or "reflect", as in nn.pad.

    Returns
    -------
    result : relay.Expr
        The padded tensor.
    """
    return PAD_DYN(data, pad_width, pad_value, attrs=DynPadAttrs(pad_mode))


__all__ = ["pad"]
