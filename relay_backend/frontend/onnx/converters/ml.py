"""Two ops of ONNX's classical-ML domain (ai.onnx.ml) that are plain tensor arithmetic:
Binarizer (1 where x > threshold, else 0, in x's dtype) and ArrayFeatureExtractor (the listed
entries of x's last axis; a 1-D x gives one row, as onnxruntime and ONNX's reference do).

ArrayFeatureExtractor's indices may be run-time values: as Gather's, they are read with
mode="clip" (a compiled kernel cannot raise, so an out-of-range index is clamped, never read out of
bounds); constant ones are checked here.
"""
import numpy as np

from .... import op as _op
from ..common import const
from ._registry import converter

DOMAIN = "ai.onnx.ml."


def _expect_inputs(ctx, inputs, count, names):
    """The ai.onnx.ml ops are outside the schema check's default domain: count their inputs here."""
    if len(inputs) != count or any(i is None for i in inputs):
        raise ctx.invalid(f"takes {count} input(s) ({names}), got {len(inputs)}")


@converter(DOMAIN + "Binarizer")
def binarizer(ctx, inputs):
    """1 where x > threshold, else 0, in x's dtype."""
    _expect_inputs(ctx, inputs, 1, "X")
    x = inputs[0]
    dtype = ctx.dtype(x)
    threshold = const(np.array(float(ctx.attrs.get("threshold", 0.0)), dtype))
    return _op.cast(_op.greater(x, threshold), dtype)


@converter(DOMAIN + "ArrayFeatureExtractor")
def array_feature_extractor(ctx, inputs):
    """The entries of X's last axis that Y lists (a 1-D X gives one row)."""
    _expect_inputs(ctx, inputs, 2, "X and Y")
    x, indices = inputs
    shape = ctx.static_shape(x, "X")
    if not shape:
        raise ctx.invalid("X must have at least one axis")
    count = int(np.prod(ctx.static_shape(indices, "Y"), dtype=np.int64))
    flat = _op.reshape(_op.cast(indices, "int64"), (count,))
    known = ctx.maybe_value(indices)
    if known is not None:
        bad = (np.asarray(known) < 0) | (np.asarray(known) >= shape[-1])
        if bad.any():
            raise ctx.invalid(f"index {int(np.asarray(known)[bad].reshape(-1)[0])} is out of range for the last "
                              f"axis of X (length {shape[-1]})")
    picked = _op.take(x, flat, axis=len(shape) - 1, mode="clip")
    return _op.reshape(picked, (1, count) if len(shape) == 1 else (*shape[:-1], count))
