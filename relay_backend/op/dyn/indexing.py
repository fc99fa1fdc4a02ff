"""The dyn indexing operators (TVM v0.18 names): dyn.one_hot, whose depth is a run-time scalar,
and dyn.sparse_to_dense, whose output_shape is a run-time 1-D tensor (issue 12's leftovers).

Each is the static op with the shape-like attr read from a tensor (common.py's defdyn), so the
reference, the VM's shape function and DynamicToStatic (a constant depth or shape becomes the
static op) agree with the static op by construction.
"""
import numpy as np

from ...ir.types import Any, TensorType
from .. import samples as S
from ..constructor_docs import documented
from ..one_hot_encoding import (ONE_HOT, ONE_HOT_PARAMETERS, OneHotAttrs, one_hot_axis, one_hot_compute,
                                one_hot_types, scalars)
from ..sparse import (SPARSE_TO_DENSE, SPARSE_TO_DENSE_PARAMETERS, SparseToDenseAttrs, sparse_to_dense_compute,
                      sparse_to_dense_types)
from ..registry import Sample
from .common import any_shape, defdyn, read_ints, shape_arg, te_out_shape


def _one_hot_rel(arg_types, attrs):
    """The new axis is Any (its length is the run-time depth), the others indices' dims."""
    indices, _, _ = one_hot_types("dyn.one_hot", arg_types)
    shape_arg(arg_types[3], "dyn.one_hot", "depth", ndim=0)
    shape = list(indices.shape)
    shape.insert(one_hot_axis("dyn.one_hot", indices, attrs.axis, indices), Any())
    return TensorType(shape, attrs.dtype)


def _one_hot_static(attrs, values):
    (depth,) = read_ints(values[3], "dyn.one_hot", "depth")
    return ONE_HOT, OneHotAttrs(depth, attrs.axis, attrs.dtype)


def _one_hot_compute(attrs, inputs, out_type):
    return one_hot_compute(attrs, inputs[:3], te_out_shape(out_type, "one_hot"), "dyn.one_hot")


ONE_HOT_DYN = defdyn(
    "dyn.one_hot", inputs=("indices", "on_value", "off_value", "depth"), static_inputs=(0, 1, 2),
    attrs=OneHotAttrs, to_static=_one_hot_static, rel=_one_hot_rel, compute=_one_hot_compute,
    samples=lambda rng: [
        Sample([np.array([0, 2, 1], "int32")] + scalars(1, 0, "float32") + [np.array(3, "int64")],
               OneHotAttrs(0, -1, "float32")),
        Sample([S.rand(rng, (2, 2), "int64", -1, 4)] + scalars(7, 1, "int32") + [np.array(5, "int32")],
               OneHotAttrs(0, 0, "int32"), "out of range: all off")],
    doc="one_hot with depth read at run time")


@documented(ONE_HOT_PARAMETERS)
def one_hot(indices, on_value, off_value, depth, axis, dtype):
    """dyn.one_hot over a run-time scalar `depth` (relay.one_hot builds it for such a depth).

    Parameters
    ----------
    depth : relay.Expr
        The length of the new axis, a scalar read at run time.
    """
    return ONE_HOT_DYN(indices, on_value, off_value, depth, attrs=OneHotAttrs(0, axis, dtype))


def _sparse_to_dense_rel(arg_types, attrs):
    rank = int(shape_arg(arg_types[1], "dyn.sparse_to_dense", "output_shape").shape[0])
    dtype = sparse_to_dense_types("dyn.sparse_to_dense", [arg_types[0], arg_types[2], arg_types[3]], rank)
    return TensorType(any_shape(rank), dtype)


def _sparse_to_dense_static(attrs, values):
    shape = read_ints(values[1], "dyn.sparse_to_dense", "output_shape")
    return SPARSE_TO_DENSE, SparseToDenseAttrs(shape)


SPARSE_TO_DENSE_DYN = defdyn(
    "dyn.sparse_to_dense", inputs=("sparse_indices", "output_shape", "sparse_values", "default_value"),
    static_inputs=(0, 2, 3), to_static=_sparse_to_dense_static, rel=_sparse_to_dense_rel,
    compute=lambda attrs, inputs, out_type: sparse_to_dense_compute(
        [inputs[0], inputs[2], inputs[3]], te_out_shape(out_type, "dense"), "T_dyn_sparse_to_dense", "opaque"),
    samples=lambda rng: [
        Sample([np.array([[0, 1], [2, 0]], "int32"), np.array([3, 2], "int64"), np.array([4.0, 5.0], "float32"),
                np.array(-1.0, "float32")]),
        Sample([np.array([4, 0, 4], "int64"), np.array([6], "int32"), np.array([1, 2, 3], "int32"),
                np.array(0, "int32")], None, "a repeat: last wins")],
    doc="sparse_to_dense with output_shape read at run time")


@documented(SPARSE_TO_DENSE_PARAMETERS)
def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value):
    """dyn.sparse_to_dense over a run-time output_shape (relay.sparse_to_dense builds it).

    Parameters
    ----------
    output_shape : relay.Expr
        The shape of the result, a 1-D integer tensor read at run time.
    default_value : relay.Expr
        The scalar of every element no index names.
    """
    return SPARSE_TO_DENSE_DYN(sparse_indices, output_shape, sparse_values, default_value)


__all__ = ["one_hot", "sparse_to_dense"]
