"""one_hot (TVM v0.18): a tensor that is on_value where the new `depth` axis equals the index and
off_value elsewhere; relay.one_hot builds dyn.one_hot (op/dyn/indexing.py) when depth is a
run-time expression.

The new axis is inserted at `axis` of the output (-1: last; other negatives count from the end
of the output's rank). An index outside [0, depth) matches no position, so its row is all
off_value (TVM's topi.one_hot compares without wrapping; ONNX's negative indices are made
positive by the frontend). on_value and off_value are 0-d tensors cast to `dtype`.
OUT_ELEMWISE_FUSABLE as TVM's.
"""
import dataclasses

import numpy as np

from .. import te
from ..errors import AttrsError
from ..ir.attrs import Attrs, always_printed
from ..ir.expr import Constant, Expr
from ..ir.types import TensorType
from . import index_math as IM
from . import samples as S
from .compute_common import cast as te_cast
from .constructor_docs import documented
from .index_rules import expect_int, fail
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor


@dataclasses.dataclass(frozen=True)
class OneHotAttrs(Attrs):
    """depth: the length of the new axis (dyn.one_hot reads it from its fourth input instead)."""

    depth: int = always_printed(1)
    axis: int = -1
    dtype: str = always_printed("float32")

    def __post_init__(self):
        object.__setattr__(self, "depth", int(self.depth))
        object.__setattr__(self, "axis", int(self.axis))
        try:
            object.__setattr__(self, "dtype", str(np.dtype(self.dtype)))
        except TypeError as err:
            raise AttrsError(f"one_hot: unknown dtype {self.dtype!r}") from err


def one_hot_axis(op_name: str, indices: TensorType, axis: int, *types) -> int:
    """The position of the new axis in the output (rank indices.ndim + 1)."""
    rank = indices.ndim + 1
    if not -rank <= axis < rank:
        raise fail(op_name, f"axis {axis} is out of range for an output of rank {rank}; use "
                            f"{-rank} <= axis < {rank}", *types)
    return axis + rank if axis < 0 else axis


def one_hot_types(op_name: str, arg_types):
    """(indices, on_value, off_value) checked: integer indices, 0-d values."""
    indices = expect_tensor(arg_types[0], f"{op_name} indices")
    on, off = (expect_tensor(t, f"{op_name} {w}") for t, w in zip(arg_types[1:3], ("on_value", "off_value")))
    expect_int(op_name, indices, "indices", *arg_types[:3])
    for t, what in ((on, "on_value"), (off, "off_value")):
        if t.ndim != 0:
            raise fail(op_name, f"{what} must be a scalar (0-d tensor), got rank {t.ndim}", *arg_types[:3])
    return indices, on, off


def _one_hot_rel(arg_types, attrs):
    indices, _, _ = one_hot_types("one_hot", arg_types)
    if attrs.depth <= 0:
        raise fail("one_hot", f"depth must be > 0, got {attrs.depth}", indices)
    axis = one_hot_axis("one_hot", indices, attrs.axis, indices)
    shape = list(indices.shape)
    shape.insert(axis, attrs.depth)
    return TensorType(shape, attrs.dtype)


def _one_hot_ref(indices, on, off, attrs):
    axis = one_hot_axis("one_hot", TensorType(indices.shape, str(indices.dtype)), attrs.axis)
    hit = np.expand_dims(indices.astype("int64"), -1) == np.arange(attrs.depth)
    hit = np.moveaxis(hit, -1, axis)
    return np.where(hit, np.asarray(on).astype(attrs.dtype), np.asarray(off).astype(attrs.dtype))


def one_hot_compute(attrs, inputs, out_shape, name):
    """out[.., k at axis, ..] = on if indices[..] == k else off, over `out_shape` (static dims,
    or a dyn op's run-time ones)."""
    indices, on, off = inputs
    axis = one_hot_axis(name, IM.probe_type(indices), attrs.axis)
    on_value, off_value = te_cast(on[()], attrs.dtype), te_cast(off[()], attrs.dtype)

    def body(*i):
        j = indices[i[:axis] + i[axis + 1:]]
        wide = "int64" if j.dtype in ("int64", "uint32", "uint64") else "int32"
        return te.if_then_else(j.astype(wide) == i[axis].astype(wide), on_value, off_value)
    return [te.compute(out_shape, body, name=f"T_{name.replace('.', '_')}", tag=ONE_HOT.tag)]


def _one_hot_compute(attrs, inputs, out_type):
    shape = list(IM.te_dims(inputs[0]))
    shape.insert(one_hot_axis("one_hot", IM.probe_type(inputs[0]), attrs.axis), attrs.depth)
    return one_hot_compute(attrs, inputs, shape, "one_hot")


def scalars(on, off, dtype):
    """on_value and off_value as 0-d arrays of `dtype` (for samples)."""
    return [np.array(on, dtype), np.array(off, dtype)]


ONE_HOT = defop(
    "one_hot", inputs=("indices", "on_value", "off_value"), attrs=OneHotAttrs, rel=_one_hot_rel,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_one_hot_ref, compute=_one_hot_compute, level=10,
    samples=lambda rng: [
        Sample([np.array([0, 2, 1, 3], "int32")] + scalars(1, 0, "float32"), OneHotAttrs(3, -1, "float32"),
               "3 is past depth: all off"),
        Sample([S.rand(rng, (2, 3), "int64", 0, 4)] + scalars(5, -1, "int32"), OneHotAttrs(4, 0, "int32")),
        Sample([np.array([[1, -1]], "int32")] + scalars(2.5, 0.5, "float32"), OneHotAttrs(2, 1, "float64"),
               "negative index: all off; values cast"),
        Sample([np.array(2, "int32")] + scalars(1, 0, "float32"), OneHotAttrs(4, -1, "float32"), "scalar index"),
        Sample([np.zeros((0, 2), "int32")] + scalars(1, 0, "float32"), OneHotAttrs(2, -2, "float32"),
               "empty indices, negative axis")],
    doc="on_value where the new depth axis equals the index, off_value elsewhere")


# The parameters relay.one_hot and dyn.one_hot share (constructor_docs completes their docstrings)
ONE_HOT_PARAMETERS = {
    "indices": ("relay.Expr", "The integer indices; each becomes one row of the new axis."),
    "on_value": ("relay.Expr", "The scalar written where the new axis' position equals the index."),
    "off_value": ("relay.Expr", "The scalar written everywhere else."),
    "depth": ("int or relay.Expr", "The length of the new axis."),
    "axis": ("int", "Where the new axis goes in the result; -1 puts it last."),
    "dtype": ("str", "The dtype of the result."),
}


@documented(ONE_HOT_PARAMETERS)
def one_hot(indices, on_value, off_value, depth, axis, dtype):
    """relay.one_hot: a new axis of length `depth` at `axis`, on_value where it equals the index;
    a `depth` given as a non-constant Relay expression builds dyn.one_hot."""
    if isinstance(depth, Constant):
        depth = np.asarray(depth.data.numpy()).item()
    if isinstance(depth, Expr):
        from .dyn import indexing as dyn_indexing      # op/dyn builds on this module
        return dyn_indexing.one_hot(indices, on_value, off_value, depth, axis, dtype)
    return ONE_HOT(indices, on_value, off_value, attrs=OneHotAttrs(depth, axis, dtype))


__all__ = ["one_hot"]
