"""Data layouts and the layout_transform operator (Relay's tir.Layout / relay.layout_transform).

A layout names each dimension: primal axes are upper-case letters ("NCHW"); a split of a primal
axis adds a lower-case sub-axis with its size ("NCHW4c": C cut into C/4 blocks of 4, the block
innermost). `layout_transform(data, src_layout, dst_layout)` rearranges a tensor between two
layouts of the same primal axes: a permutation (NCHW <-> NHWC, OIHW -> HWIO) and/or splitting
and merging blocks. INJECTIVE: each output element is one load.
"""
import dataclasses
import re

import numpy as np

from ..errors import AttrsError, TypeInferenceError
from ..ir.attrs import Attrs
from ..ir import shape_math
from ..ir.dims import dim_to_str, is_static
from ..ir.types import TensorType, type_to_str
from . import index_math as IM
from . import samples as S
from .pattern import OpPattern
from .registry import Sample, defop

_AXIS = re.compile(r"(\d*)([A-Za-z])")


class Layout:
    """A parsed layout: `axes` is a list of (letter, block size); the size is None for a
    primal (upper-case) axis."""

    def __init__(self, name: str):
        self.name = str(name)
        self.axes = []
        pos = 0
        for m in _AXIS.finditer(self.name):
            if m.start() != pos:
                break
            size, letter = m.groups()
            if letter.isupper() and size:
                raise AttrsError(f"layout {name!r}: a primal axis ({letter}) takes no size")
            if letter.islower() and not size:
                raise AttrsError(f"layout {name!r}: sub-axis {letter} needs a size, e.g. 4{letter}")
            self.axes.append((letter, int(size) if size else None))
            pos = m.end()
        if pos != len(self.name) or not self.axes:
            raise AttrsError(f"layout {name!r} is not a layout string such as 'NCHW' or 'NCHW4c'")
        letters = [a for a, _ in self.axes]
        if len(set(letters)) != len(letters):
            raise AttrsError(f"layout {name!r} names an axis twice")
        for letter, _ in self.axes:
            if letter.islower() and letter.upper() not in letters:
                raise AttrsError(f"layout {name!r}: sub-axis {letter} without its primal axis {letter.upper()}")

    @property
    def ndim(self) -> int:
        return len(self.axes)

    @property
    def primal(self) -> str:
        return "".join(a for a, _ in self.axes if a.isupper())

    def index_of(self, letter: str) -> int:
        """Position of an axis (primal upper-case or sub-axis lower-case), -1 if absent."""
        for i, (a, _) in enumerate(self.axes):
            if a == letter:
                return i
        return -1

    def block(self, primal: str) -> int:
        """The block size of primal axis `primal`'s sub-axis (1 if it is not split)."""
        i = self.index_of(primal.lower())
        return self.axes[i][1] if i >= 0 else 1

    def is_permutation(self) -> bool:
        return all(a.isupper() for a, _ in self.axes)

    def __str__(self) -> str:
        return self.name


@dataclasses.dataclass(frozen=True)
class LayoutTransformAttrs(Attrs):
    src_layout: str = "NCHW"
    dst_layout: str = "NCHW"

    def __post_init__(self):
        src, dst = Layout(self.src_layout), Layout(self.dst_layout)
        if sorted(src.primal) != sorted(dst.primal):
            raise AttrsError(f"layout_transform: {self.src_layout} and {self.dst_layout} have different "
                             f"primal axes")


def _primal_sizes(op, data: TensorType, src: Layout) -> dict:
    if data.ndim != src.ndim:
        raise TypeInferenceError(f"{op}: data of rank {data.ndim} does not match layout {src} "
                                 f"(rank {src.ndim}) (data: {type_to_str(data)})")
    sizes = {}
    for (letter, _), d in zip(src.axes, data.shape):
        if letter.isupper():
            sizes[letter] = shape_math.mul(d, src.block(letter))
    return sizes


def _dst_shape(op, data, attrs) -> tuple:
    src, dst = Layout(attrs.src_layout), Layout(attrs.dst_layout)
    sizes = _primal_sizes(op, data, src)
    shape = []
    for letter, factor in dst.axes:
        if letter.islower():
            shape.append(factor)
            continue
        size, block = sizes[letter], dst.block(letter)
        rest = shape_math.floormod(size, block)
        if is_static(rest) and rest:     # a symbolic size is split as TVM's layout does, unchecked
            raise TypeInferenceError(f"{op}: axis {letter} of size {dim_to_str(size)} does not split into "
                                     f"blocks of {block} ({attrs.src_layout} -> {attrs.dst_layout}, data: "
                                     f"{type_to_str(data)})")
        shape.append(shape_math.floordiv(size, block))
    return tuple(shape)


def _layout_transform_rel(arg_types, attrs):
    data = arg_types[0]
    if not isinstance(data, TensorType):
        raise TypeInferenceError(f"layout_transform expects a tensor, got {type_to_str(data)}")
    return TensorType(_dst_shape("layout_transform", data, attrs), data.dtype)


def _to_primal(x: np.ndarray, layout: Layout) -> tuple:
    """(array with one axis per primal letter, in layout.primal order)."""
    letters = [a for a, _ in layout.axes]
    order, shape = [], []
    for letter in layout.primal:
        order.append(letters.index(letter))
        sub = layout.index_of(letter.lower())
        if sub >= 0:
            order.append(sub)
            shape.append(x.shape[letters.index(letter)] * x.shape[sub])
        else:
            shape.append(x.shape[letters.index(letter)])
    return np.transpose(x, order).reshape(shape)


def _from_primal(p: np.ndarray, primal: str, layout: Layout) -> np.ndarray:
    split_shape, names = [], []
    for letter, size in zip(primal, p.shape):
        block = layout.block(letter)
        if block > 1 or layout.index_of(letter.lower()) >= 0:
            split_shape += [size // block, block]
            names += [letter, letter.lower()]
        else:
            split_shape.append(size)
            names.append(letter)
    split = p.reshape(split_shape)
    return np.ascontiguousarray(np.transpose(split, [names.index(a) for a, _ in layout.axes]))


def transform_array(x: np.ndarray, src_layout: str, dst_layout: str) -> np.ndarray:
    """numpy's layout_transform: `x` (in `src_layout`) rearranged into `dst_layout` (the same
    primal axes, e.g. "NCHW8c" -> "NCHW"); the reference of the operator, and how a tuning
    measurement compares candidates whose tensors are blocked differently."""
    src, dst = Layout(src_layout), Layout(dst_layout)
    primal = _to_primal(x, src)
    reordered = np.transpose(primal, [src.primal.index(a) for a in dst.primal])
    return _from_primal(reordered, dst.primal, dst)


def _layout_transform_ref(x, attrs):
    return transform_array(x, attrs.src_layout, attrs.dst_layout)


def _layout_transform_compute(attrs, inputs, out_type):
    """Output index -> primal coordinates (outer * block + inner) -> source index."""
    x = inputs[0]
    src, dst = Layout(attrs.src_layout), Layout(attrs.dst_layout)
    primal = {}
    for (letter, _), d in zip(src.axes, IM.te_dims(x)):
        if letter.isupper():
            primal[letter] = d * src.block(letter)
    out_shape = [factor if letter.islower() else primal[letter] // dst.block(letter)
                 for letter, factor in dst.axes]

    def load(*idx):
        coord = {}
        for (letter, _), i in zip(dst.axes, idx):
            if letter.isupper():
                coord[letter] = coord.get(letter, 0) + i * dst.block(letter)
            else:
                coord[letter.upper()] = coord.get(letter.upper(), 0) + i
        src_idx = []
        for letter, factor in src.axes:
            value = coord[letter.upper()]
            block = src.block(letter.upper())
            if letter.isupper():
                src_idx.append(value // block if block > 1 else value)
            else:
                src_idx.append(value % factor)
        return x[tuple(src_idx)]
    return [IM.compute(LAYOUT_TRANSFORM, out_shape, load)]


def _samples(rng):
    A = LayoutTransformAttrs
    return [Sample([S.rand(rng, (1, 3, 4, 5))], A("NCHW", "NHWC")),
            Sample([S.rand(rng, (2, 4, 5, 3), "int32")], A("NHWC", "NCHW")),
            Sample([S.rand(rng, (4, 3, 2, 2), "float64")], A("OIHW", "HWIO")),
            Sample([S.rand(rng, (1, 8, 2, 3))], A("NCHW", "NCHW4c")),
            Sample([S.rand(rng, (1, 2, 2, 3, 4))], A("NCHW4c", "NHWC")),
            Sample([S.rand(rng, (2, 3))], A("NC", "NC"))]


LAYOUT_TRANSFORM = defop(
    "layout_transform", inputs=("data",), attrs=LayoutTransformAttrs, rel=_layout_transform_rel,
    pattern=OpPattern.INJECTIVE, ref=_layout_transform_ref, compute=_layout_transform_compute,
    samples=_samples, level=5, doc="rearrange data from src_layout to dst_layout")


def layout_transform(data, src_layout: str, dst_layout: str):
    """Rearrange `data` from one memory layout into another (e.g. "NCHW" into "NCHW8c").

    Parameters
    ----------
    data : relay.Expr
        The input tensor, laid out as `src_layout`.
    src_layout : str
        The layout of `data`: one upper-case letter per primal axis, and a number followed by
        the lower-case letter for a split (blocked) axis, as "NCHW16c".
    dst_layout : str
        The layout of the result, over the same primal axes.

    Returns
    -------
    result : relay.Expr
        The tensor in `dst_layout`.
    """
    return LAYOUT_TRANSFORM(data, attrs=LayoutTransformAttrs(src_layout, dst_layout))


__all__ = ["layout_transform", "Layout", "LayoutTransformAttrs", "transform_array"]
