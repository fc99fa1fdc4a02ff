"""Matrix products: nn.dense (x @ W^T), nn.matmul (optionally transposed operands) and
nn.batch_matmul (batched, with a batch of 1 broadcasting). All are OUT_ELEMWISE_FUSABLE: a
following bias_add/relu can fuse into their output loop.
"""
import dataclasses

import numpy as np

from ... import te
from ...ir.attrs import Attrs, always_printed
from ...ir.dims import dim_to_str
from ...ir.shape_math import broadcast_dims
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T


def _product(a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    """a @ b accumulated in acc_dtype(dtype), returned as `dtype` (int8 inputs -> int32 math)."""
    acc = C.acc_dtype(dtype)
    return np.matmul(a.astype(acc, copy=False), b.astype(acc, copy=False)).astype(dtype, copy=False)


def _contract(shape, k_ext, load_a, load_b, out_type, name, tag):
    """out[idx] = sum_k load_a(idx, k) * load_b(idx, k), both cast to the accumulation dtype
    before the multiply (int8 -> int32), then cast to the result dtype (float16 sums in float32)."""
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    k = te.reduce_axis((0, k_ext), "k")
    out = te.compute(shape, lambda *i: te.sum(load_a(i, k).astype(acc) * load_b(i, k).astype(acc), axis=k),
                     name=name, tag=tag)
    return [T.cast_to(out, dtype, tag, name + "_cast")]


# --- nn.dense ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DenseAttrs(Attrs):
    units: int = always_printed(None)
    out_dtype: str = ""

    def __post_init__(self):
        object.__setattr__(self, "units", C.optional_int(self.units, "units"))
        object.__setattr__(self, "out_dtype", C.out_dtype(self.out_dtype))


def _dense_rel(arg_types, attrs) -> TensorType:
    """data (..., in), weight (units, in) -> (..., units)."""
    op = "nn.dense"
    data = C.tensor_arg(op, arg_types[0], "data")
    weight = C.tensor_arg(op, arg_types[1], "weight")
    types = dict(data=data, weight=weight)
    C.same_dtype(op, **types)
    if data.ndim < 1:
        raise C.rel_error(op, "data must have rank >= 1", **types)
    C.expect_rank(op, weight, 2, "weight", **types)
    if not C.dim_matches(data.shape[-1], weight.shape[1]):
        raise C.rel_error(op, f"input has {dim_to_str(data.shape[-1])} features but weight expects "
                              f"{dim_to_str(weight.shape[1])}", **types)
    units = weight.shape[0]
    if attrs.units is not None:
        if not C.dim_matches(units, attrs.units):
            raise C.rel_error(op, f"units={attrs.units} but weight has {dim_to_str(units)} rows", **types)
        units = attrs.units
    return TensorType(data.shape[:-1] + (units,), C.result_dtype(attrs.out_dtype, data.dtype))


def _weight_from_units(transpose_b: bool):
    def fill_inputs(arg_types, attrs) -> dict:
        """An unannotated weight's type from `units` and the data's reduction dim, as TVM's
        MatmulRel assigns it: (units, K) when transposed (dense), else (K, units)."""
        data, weight = arg_types
        if weight is not None or attrs.units is None or not isinstance(data, TensorType) or data.ndim < 1:
            return {}
        transpose_a = getattr(attrs, "transpose_a", False)
        if transpose_a and data.ndim < 2:
            return {}
        reduce = data.shape[-2] if transpose_a else data.shape[-1]
        shape = (attrs.units, reduce) if transpose_b else (reduce, attrs.units)
        return {1: TensorType(shape, data.dtype)}
    return fill_inputs


def _dense_ref(data, weight, attrs):
    return _product(data, weight.T, C.result_dtype(attrs.out_dtype, str(data.dtype)))


def _dense_samples(rng):
    return [Sample([S.rand(rng, (2, 8)), S.rand(rng, (16, 8))], DenseAttrs()),
            Sample([S.rand(rng, (3, 2, 5)), S.rand(rng, (4, 5))], DenseAttrs(units=4)),
            Sample([S.rand(rng, (1, 6), "float64"), S.rand(rng, (3, 6), "float64")], DenseAttrs()),
            Sample([S.rand(rng, (2, 16), "float16"), S.rand(rng, (4, 16), "float16")], DenseAttrs()),
            Sample([S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS), "float16", 0, 1),
                    S.rand(rng, (3, S.FLOAT16_REDUCTION_TERMS), "float16", 0, 1)], DenseAttrs(), "float16, long dot"),
            Sample([S.rand(rng, (3, 10), "int8", -100, 100), S.rand(rng, (5, 10), "int8", -100, 100)],
                   DenseAttrs(out_dtype="int32"), "int8 inputs accumulate in int32")]


def _dense_compute(attrs, inputs, out_type):
    """out[..., u] = sum_k data[..., k] * weight[u, k]."""
    data, weight = inputs
    units, k_ext = T.dims(weight)
    return _contract(T.dims(data)[:-1] + [units], k_ext, lambda i, k: data[i[:-1] + (k,)],
                     lambda i, k: weight[i[-1], k], out_type, "dense", DENSE.tag)


DENSE = defop("nn.dense", inputs=("data", "weight"), attrs=DenseAttrs, rel=_dense_rel,
              pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_dense_ref, samples=_dense_samples, level=1,
              compute=_dense_compute, fill_inputs=_weight_from_units(True),
              doc="out[..., u] = sum_k data[..., k] * weight[u, k]")


def dense(data, weight, units=None, out_dtype=""):
    """Fully connected layer: data @ weight.T.

    Parameters
    ----------
    data : relay.Expr
        The input, of shape (..., K).
    weight : relay.Expr
        The weight, of shape (units, K). When its type is not annotated it is inferred from
        `units`.
    units : None or int, optional
        The number of output features; None (the default) reads it from `weight`.
    out_dtype : str, optional
        The dtype of the result and of the accumulation; "" (the default) means data's dtype.

    Returns
    -------
    result : relay.Expr
        A tensor of shape (..., units).
    """
    return DENSE(data, weight, attrs=DenseAttrs(units, out_dtype))


# --- nn.matmul -----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class MatmulAttrs(Attrs):
    units: int = always_printed(None)
    out_dtype: str = ""
    transpose_a: bool = False
    transpose_b: bool = False

    def __post_init__(self):
        object.__setattr__(self, "units", C.optional_int(self.units, "units"))
        object.__setattr__(self, "out_dtype", C.out_dtype(self.out_dtype))
        object.__setattr__(self, "transpose_a", bool(self.transpose_a))
        object.__setattr__(self, "transpose_b", bool(self.transpose_b))


def _matmul_rel(arg_types, attrs) -> TensorType:
    """a (..., M, K) [(..., K, M) if transpose_a], b (K, N) [(N, K) if transpose_b] -> (..., M, N)."""
    op = "nn.matmul"
    a = C.tensor_arg(op, arg_types[0], "tensor_a")
    b = C.tensor_arg(op, arg_types[1], "tensor_b")
    types = dict(tensor_a=a, tensor_b=b)
    C.same_dtype(op, **types)
    C.expect_rank(op, b, 2, "tensor_b", **types)
    if a.ndim < (2 if attrs.transpose_a else 1):
        raise C.rel_error(op, f"tensor_a has rank {a.ndim}, too small (transpose_a={attrs.transpose_a})", **types)
    if attrs.transpose_a:
        reduce_a, out_prefix = a.shape[-2], a.shape[:-2] + (a.shape[-1],)
    else:
        reduce_a, out_prefix = a.shape[-1], a.shape[:-1]
    reduce_b, n = (b.shape[1], b.shape[0]) if attrs.transpose_b else (b.shape[0], b.shape[1])
    if not C.dim_matches(reduce_a, reduce_b):
        raise C.rel_error(op, f"reduction dims differ: tensor_a has {dim_to_str(reduce_a)}, tensor_b has "
                              f"{dim_to_str(reduce_b)} (transpose_a={attrs.transpose_a}, "
                              f"transpose_b={attrs.transpose_b})", **types)
    if attrs.units is not None:
        if not C.dim_matches(n, attrs.units):
            raise C.rel_error(op, f"units={attrs.units} but tensor_b gives {dim_to_str(n)} output columns",
                              **types)
        n = attrs.units
    return TensorType(out_prefix + (n,), C.result_dtype(attrs.out_dtype, a.dtype))


def _matmul_ref(a, b, attrs):
    if attrs.transpose_a:
        a = np.swapaxes(a, -1, -2)
    if attrs.transpose_b:
        b = b.T
    return _product(a, b, C.result_dtype(attrs.out_dtype, str(a.dtype)))


def _matmul_samples(rng):
    return [Sample([S.rand(rng, (3, 5)), S.rand(rng, (5, 4))], MatmulAttrs()),
            Sample([S.rand(rng, (5, 3)), S.rand(rng, (5, 4))], MatmulAttrs(transpose_a=True)),
            Sample([S.rand(rng, (2, 5, 3), "float64"), S.rand(rng, (4, 5), "float64")],
                   MatmulAttrs(transpose_a=True, transpose_b=True)),
            Sample([S.rand(rng, (2, 3, 6)), S.rand(rng, (6, 2))], MatmulAttrs(units=2)),
            Sample([S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS), "float16", 0, 1),
                    S.rand(rng, (S.FLOAT16_REDUCTION_TERMS, 3), "float16", 0, 1)], MatmulAttrs(), "float16, long dot")]


def _matmul_compute(attrs, inputs, out_type):
    """out[..., m, n] = sum_k op_a(a)[..., m, k] * op_b(b)[k, n]."""
    a, b = inputs
    da, db = T.dims(a), T.dims(b)
    if attrs.transpose_a:
        prefix, k_ext = da[:-2] + [da[-1]], da[-2]
        load_a = lambda i, k: a[i[:-2] + (k, i[-2])]  # noqa: E731
    else:
        prefix, k_ext = da[:-1], da[-1]
        load_a = lambda i, k: a[i[:-1] + (k,)]  # noqa: E731
    n = db[0] if attrs.transpose_b else db[1]
    load_b = (lambda i, k: b[i[-1], k]) if attrs.transpose_b else (lambda i, k: b[k, i[-1]])
    return _contract(prefix + [n], k_ext, load_a, load_b, out_type, "matmul", MATMUL.tag)


MATMUL = defop("nn.matmul", inputs=("tensor_a", "tensor_b"), attrs=MatmulAttrs, rel=_matmul_rel,
               pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_matmul_ref, samples=_matmul_samples, level=1,
               compute=_matmul_compute, fill_inputs=_weight_from_units(False),
               doc="out = op_a(a) @ op_b(b), op_x transposing when transpose_x")


def matmul(tensor_a, tensor_b, units=None, out_dtype="", transpose_a=False, transpose_b=False):
    """Matrix product of two tensors, either of which may be transposed first.

    As in TVM, the case transpose_a=False, transpose_b=True is built as nn.dense.

    Parameters
    ----------
    tensor_a : relay.Expr
        The left operand, (..., M, K), or (..., K, M) when `transpose_a`.
    tensor_b : relay.Expr
        The right operand, (K, N), or (N, K) when `transpose_b`.
    units : None or int, optional
        The number of output columns N, when known; None (the default) reads it from
        `tensor_b`.
    out_dtype : str, optional
        The dtype of the result and of the accumulation; "" (the default) means tensor_a's
        dtype.
    transpose_a : bool, optional
        Whether `tensor_a` is transposed before the product. Defaults to False.
    transpose_b : bool, optional
        Whether `tensor_b` is transposed before the product. Defaults to False.

    Returns
    -------
    result : relay.Expr
        The product, of shape (..., M, N).
    """
    if not transpose_a and transpose_b:
        return dense(tensor_a, tensor_b, units, out_dtype)
    return MATMUL(tensor_a, tensor_b, attrs=MatmulAttrs(units, out_dtype, transpose_a, transpose_b))


# --- nn.batch_matmul -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class BatchMatmulAttrs(Attrs):
    out_dtype: str = ""
    transpose_a: bool = False
    transpose_b: bool = True

    def __post_init__(self):
        object.__setattr__(self, "out_dtype", C.out_dtype(self.out_dtype))
        object.__setattr__(self, "transpose_a", bool(self.transpose_a))
        object.__setattr__(self, "transpose_b", bool(self.transpose_b))


def _batch_dim(op, ba, bb, types):
    """Batch dims broadcast as in BroadcastRel (a batch of 1 meets any batch; Any meets n gives
    n; symbolic batches must be provably equal)."""
    batch = broadcast_dims(ba, bb)
    if batch is None:
        raise C.rel_error(op, f"batch dimensions {dim_to_str(ba)} and {dim_to_str(bb)} differ and neither "
                              f"is 1", **types)
    return batch


def _batch_matmul_rel(arg_types, attrs) -> TensorType:
    """a (B, M, K) [(B, K, M) if transpose_a], b (B, K, N) [(B, N, K) if transpose_b] -> (B, M, N)."""
    op = "nn.batch_matmul"
    a = C.tensor_arg(op, arg_types[0], "tensor_a")
    b = C.tensor_arg(op, arg_types[1], "tensor_b")
    types = dict(tensor_a=a, tensor_b=b)
    C.same_dtype(op, **types)
    C.expect_rank(op, a, 3, "tensor_a", **types)
    C.expect_rank(op, b, 3, "tensor_b", **types)
    m, ka = (a.shape[2], a.shape[1]) if attrs.transpose_a else (a.shape[1], a.shape[2])
    n, kb = (b.shape[1], b.shape[2]) if attrs.transpose_b else (b.shape[2], b.shape[1])
    if not C.dim_matches(ka, kb):
        raise C.rel_error(op, f"reduction dims differ: tensor_a has {dim_to_str(ka)}, tensor_b has "
                              f"{dim_to_str(kb)} (transpose_a={attrs.transpose_a}, "
                              f"transpose_b={attrs.transpose_b})", **types)
    batch = _batch_dim(op, a.shape[0], b.shape[0], types)
    return TensorType((batch, m, n), C.result_dtype(attrs.out_dtype, a.dtype))


def _batch_matmul_ref(a, b, attrs):
    if attrs.transpose_a:
        a = np.swapaxes(a, 1, 2)
    if attrs.transpose_b:
        b = np.swapaxes(b, 1, 2)
    return _product(a, b, C.result_dtype(attrs.out_dtype, str(a.dtype)))  # matmul broadcasts batch 1


def _batch_matmul_samples(rng):
    return [Sample([S.rand(rng, (2, 3, 5)), S.rand(rng, (2, 4, 5))], BatchMatmulAttrs()),
            Sample([S.rand(rng, (1, 3, 5)), S.rand(rng, (3, 5, 4))], BatchMatmulAttrs(transpose_b=False),
                   "batch 1 broadcasts"),
            Sample([S.rand(rng, (2, 5, 3), "float64"), S.rand(rng, (1, 4, 5), "float64")],
                   BatchMatmulAttrs(transpose_a=True, transpose_b=True)),
            Sample([S.rand(rng, (2, 4, 8), "int8", -50, 50), S.rand(rng, (2, 3, 8), "int8", -50, 50)],
                   BatchMatmulAttrs(out_dtype="int32")),
            Sample([S.rand(rng, (2, 2, S.FLOAT16_REDUCTION_TERMS), "float16", 0, 1),
                    S.rand(rng, (2, 3, S.FLOAT16_REDUCTION_TERMS), "float16", 0, 1)], BatchMatmulAttrs(),
                   "float16, long dot")]


def _batch_matmul_compute(attrs, inputs, out_type):
    """out[b, m, n] = sum_k op_a(a)[b or 0, m, k] * op_b(b)[b or 0, k, n] (a batch of 1 broadcasts)."""
    a, b = inputs
    (ba, a1, a2), (bb, b1, b2) = T.dims(a), T.dims(b)
    m, k_ext = (a2, a1) if attrs.transpose_a else (a1, a2)
    n = b1 if attrs.transpose_b else b2
    one_a, one_b = T.is_static(ba) and ba == 1, T.is_static(bb) and bb == 1
    batch = bb if one_a else ba
    ia = (lambda i: 0) if one_a else (lambda i: i[0])  # noqa: E731
    ib = (lambda i: 0) if one_b else (lambda i: i[0])  # noqa: E731
    if attrs.transpose_a:
        load_a = lambda i, k: a[ia(i), k, i[1]]  # noqa: E731
    else:
        load_a = lambda i, k: a[ia(i), i[1], k]  # noqa: E731
    if attrs.transpose_b:
        load_b = lambda i, k: b[ib(i), i[2], k]  # noqa: E731
    else:
        load_b = lambda i, k: b[ib(i), k, i[2]]  # noqa: E731
    return _contract([batch, m, n], k_ext, load_a, load_b, out_type, "batch_matmul", BATCH_MATMUL.tag)


BATCH_MATMUL = defop("nn.batch_matmul", inputs=("tensor_a", "tensor_b"), attrs=BatchMatmulAttrs,
                     rel=_batch_matmul_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_batch_matmul_ref,
                     samples=_batch_matmul_samples, level=10, compute=_batch_matmul_compute,
                     doc="out[b] = op_a(a[b or 0]) @ op_b(b[b or 0])")


def batch_matmul(tensor_a, tensor_b, out_dtype="", transpose_a=False, transpose_b=True):
    """Batched matrix product: one matrix product per batch entry.

    Parameters
    ----------
    tensor_a : relay.Expr
        The left operands, (B, M, K), or (B, K, M) when `transpose_a`.
    tensor_b : relay.Expr
        The right operands, (B, N, K) when `transpose_b` (the default), else (B, K, N). A batch
        of 1 on either side is broadcast against the other.
    out_dtype : str, optional
        The dtype of the result and of the accumulation; "" (the default) means tensor_a's
        dtype.
    transpose_a : bool, optional
        Whether each matrix of `tensor_a` is transposed before the product. Defaults to False.
    transpose_b : bool, optional
        Whether each matrix of `tensor_b` is transposed before the product. Defaults to True,
        as in TVM.

    Returns
    -------
    result : relay.Expr
        The products, of shape (B, M, N).
    """
    return BATCH_MATMUL(tensor_a, tensor_b, attrs=BatchMatmulAttrs(out_dtype, transpose_a, transpose_b))


__all__ = ["dense", "matmul", "batch_matmul", "DenseAttrs", "MatmulAttrs", "BatchMatmulAttrs"]
