"""CanonicalizeOps (tvm.relay.transform.CanonicalizeOps): express ops that exist for convenience
by the basic ones the rest of the pipeline knows.

Guarantee: `nn.bias_add(x, b, axis)` becomes `add(x, expand_dims(b, axis=1, num_newaxis=k))`
with k = rank(x) - axis - 1 trailing unit dims (none when the bias already lines up with the
last axis), which computes the same values with the same type. Rules are rows of RULES.
"""
from .. import op as _op
from ..ir.types import TensorType
from .pass_infra import function_pass, register_pass_factory
from .rewrite import rewrite_function
from .simplify_inference import expand_bias_to_axis


def bias_add_to_add(call):
    data_t = call.args[0].checked_type
    if not isinstance(data_t, TensorType):
        return None
    axis = call.attrs.axis
    axis = axis + data_t.ndim if axis < 0 else axis
    return _op.add(call.args[0], expand_bias_to_axis(call.args[1], data_t.ndim, axis))


RULES = {"nn.bias_add": [bias_add_to_add]}


def CanonicalizeOps():  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 3)."""
    return function_pass(lambda func, mod, ctx: rewrite_function(func, mod, RULES), opt_level=3,
                         name="CanonicalizeOps", required=["InferType"])


register_pass_factory("CanonicalizeOps", CanonicalizeOps)

__all__ = ["CanonicalizeOps", "RULES"]
