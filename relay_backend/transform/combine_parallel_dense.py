"""CombineParallelDense (tvm.relay.transform.CombineParallelDense): parallel dense layers of one
input become one wider operation.

Guarantee: when at least `min_num_branches` nn.dense calls share their data input:
  to_batch=True (the default): those whose weights have equal shapes become one
    nn.batch_matmul over the stacked inputs and weights; following elementwise/broadcast ops
    are stacked likewise (each argument padded with leading unit dims so it still broadcasts
    per branch) and each branch takes its slice with split + squeeze;
  to_batch=False: those with equal input width become one nn.dense over weights concatenated
    along the units axis; following ops are merged along the last axis and each branch slices
    its units back.
Meaning is unchanged. Opt_level 4.
"""
import dataclasses

from ..docstrings import shared_parameters
from ..ir.expr import Call, TupleGetItem
from ..ir.types import TensorType
from ..op.nn.dense import batch_matmul
from ..op.indexing import split
from ..op.transform import concatenate, expand_dims, squeeze, stack
from .combine_parallel_op import COMBINER_PARAMETERS, COMBINER_PASS, ChannelConcatCombiner, ParallelOpCombiner
from .pass_infra import function_pass


class ParallelDenseToDenseCombiner(ChannelConcatCombiner):
    op_name = "nn.dense"

    def out_channels(self, call) -> int:
        return int(call.args[1].checked_type.shape[0])

    def compatible(self, a, b) -> bool:
        wa, wb = a.args[1].checked_type, b.args[1].checked_type
        return a.attrs.out_dtype == b.attrs.out_dtype and wa.dtype == wb.dtype and \
            wa.shape[1] == wb.shape[1]

    def make_combined(self, group):
        root = group[0][0]
        self.axis = root.checked_type.ndim - 1
        units = sum(self.out_channels(b[0]) for b in group)
        return Call(root.op, [root.args[0], concatenate([b[0].args[1] for b in group], axis=0)],
                    dataclasses.replace(root.attrs, units=units))


class ParallelDenseToBatchCombiner(ParallelOpCombiner):
    """Relay's ParallelOpBatchCombiner for nn.dense -> nn.batch_matmul."""

    op_name = "nn.dense"

    def compatible(self, a, b) -> bool:
        if a.attrs.out_dtype != b.attrs.out_dtype:
            return False
        return all(x.checked_type == y.checked_type for x, y in zip(a.args, b.args))

    def make_combined(self, group):
        root = group[0][0]
        data = stack([b[0].args[0] for b in group], axis=0)
        weight = stack([b[0].args[1] for b in group], axis=0)
        return batch_matmul(data, weight, out_dtype=root.attrs.out_dtype)

    def can_follow(self, call) -> bool:
        # attributes such as bias_add's axis count dims of the unbatched result; stacking adds
        # a leading batch dim, so only attribute-free ops (add, multiply, relu, ...) follow
        return call.attrs is None

    def arg_compatible(self, a, b, index) -> bool:
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        return isinstance(ta, TensorType) and ta == tb

    def join_args(self, calls, index, out_rank):
        args = []
        for c in calls:
            arg = c.args[index]
            missing = out_rank - c.args[index].checked_type.ndim
            args.append(expand_dims(arg, 0, missing) if missing > 0 else arg)
        return stack(args, axis=0)

    def split_output(self, combined, group, depth) -> list:
        parts = split(combined, len(group), axis=0).astuple()
        return [squeeze(TupleGetItem(parts, i), axis=[0]) for i in range(len(group))]


@shared_parameters(COMBINER_PARAMETERS, COMBINER_PASS)
def CombineParallelDense(min_num_branches: int = 3, to_batch: bool = True):  # noqa: N802
    """Function pass (opt_level 4): combine dense layers that read the same input into one
    operation.

    Parameters
    ----------
    to_batch : bool, optional
        If True (the default), denses whose weights have equal shapes become one
        batch_matmul over the stacked inputs and weights; if False, denses of equal input
        width become one wider dense over the concatenated weights, sliced afterwards.
    """
    combiner = ParallelDenseToBatchCombiner if to_batch else ParallelDenseToDenseCombiner
    return function_pass(lambda func, mod, ctx: combiner(min_num_branches).combine(func, mod),
                         opt_level=4, name="CombineParallelDense", required=["InferType"])


__all__ = ["CombineParallelDense", "ParallelDenseToDenseCombiner", "ParallelDenseToBatchCombiner"]
