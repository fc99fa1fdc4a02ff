"""CombineParallelConv2D (tvm.relay.transform.CombineParallelConv2D, pass "CombineParallelConv2d"):
parallel convolutions of one input become one convolution over their concatenated kernels.

Guarantee: when at least `min_num_branches` conv2d calls (groups=1) read the same data with
equal strides, padding, dilation, layouts, out dtype and kernel height/width, they are replaced
by one conv2d whose weight concatenates theirs along the output-channel axis; elementwise and
broadcast ops that follow every branch alike (e.g. bias add + relu) are merged too, their
per-channel arguments concatenated; each branch then reads its channels back with a
strided_slice. Meaning is unchanged. Opt_level 4.
"""
import dataclasses

from ..docstrings import shared_parameters
from ..ir.expr import Call
from ..op.transform import concatenate
from .combine_parallel_op import COMBINER_PARAMETERS, COMBINER_PASS, ChannelConcatCombiner
from .pass_infra import function_pass

_SAME_ATTRS = ("strides", "padding", "dilation", "groups", "data_layout", "kernel_layout",
               "out_dtype", "out_layout")


class ParallelConv2DCombiner(ChannelConcatCombiner):
    op_name = "nn.conv2d"

    def is_supported(self, call) -> bool:
        return call.attrs.groups == 1

    def out_channels(self, call) -> int:
        return int(call.args[1].checked_type.shape[call.attrs.kernel_layout.index("O")])

    def compatible(self, a, b) -> bool:
        if any(getattr(a.attrs, k) != getattr(b.attrs, k) for k in _SAME_ATTRS):
            return False
        layout = a.attrs.kernel_layout
        wa, wb = a.args[1].checked_type, b.args[1].checked_type
        return wa.dtype == wb.dtype and \
            all(wa.shape[layout.index(k)] == wb.shape[layout.index(k)] for k in "HW")

    def make_combined(self, group):
        root = group[0][0]
        weight = concatenate([b[0].args[1] for b in group], axis=root.attrs.kernel_layout.index("O"))
        channels = sum(self.out_channels(b[0]) for b in group)
        self.axis = (root.attrs.out_layout or root.attrs.data_layout).index("C")
        return Call(root.op, [root.args[0], weight], dataclasses.replace(root.attrs, channels=channels))


@shared_parameters(COMBINER_PARAMETERS, COMBINER_PASS)
def CombineParallelConv2D(min_num_branches: int = 3):  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 4, named "CombineParallelConv2d" as in Relay): combine conv2ds
    that read the same input with compatible attributes into one wider conv2d, then split
    its output channels.
    """
    return function_pass(
        lambda func, mod, ctx: ParallelConv2DCombiner(min_num_branches).combine(func, mod),
        opt_level=4, name="CombineParallelConv2d", required=["InferType"])


__all__ = ["CombineParallelConv2D", "ParallelConv2DCombiner"]
