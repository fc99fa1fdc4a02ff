"""Gradient definitions (Relay's FPrimalGradient): importing this package registers, with
`register_gradient`, a gradient for every differentiable operator of the registry.

A gradient is `fgradient(orig, grad) -> [one expression per input]` where `orig` is the typed
forward call and `grad` the gradient of its output (a tuple for tuple-valued ops); an input that
is a tuple gets a tuple-valued gradient. Files by operator family: elemwise, reduce, transform,
nn, pool; helpers holds what they share. Operators on bool tensors only (logical_*, all, any)
have no gradient.
"""
from . import elemwise, indexing, nn, pool, reduce, transform  # noqa: F401  (importing registers them)

# boolean ops, and ops that only mark a program for the compiler (no gradient in Relay either)
NOT_DIFFERENTIABLE = ("logical_and", "logical_or", "logical_not", "all", "any", "dyn.arange",
                      "annotation.checkpoint", "annotation.stop_fusion", "annotation.compiler_begin",
                      "annotation.compiler_end", "on_device",
                      # dyn ops: their shapes are run-time values (Relay registers no gradient)
                      "dyn.broadcast_to", "dyn.expand_dims", "dyn.full", "dyn.nn.pad", "dyn.ones",
                      "dyn.reshape", "dyn.squeeze", "dyn.strided_slice", "dyn.tile", "dyn.zeros",
                      # indexing ops Relay registers no gradient for (issue 20)
                      "gather", "adv_index", "scatter_elements", "scatter_nd", "dyn.one_hot",
                      "broadcast_to_like", "full_like", "slice_like", "trilu", "matrix_set_diag",
                      "reverse_sequence", "sequence_mask", "sliding_window", "argwhere", "searchsorted",
                      "unique", "invert_permutation", "meshgrid", "unravel_index", "strided_set",
                      "sparse_to_dense", "dyn.sparse_to_dense", "sparse_reshape", "sparse_fill_empty_rows")


def differentiable_ops() -> list:
    """Names of the registered ops that have a gradient."""
    from ..registry import list_ops
    return [op.name for op in list_ops() if op.has_attr("FPrimalGradient")]


__all__ = ["differentiable_ops", "NOT_DIFFERENTIABLE"]
