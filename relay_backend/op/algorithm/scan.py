"""cumsum and cumprod (TVM's relay.cumsum / cumprod, ScanopAttrs): running sums and products
along an axis, in `dtype` (default: the data's), over the flattened data when axis is None.
`exclusive` leaves each element out of its own result (the first is 0 for cumsum, 1 for
cumprod). Each row is one sequential loop reading the previous output: O(n), the order of
additions numpy's cumsum uses.
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import TypeInferenceError
from ...ir.attrs import Attrs
from ...ir.shape_math import prod
from ...ir.types import TensorType
from ...tir import stmt as Stmt
from .. import samples as S
from ..compute_common import cast as te_cast
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..relations import expect_tensor, normalize_axes
from ..tensor import CastAttrs
from . import loops as L
from ..constructor_docs import documented


@dataclasses.dataclass(frozen=True)
class ScanopAttrs(Attrs):
    axis: int = None
    dtype: str = None
    exclusive: bool = None

    def __post_init__(self):
        if self.axis is not None:
            object.__setattr__(self, "axis", int(self.axis))
        if self.dtype:
            object.__setattr__(self, "dtype", CastAttrs(self.dtype).dtype)
        else:
            object.__setattr__(self, "dtype", None)
        object.__setattr__(self, "exclusive", bool(self.exclusive) if self.exclusive is not None else None)


def _scan_rel(op_name):
    def rel(arg_types, attrs):
        data = expect_tensor(arg_types[0], "data")
        dtype = attrs.dtype or data.dtype
        if dtype == "bool":
            raise TypeInferenceError(f"{op_name}: a bool scan has no meaning; give dtype (e.g. dtype=\"int32\")")
        if attrs.axis is None:
            return TensorType((prod(data.shape),), dtype)
        if len(data.shape) == 0:
            raise TypeInferenceError(f"{op_name}: axis {attrs.axis} given for a scalar; use axis=None")
        normalize_axes(attrs.axis, len(data.shape), f"{op_name}: axis")
        return TensorType(data.shape, dtype)
    rel.__name__ = f"scan_rel[{op_name}]"
    return rel


def _scan_ref(ufunc, identity):
    def ref(x, attrs):
        dtype = attrs.dtype or str(x.dtype)
        data = x.reshape(-1) if attrs.axis is None else x
        axis = 0 if attrs.axis is None else attrs.axis % x.ndim
        with np.errstate(over="ignore", invalid="ignore"):
            out = ufunc.accumulate(data.astype(dtype), axis=axis, dtype=dtype) if data.size else data.astype(dtype)
        if attrs.exclusive:
            first = np.full_like(np.take(out, [0], axis=axis), identity) if out.shape[axis] else out[:0]
            out = np.concatenate([first, np.take(out, np.arange(out.shape[axis] - 1), axis=axis)], axis=axis)
        return out.astype(dtype)
    return ref


def _scan_compute(name, combine, identity):
    def compute(attrs, inputs, out_type):
        x, = inputs
        dtype = out_type.dtype
        axis = 0 if attrs.axis is None else attrs.axis % len(x.shape)

        def build(ins, outs):
            src, dst = L.flat(ins[0]), L.flat(outs[0])
            shape = outs[0].shape if attrs.axis is None else ins[0].shape
            outer, n, inner = L.row_geometry(shape, axis)

            def per_row(base):
                def step(k):
                    prev = dst[base + tir.max(k - 1, 0) * inner]
                    if attrs.exclusive:
                        here = te_cast(src[base + tir.max(k - 1, 0) * inner], dtype)
                        first = tir.const(identity, dtype)
                    else:
                        here = te_cast(src[base + k * inner], dtype)
                        first = here
                    return Stmt.BufferStore(dst, te.if_then_else(k == 0, first, combine(prev, here)),
                                            [base + k * inner])
                return L.loop(n, step)
            return L.for_each_row(outer, n, inner, per_row)
        out_shape = [_size(x)] if attrs.axis is None else list(x.shape)
        return [te.extern(out_shape, [x], build, name=name, dtype=dtype, tag=name)]
    return compute


def _size(t):
    total = tir.const(1, "int32")
    for d in t.shape:
        total = total * d
    return total


def _add(a, b):
    return a + b


def _mul(a, b):
    return a * b


def _samples(rng):
    return [Sample([S.rand(rng, (2, 7))], ScanopAttrs(axis=1)),
            Sample([S.rand(rng, (3, 4, 2), "int32", -5, 5)], ScanopAttrs(axis=-2, exclusive=True)),
            Sample([S.rand(rng, (2, 3), "float32", 0.5, 1.5)], ScanopAttrs()),
            Sample([S.rand(rng, (5, 2), "int8", -3, 3)], ScanopAttrs(axis=0, dtype="int64", exclusive=True)),
            Sample([S.rand(rng, (4,), "float64")], ScanopAttrs(axis=0, exclusive=True)),
            Sample([S.rand(rng, (6,), "float16", 0.5, 1.5)], ScanopAttrs(axis=0)),
            Sample([S.rand(rng, (1,))], ScanopAttrs(axis=0)),
            Sample([S.rand(rng, (0, 3))], ScanopAttrs(axis=0, exclusive=True)),
            Sample([S.rand(rng, (3, 2), "bool")], ScanopAttrs(axis=1, dtype="int32"))]


CUMSUM = defop("cumsum", inputs=("data",), attrs=ScanopAttrs, rel=_scan_rel("cumsum"), pattern=OpPattern.OPAQUE,
               ref=_scan_ref(np.add, 0), compute=_scan_compute("cumsum", _add, 0), level=3, samples=_samples,
               doc="running sum along axis (flattened when axis is None)")
CUMPROD = defop("cumprod", inputs=("data",), attrs=ScanopAttrs, rel=_scan_rel("cumprod"), pattern=OpPattern.OPAQUE,
                ref=_scan_ref(np.multiply, 1), compute=_scan_compute("cumprod", _mul, 1), level=3, samples=_samples,
                doc="running product along axis (flattened when axis is None)")


# The parameters cumsum and cumprod share (constructor_docs completes their docstrings)
SCAN_PARAMETERS = {
    "data": ("relay.Expr", "The input tensor."),
    "axis": ("None or int, optional", "The axis to scan along; None scans the flattened data (a 1-D result)."),
    "dtype": ("None or str, optional", "The dtype of the result and of the running total; None means data's."),
    "exclusive": ("None or bool, optional", "If true, each output leaves its own element out (the first is "
                                            "the identity: 0 for a sum, 1 for a product); None or false "
                                            "includes it."),
}


@documented(SCAN_PARAMETERS)
def cumsum(data, axis=None, dtype=None, exclusive=None):
    """relay.cumsum: running sums along `axis` (over the flattened data when None)."""
    return CUMSUM(data, attrs=ScanopAttrs(axis, dtype, exclusive))


@documented(SCAN_PARAMETERS)
def cumprod(data, axis=None, dtype=None, exclusive=None):
    """relay.cumprod: running products along `axis` (over the flattened data when None)."""
    return CUMPROD(data, attrs=ScanopAttrs(axis, dtype, exclusive))


__all__ = ["cumsum", "cumprod", "ScanopAttrs"]
