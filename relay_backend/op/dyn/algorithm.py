"""dyn.topk (TVM v0.18's relay.dyn.topk): topk whose k is a Relay tensor read at run time.

`relay.topk(data, k)` builds it when k is a non-constant Relay expression. The size kept along
the axis is Any in the type; the VM's shape function and the reference replay the static
topk's relation and reference on the concrete k (k < 1 keeps the whole axis, a k larger than
the axis is an InputError), and DynamicToStatic turns a call with a constant k into topk.
"""
import dataclasses

import numpy as np

from ...errors import InputError, TypeInferenceError
from ...ir.types import Any, type_to_str
from .. import samples as S
from ..algorithm.sorting import (SELECTED, SORT_PARAMETERS, TOPK, TopKAttrs, both_wrapped, topk_compute,
                                 topk_type)
from ..constructor_docs import documented
from ..registry import Sample
from ..relations import expect_tensor
from .common import INT_DTYPES, defdyn, read_ints, te_out_shape


def _k_value(value) -> int:
    ints = read_ints(value, "dyn.topk", "k")
    if len(ints) != 1:
        raise InputError(f"dyn.topk: k must hold one integer, got {list(ints)}")
    return ints[0]


def _rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "dyn.topk data")
    k = expect_tensor(arg_types[1], "dyn.topk k")
    if k.dtype not in INT_DTYPES or tuple(k.shape) not in ((), (1,)):
        raise TypeInferenceError(f"dyn.topk: k must be a 0-d or one-element integer tensor, got {type_to_str(k)}")
    return topk_type(data, attrs, Any())


def _to_static(attrs, values):
    return TOPK, dataclasses.replace(attrs, k=_k_value(values[1]))


def _compute(attrs, inputs, out_type):
    first = out_type.fields[0] if hasattr(out_type, "fields") else out_type
    axis = attrs.axis % len(inputs[0].shape)
    k = te_out_shape(first, "topk")[axis]
    return topk_compute(attrs, inputs[:1], out_type, k=k)


def _samples(rng):
    return [Sample([S.rand(rng, (2, 7)), np.array(3, "int64")], TopKAttrs(k=None)),
            Sample([S.rand(rng, (4, 5), "int32", -9, 9), np.array([2], "int32")],
                   TopKAttrs(k=None, axis=0, ret_type="indices", is_ascend=True)),
            Sample([S.rand(rng, (6,)), np.array(0, "int32")], TopKAttrs(k=None, ret_type="values"))]


TOPK_DYN = defdyn("dyn.topk", inputs=("data", "k"), static_inputs=(0,), attrs=TopKAttrs, to_static=_to_static,
                  rel=_rel, compute=_compute, samples=_samples, level=6,
                  doc="topk(data, k read at run time)")


@documented(SORT_PARAMETERS, SELECTED)
def dyn_topk(data, k, axis=-1, ret_type="both", is_ascend=False, dtype="int32"):
    """relay.dyn.topk: topk with k a Relay expression (a 0-d or one-element int tensor).

    Parameters
    ----------
    k : relay.Expr
        The number of elements to keep, read at run time; below 1 keeps the whole axis.
    """
    return both_wrapped(TOPK_DYN(data, k, attrs=TopKAttrs(None, axis, ret_type, is_ascend, dtype)), ret_type)


__all__ = ["dyn_topk"]
