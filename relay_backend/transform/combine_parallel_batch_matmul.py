"""CombineParallelBatchMatmul (tvm.relay.transform.CombineParallelBatchMatmul): parallel batch
matmuls of one left operand become one over their concatenated right operands.

Guarantee: when at least `min_num_branches` nn.batch_matmul calls (transpose_a=False,
transpose_b=True, the layout Relay supports here) share tensor_a and have right operands of
rank 3 with equal batch size, dtype and out dtype, they become one batch_matmul whose tensor_b
concatenates theirs along N (axis 1); following elementwise/broadcast ops are merged along the
last axis and each branch slices its columns back. Meaning is unchanged. Opt_level 4.
"""
from ..docstrings import shared_parameters
from ..ir.expr import Call
from ..op.transform import concatenate
from .combine_parallel_op import COMBINER_PARAMETERS, COMBINER_PASS, ChannelConcatCombiner
from .pass_infra import function_pass


class ParallelBatchMatmulCombiner(ChannelConcatCombiner):
    op_name = "nn.batch_matmul"

    def is_supported(self, call) -> bool:
        return not call.attrs.transpose_a and call.attrs.transpose_b

    def out_channels(self, call) -> int:
        return int(call.args[1].checked_type.shape[1])

    def compatible(self, a, b) -> bool:
        ra, rb = a.args[1].checked_type, b.args[1].checked_type
        return ra.dtype == rb.dtype and ra.ndim == rb.ndim == 3 and ra.shape[0] == rb.shape[0] and \
            a.attrs.out_dtype == b.attrs.out_dtype and a.checked_type.dtype == b.checked_type.dtype

    def make_combined(self, group):
        root = group[0][0]
        self.axis = 2
        return Call(root.op, [root.args[0], concatenate([b[0].args[1] for b in group], axis=1)],
                    root.attrs)


@shared_parameters(COMBINER_PARAMETERS, COMBINER_PASS)
def CombineParallelBatchMatmul(min_num_branches: int = 3):  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 4): combine batch_matmuls that share their first input into one
    batch_matmul over the concatenated second inputs, then split the result.
    """
    return function_pass(
        lambda func, mod, ctx: ParallelBatchMatmulCombiner(min_num_branches).combine(func, mod),
        opt_level=4, name="CombineParallelBatchMatmul", required=["InferType"])


__all__ = ["CombineParallelBatchMatmul", "ParallelBatchMatmulCombiner"]
