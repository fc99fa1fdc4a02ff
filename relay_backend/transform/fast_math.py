"""FastMath (tvm.relay.transform.FastMath): use the fast variants of transcendental operators.

Guarantee: exp, tanh, erf and nn.softmax calls become fast_exp, fast_tanh, fast_erf and
nn.fast_softmax with the same arguments and attributes (FAST_VARIANTS lists the pairs). In
Relay the fast ops trade accuracy for speed; here the compiled exp/tanh/erf are already the
inline polynomials, so results stay within a few float32 ulps of the originals. Opt_level 4.
"""
from ..ir.expr import Call
from ..op.registry import get as get_op
from .pass_infra import function_pass
from .rewrite import rewrite_function

FAST_VARIANTS = {"exp": "fast_exp", "tanh": "fast_tanh", "erf": "fast_erf",
                 "nn.softmax": "nn.fast_softmax"}


def _to_fast(fast_name):
    def rule(call):
        return Call(get_op(fast_name), call.args, call.attrs, call.type_args)
    return rule


RULES = {name: [_to_fast(fast)] for name, fast in FAST_VARIANTS.items()}


def FastMath():  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 4)."""
    return function_pass(lambda func, mod, ctx: rewrite_function(func, mod, RULES), opt_level=4,
                         name="FastMath")


__all__ = ["FastMath", "FAST_VARIANTS"]
