"""nn.contrib_dense_pack: dense with a pre-packed weight (Relay's x86 dense_pack layout).
OUT_ELEMWISE_FUSABLE. AlterOpLayout rewrites nn.dense into it (strategy/x86_alter_layout.py),
packing the constant weight once at compile time instead of on every call.

    weight_layout NC{bn}n: weight (units/bn, K, bn), packed[jo, k, ji] = W[jo*bn + ji, k]
    out[..., j] = sum_k data[..., k] * packed[j // bn, k, j % bn]

The reference unpacks the weight with numpy and runs dense's reference.
"""
import dataclasses
import re

import numpy as np

from ... import te
from ...errors import AttrsError
from ...ir.attrs import Attrs
from ...ir.dims import dim_to_str
from ...ir.shape_math import mul
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from .dense import DenseAttrs, _dense_ref

OP = "nn.contrib_dense_pack"
_LAYOUT = re.compile(r"^NC(\d+)n$")


@dataclasses.dataclass(frozen=True)
class DensePackAttrs(Attrs):
    units: int = None
    out_dtype: str = ""
    weight_layout: str = "NC8n"

    def __post_init__(self):
        object.__setattr__(self, "units", C.optional_int(self.units, "units"))
        object.__setattr__(self, "out_dtype", C.out_dtype(self.out_dtype))
        if not isinstance(self.weight_layout, str) or not _LAYOUT.match(self.weight_layout):
            raise AttrsError(f"weight_layout={self.weight_layout!r} is not a packed dense layout; use e.g. 'NC8n'")

    @property
    def block(self) -> int:
        return int(_LAYOUT.match(self.weight_layout).group(1))


def _rel(arg_types, attrs) -> TensorType:
    """data (..., K), weight (units/bn, K, bn) -> (..., units)."""
    data = C.tensor_arg(OP, arg_types[0], "data")
    weight = C.tensor_arg(OP, arg_types[1], "weight")
    types = dict(data=data, weight=weight)
    C.same_dtype(OP, **types)
    if data.ndim < 1:
        raise C.rel_error(OP, "data must have rank >= 1", **types)
    C.expect_rank(OP, weight, 3, f"weight ({attrs.weight_layout})", **types)
    if not C.dim_matches(weight.shape[2], attrs.block):
        raise C.rel_error(OP, f"weight's block is {dim_to_str(weight.shape[2])}, weight_layout says {attrs.block}",
                          **types)
    if not C.dim_matches(data.shape[-1], weight.shape[1]):
        raise C.rel_error(OP, f"input has {dim_to_str(data.shape[-1])} features but weight expects "
                              f"{dim_to_str(weight.shape[1])}", **types)
    units = mul(weight.shape[0], attrs.block)
    if attrs.units is not None and not C.dim_matches(units, attrs.units):
        raise C.rel_error(OP, f"units={attrs.units} but the packed weight has {dim_to_str(units)} rows", **types)
    return TensorType(data.shape[:-1] + (units,), C.result_dtype(attrs.out_dtype, data.dtype))


def pack_weight(weight: np.ndarray, block: int) -> np.ndarray:
    """(units, K) -> (units/block, K, block)."""
    n, k = weight.shape
    return np.ascontiguousarray(weight.reshape(n // block, block, k).transpose(0, 2, 1))


def unpack_weight(packed: np.ndarray) -> np.ndarray:
    """(units/block, K, block) -> (units, K)."""
    no, k, b = packed.shape
    return packed.transpose(0, 2, 1).reshape(no * b, k)


def _ref(data, weight, attrs):
    return _dense_ref(data, unpack_weight(weight), DenseAttrs(out_dtype=attrs.out_dtype))


def _compute(attrs, inputs, out_type):
    """out[..., j] = sum_k data[..., k] * weight[j // bn, k, j % bn] (accumulation dtype)."""
    data, weight = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    no, k_ext, bn = T.dims(weight)
    k = te.reduce_axis((0, k_ext), "k")

    def body(*idx):
        *rows, j = idx
        return te.sum(data[tuple(rows) + (k,)].astype(acc) * weight[j // bn, k, j % bn].astype(acc), axis=k)
    out = te.compute(T.dims(data)[:-1] + [no * bn], body, name="dense_pack", tag=DENSE_PACK.tag)
    return [T.cast_to(out, dtype, DENSE_PACK.tag + ",cast", "dense_pack_cast")]


def _samples(rng):
    def case(rows, k, n, block, note, dtype="float32", low=-2.0, **kw):
        return Sample([S.rand(rng, rows + (k,), dtype, low), pack_weight(S.rand(rng, (n, k), dtype, low), block)],
                      DensePackAttrs(weight_layout=f"NC{block}n", **kw), note)
    return [case((4,), 16, 16, 8, "4 rows, 2 blocks of 8"),
            case((3,), 7, 15, 5, "odd sizes: 3 rows, K=7, blocks of 5"),
            case((2, 3), 6, 8, 4, "3-D data", units=8),
            case((1,), 12, 6, 3, "one row, float64", dtype="float64"),
            case((5,), 9, 4, 4, "one block"),
            case((2,), S.FLOAT16_REDUCTION_TERMS, 4, 2, "float16, long dot", dtype="float16", low=0.0)]


DENSE_PACK = defop(OP, inputs=("data", "weight"), attrs=DensePackAttrs, rel=_rel,
                   pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_ref, samples=_samples, level=10, compute=_compute,
                   tag="dense_pack",
                   doc="out[..., j] = sum_k data[..., k] * weight[j // bn, k, j % bn]")


def contrib_dense_pack(data, weight, weight_layout="NC8n", units=None, out_dtype=""):
    """relay.nn.contrib_dense_pack: dense with a weight packed as (units/bn, K, bn).

    Parameters
    ----------
    data : relay.Expr
        The input, (..., K).
    weight : relay.Expr
        The packed weight, (units / bn, K, bn): packed[jo, k, ji] is dense's weight[jo * bn + ji, k].
    weight_layout : str, optional
        The packed layout "NC{bn}n", naming the block bn of output units. Defaults to "NC8n".
    units : None or int, optional
        The number of output units, when known; None reads it from `weight`. Defaults to None.
    out_dtype : str, optional
        The dtype of the result and of the accumulation; "" means the dtype of `data`. Defaults
        to "".

    Returns
    -------
    result : relay.Expr
        The (..., units) product, as dense's.
    """
    return DENSE_PACK(data, weight, attrs=DensePackAttrs(units, out_dtype, weight_layout))


__all__ = ["contrib_dense_pack", "DensePackAttrs", "pack_weight", "unpack_weight"]
