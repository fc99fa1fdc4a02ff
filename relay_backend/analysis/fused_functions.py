"""extract_fused_functions (tvm.relay.analysis.extract_fused_functions): the primitive functions
FuseOps would compile for a module, keyed by structural hash.

It runs InferType, SimplifyInference and FuseOps(fuse_opt_level=3) on a copy of the module, as
TVM's ExtractFusedFunctions does, so the answer is the set of kernels `build` would produce at
opt_level 3 (identical kernels appear once).
"""
from ..ir.expr import Function
from ..ir.functor import all_nodes_post_order
from ..ir.module import IRModule
from ..ir.structural import structural_hash


def extract_fused_functions(mod: IRModule) -> dict:
    """The primitive functions a module fuses into (tvm.relay.analysis.extract_fused_functions):
    InferType, SimplifyInference and FuseOps at level 3 are run on it first.

    Parameters
    ----------
    mod : IRModule
        The module to list the kernels of, typed or not and not yet fused; it is not
        changed.

    Returns
    -------
    functions : dict of int to Function
        {structural hash: primitive Function}, one per distinct kernel.
    """
    from ..transform import FuseOps, InferType, Sequential, SimplifyInference
    fused = Sequential([InferType(), SimplifyInference(), FuseOps(fuse_opt_level=3),
                        InferType()])(mod)
    out = {}
    for fn in fused.functions.values():
        for node in all_nodes_post_order(fn):
            if isinstance(node, Function) and node.is_primitive:
                out.setdefault(structural_hash(node), node)
    return out


__all__ = ["extract_fused_functions"]
