"""nn.mirror_pad (REFLECT / SYMMETRIC padding) and nn.dilate (spread a tensor out by strides,
filling the gaps with a value), both INJECTIVE, as TVM v0.18.

mirror_pad's output index i of an axis of length d with `before` cells of padding reads
j = i - before, mirrored at the edges: REFLECT excludes the edge (-1 -> 1), SYMMETRIC repeats
it (-1 -> 0). A single mirror suffices because the relation keeps the padding within the axis.
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs, always_printed, check_choice
from ...ir.dims import is_static
from ...ir.shape_math import add, mul, sub
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T


@dataclasses.dataclass(frozen=True)
class MirrorPadAttrs(Attrs):
    mode: str = "SYMMETRIC"
    pad_width: tuple = always_printed(())

    def __post_init__(self):
        check_choice("mode", self.mode, ("REFLECT", "SYMMETRIC"))
        try:
            widths = tuple((int(b), int(a)) for b, a in self.pad_width)
        except (TypeError, ValueError) as err:
            raise AttrsError(f"attribute pad_width={self.pad_width!r} must be (before, after) int pairs, one per "
                             "axis") from err
        if any(b < 0 or a < 0 for b, a in widths):
            raise AttrsError(f"attribute pad_width={widths} must be non-negative")
        object.__setattr__(self, "pad_width", widths)


def _mirror_pad_rel(arg_types, attrs) -> TensorType:
    """Each axis grows by before + after; REFLECT needs padding < length, SYMMETRIC <= length."""
    op = "nn.mirror_pad"
    data = C.tensor_arg(op, arg_types[0], "data")
    if len(attrs.pad_width) != data.ndim:
        raise C.rel_error(op, f"pad_width has {len(attrs.pad_width)} (before, after) pairs but data has rank "
                              f"{data.ndim}; give one pair per axis", data=data)
    limit = 1 if attrs.mode == "REFLECT" else 0
    out = []
    for axis, (d, (before, after)) in enumerate(zip(data.shape, attrs.pad_width)):
        if is_static(d) and max(before, after) > int(d) - limit:
            raise C.rel_error(op, f"{attrs.mode} padding ({before}, {after}) on axis {axis} needs the axis to be "
                                  f"{'longer than' if limit else 'at least as long as'} the padding, but it has "
                                  f"{d} elements", data=data)
        out.append(add(d, before + after))
    return TensorType(out, data.dtype)


def _mirror_pad_compute(attrs, inputs, out_type):
    x, = inputs
    shift = 1 if attrs.mode == "REFLECT" else 0

    def source(i, before, size):
        j = i - before
        j = tir.if_then_else(j < 0, -j - 1 + shift, j)
        return tir.if_then_else(j >= size, 2 * size - 1 - shift - j, j)
    return [te.compute([T.dim(d) for d in out_type.shape],
                       lambda *i: x[tuple(source(k, b, d) for k, d, (b, _) in zip(i, T.dims(x), attrs.pad_width))],
                       name="mirror_pad", tag=MIRROR_PAD.tag)]


MIRROR_PAD = defop(
    "nn.mirror_pad", inputs=("data",), attrs=MirrorPadAttrs, rel=_mirror_pad_rel, pattern=OpPattern.INJECTIVE,
    ref=lambda x, a: np.pad(x, a.pad_width, mode=a.mode.lower()), compute=_mirror_pad_compute, level=2,
    samples=lambda rng: [Sample([S.rand(rng, (3, 4))], MirrorPadAttrs("SYMMETRIC", ((1, 3), (4, 0)))),
                         Sample([S.rand(rng, (1, 2, 4, 5), "float64")],
                                MirrorPadAttrs("REFLECT", ((0, 0), (0, 1), (3, 2), (1, 4)))),
                         Sample([S.rand(rng, (5,), "int32", -9, 9)], MirrorPadAttrs("REFLECT", ((2, 2),)))],
    doc="out = data padded by mirroring (REFLECT excludes the edge, SYMMETRIC repeats it)")


def mirror_pad(data, pad_width, mode="SYMMETRIC"):
    """relay.nn.mirror_pad: pad by mirroring the data (mode REFLECT or SYMMETRIC).

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    pad_width : sequence of (int, int)
        The (before, after) padding of each axis of `data`, one pair per axis.
    mode : str, optional
        "SYMMETRIC" mirrors including the edge cell (padding at most the axis length),
        "REFLECT" mirrors around it (padding shorter than the axis). Defaults to "SYMMETRIC".

    Returns
    -------
    result : relay.Expr
        The padded tensor.
    """
    return MIRROR_PAD(data, attrs=MirrorPadAttrs(mode, pad_width))


@dataclasses.dataclass(frozen=True)
class DilateAttrs(Attrs):
    strides: tuple = always_printed(())
    dilation_value: float = 0.0

    def __post_init__(self):
        strides = (self.strides,) if isinstance(self.strides, int) else tuple(self.strides)
        object.__setattr__(self, "strides", C.ints(strides, len(strides), "strides", minimum=1) if strides else ())
        object.__setattr__(self, "dilation_value", float(self.dilation_value))


def _dilate_rel(arg_types, attrs) -> TensorType:
    """Each axis of length d becomes (d - 1) * stride + 1 (0 stays 0)."""
    op = "nn.dilate"
    data = C.tensor_arg(op, arg_types[0], "data")
    if len(attrs.strides) != data.ndim:
        raise C.rel_error(op, f"strides={attrs.strides} must have one stride per axis (rank {data.ndim})", data=data)
    out = [d if is_static(d) and int(d) == 0 else add(mul(sub(d, 1), s), 1) for d, s in zip(data.shape, attrs.strides)]
    return TensorType(out, data.dtype)


def _dilate_ref(x, attrs):
    out = np.full([0 if d == 0 else (d - 1) * s + 1 for d, s in zip(x.shape, attrs.strides)],
                  np.asarray(attrs.dilation_value).astype(x.dtype), x.dtype)
    out[tuple(slice(None, None, s) for s in attrs.strides)] = x
    return out


def _dilate_compute(attrs, inputs, out_type):
    x, = inputs
    value = T.const(attrs.dilation_value, x.dtype)

    def f(*i):
        on_grid = [k % s == 0 for k, s in zip(i, attrs.strides) if s > 1]
        src = tuple(k // s if s > 1 else k for k, s in zip(i, attrs.strides))
        return te.if_then_else(tir.all(*on_grid), x[src], value) if on_grid else x[src]
    return [te.compute([T.dim(d) for d in out_type.shape], f, name="dilate", tag=DILATE.tag)]


DILATE = defop(
    "nn.dilate", inputs=("data",), attrs=DilateAttrs, rel=_dilate_rel, pattern=OpPattern.INJECTIVE, ref=_dilate_ref,
    compute=_dilate_compute, level=2,
    samples=lambda rng: [Sample([S.rand(rng, (1, 2, 3, 3))], DilateAttrs((1, 1, 2, 3))),
                         Sample([S.rand(rng, (4, 2), "float64")], DilateAttrs((3, 1), -1.5)),
                         Sample([S.rand(rng, (3,), "int32", -9, 9)], DilateAttrs((2,), 7))],
    doc="out[i * strides] = data[i], dilation_value elsewhere")


def dilate(data, strides, dilation_value=0.0):
    """relay.nn.dilate: insert (stride - 1) cells of dilation_value between neighbours on every axis.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    strides : tuple of int
        One stride per axis of `data`: an axis of length d becomes (d - 1) * stride + 1.
    dilation_value : float, optional
        The value of the inserted cells. Defaults to 0.0.

    Returns
    -------
    result : relay.Expr
        The dilated tensor.
    """
    return DILATE(data, attrs=DilateAttrs(strides, dilation_value))


__all__ = ["mirror_pad", "dilate", "MirrorPadAttrs", "DilateAttrs"]
