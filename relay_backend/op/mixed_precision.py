"""How each operator behaves under ToMixedPrecision (Relay's FTVMMixedPrecisionConversionType,
python/tvm/relay/transform/mixed_precision.py), attached to the ops with
`register_mixed_precision_conversion`.

A conversion function `f(call, mixed_precision_type) -> [category, accumulation dtype, output
dtype]` puts an op in one of three categories: ALWAYS (run in the low precision: the matrix
products and convolutions), FOLLOW (run in low precision when its inputs already are: shape ops,
simple arithmetic and activations, pools), NEVER (keep float32: exp, power, softmax, large sums).
The lists are Relay v0.18's, restricted to the ops that exist here; an op in no list is treated
as FOLLOW by the pass, with a warning. Like Relay v0.18, the accumulation dtype is the mixed
type too (its float32 accumulation is commented out there); the float16 computes here
accumulate in float32 internally anyway.
"""
from .registry import get as get_op, register_op_attr

MIXED_PRECISION_ALWAYS = 0
MIXED_PRECISION_FOLLOW = 1
MIXED_PRECISION_NEVER = 2

DEFAULT_ALWAYS_LIST = ["nn.conv2d", "nn.dense", "nn.batch_matmul", "nn.matmul"]
DEFAULT_FOLLOW_LIST = [
    "nn.pad", "nn.batch_flatten", "concatenate", "zeros", "split", "squeeze", "transpose",
    "expand_dims", "reshape", "strided_slice", "take", "where", "tile", "full", "less", "greater",
    "less_equal", "greater_equal", "copy", "cast", "add", "subtract", "multiply", "divide",
    "nn.bias_add", "nn.batch_norm", "sqrt", "max", "min", "maximum", "minimum", "argmax", "argmin",
    "nn.relu", "nn.leaky_relu", "nn.prelu", "nn.dropout", "sigmoid", "tanh", "fast_tanh",
    "fast_exp", "fast_erf", "clip", "nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d",
    "layout_transform",
]
DEFAULT_NEVER_LIST = [
    "exp", "power", "nn.softmax", "erf", "arange", "nn.global_avg_pool2d",
    "nn.adaptive_avg_pool2d", "sum", "mean", "variance", "nn.layer_norm",
]


def register_mixed_precision_conversion(op_name: str, func=None, level: int = 10):
    """Register `func(call, mixed_precision_type) -> [category, accumulation dtype, output
    dtype]` for op `op_name` (tvm.relay.op.register_mixed_precision_conversion)."""
    return register_op_attr(op_name, "FTVMMixedPrecisionConversionType", func, level)


def get_generic_out_dtypes(call, mixed_precision_type: str) -> list:
    """[accumulation dtype, output dtype]: both the mixed type, as Relay v0.18."""
    return [mixed_precision_type, mixed_precision_type]


def _category(category):
    def conversion(call, mixed_precision_type):
        return [category] + get_generic_out_dtypes(call, mixed_precision_type)
    return conversion


generic_always_op = _category(MIXED_PRECISION_ALWAYS)
generic_follow_op = _category(MIXED_PRECISION_FOLLOW)
generic_never_op = _category(MIXED_PRECISION_NEVER)

for _names, _func in ((DEFAULT_ALWAYS_LIST, generic_always_op), (DEFAULT_FOLLOW_LIST, generic_follow_op),
                      (DEFAULT_NEVER_LIST, generic_never_op)):
    for _name in _names:
        get_op(_name)   # a misspelled name fails at import
        register_mixed_precision_conversion(_name, _func)

__all__ = ["register_mixed_precision_conversion", "MIXED_PRECISION_ALWAYS", "MIXED_PRECISION_FOLLOW",
           "MIXED_PRECISION_NEVER", "DEFAULT_ALWAYS_LIST", "DEFAULT_FOLLOW_LIST", "DEFAULT_NEVER_LIST",
           "get_generic_out_dtypes"]
