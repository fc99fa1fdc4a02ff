"""Gradient definitions (Relay's FPrimalGradient): importing this package registers, with
`register_gradient`, a gradient for every differentiable operator of the registry.

A gradient is `fgradient(orig, grad) -> [one expression per input]` where `orig` is the typed
forward call and `grad` the gradient of its output (a tuple for tuple-valued ops); an input that
is a tuple gets a tuple-valued gradient. Files by operator family: elemwise, reduce, transform,
nn, pool; helpers holds what they share. Operators on bool tensors only (logical_*, all, any)
have no gradient.
"""
from . import elemwise, nn, pool, reduce, transform  # noqa: F401  (importing registers them)

# boolean ops, and ops that only mark a program for the compiler (no gradient in Relay either)
NOT_DIFFERENTIABLE = ("logical_and", "logical_or", "logical_not", "all", "any", "dyn.arange",
                      "annotation.checkpoint", "annotation.stop_fusion", "annotation.compiler_begin",
                      "annotation.compiler_end", "on_device")


def differentiable_ops() -> list:
    """Names of the registered ops that have a gradient."""
    from ..registry import list_ops
    return [op.name for op in list_ops() if op.has_attr("FPrimalGradient")]


__all__ = ["differentiable_ops", "NOT_DIFFERENTIABLE"]
