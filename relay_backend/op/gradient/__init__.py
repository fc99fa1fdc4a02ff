"""Gradient definitions (Relay's FPrimalGradient): importing this package registers, with
`register_gradient`, a gradient for every differentiable operator of the registry.

A gradient is `fgradient(orig, grad) -> [one expression per input]` where `orig` is the typed
forward call and `grad` the gradient of its output (a tuple for tuple-valued ops); an input that
is a tuple gets a tuple-valued gradient. Files by operator family: elemwise, reduce, transform,
nn, pool; helpers holds what they share. Operators on bool tensors only (logical_*, all, any)
have no gradient.
"""
from . import elemwise, indexing, loss, nn, pool, reduce, transform  # noqa: F401  (importing registers them)
from . import elemwise_math  # noqa: F401
from .elemwise_math import NOT_DIFFERENTIABLE_MATH

# boolean ops, and ops that only mark a program for the compiler (no gradient in Relay either)
NOT_DIFFERENTIABLE = ("logical_and", "logical_or", "logical_not", "all", "any", "dyn.arange",
                      "annotation.checkpoint", "annotation.stop_fusion", "annotation.compiler_begin",
                      "annotation.compiler_end", "on_device",
                      # dyn ops: their shapes are run-time values (Relay registers no gradient)
                      "dyn.broadcast_to", "dyn.expand_dims", "dyn.full", "dyn.nn.pad", "dyn.ones",
                      "dyn.reshape", "dyn.squeeze", "dyn.strided_slice", "dyn.tile", "dyn.zeros")
# the issue-20 nn ops Relay registers no gradient for
NOT_DIFFERENTIABLE += ("nn.conv1d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose",
                       "nn.conv3d_transpose", "nn.max_pool1d", "nn.avg_pool1d", "nn.max_pool3d", "nn.avg_pool3d",
                       "nn.adaptive_max_pool1d", "nn.adaptive_avg_pool1d", "nn.adaptive_max_pool2d",
                       "nn.adaptive_max_pool3d", "nn.adaptive_avg_pool3d", "nn.depth_to_space", "nn.space_to_depth",
                       "nn.space_to_batch_nd", "nn.batch_to_space_nd", "nn.mirror_pad", "nn.dilate",
                       "nn.upsampling", "nn.upsampling3d", "dyn.nn.upsampling", "dyn.nn.upsampling3d",
                       "nn.instance_norm", "nn.group_norm", "nn.l2_normalize", "nn.nll_loss", "nn.max_pool2d_grad",
                       "nn.avg_pool2d_grad", "nn.conv2d_backward_weight", "nn.sparse_dense", "nn.sparse_transpose",
                       "nn.sparse_add", "nn.fifo_buffer", "nn.correlation", "nn.deformable_conv2d")
NOT_DIFFERENTIABLE += NOT_DIFFERENTIABLE_MATH
# the x86 layout ops AlterOpLayout makes after differentiation would run (no gradient in Relay)
NOT_DIFFERENTIABLE += ("nn.contrib_conv2d_NCHWc", "nn.contrib_depthwise_conv2d_NCHWc", "nn.contrib_dense_pack",
                       "nn.contrib_conv2d_winograd_weight_transform",
                       "nn.contrib_conv2d_winograd_without_weight_transform")
# indexing ops Relay registers no gradient for (issue 20)
NOT_DIFFERENTIABLE += ("gather", "adv_index", "scatter_elements", "scatter_nd", "dyn.one_hot",
                      "broadcast_to_like", "full_like", "slice_like", "trilu", "matrix_set_diag",
                      "reverse_sequence", "sequence_mask", "sliding_window", "argwhere", "searchsorted",
                      "unique", "invert_permutation", "meshgrid", "unravel_index", "strided_set",
                      "sparse_to_dense", "dyn.sparse_to_dense", "sparse_reshape", "sparse_fill_empty_rows")
# the qnn dialect: integer arithmetic, no gradient in Relay either
NOT_DIFFERENTIABLE += ("qnn.abs", "qnn.add", "qnn.avg_pool2d", "qnn.batch_matmul", "qnn.concatenate", "qnn.conv2d",
                       "qnn.conv2d_transpose",
                       "qnn.dense", "qnn.dequantize", "qnn.erf", "qnn.exp", "qnn.hardswish", "qnn.leaky_relu",
                       "qnn.log", "qnn.mul", "qnn.quantize", "qnn.requantize", "qnn.rsqrt", "qnn.sigmoid",
                       "qnn.simulated_dequantize", "qnn.simulated_quantize", "qnn.softmax", "qnn.sqrt",
                       "qnn.subtract", "qnn.tanh")
# image and vision ops: TVM v0.18 registers no gradient for them
NOT_DIFFERENTIABLE += ("dyn.image.resize2d", "dyn.image.resize2d_scales", "image.affine_grid", "image.crop_and_resize", "image.dilation2d",
                       "image.grid_sample", "image.resize1d", "image.resize2d", "image.resize3d",
                       "vision.all_class_non_max_suppression", "vision.get_valid_counts",
                       "vision.multibox_prior", "vision.multibox_transform_loc", "vision.non_max_suppression",
                       "vision.proposal", "vision.regular_non_max_suppression", "vision.roi_align",
                       "vision.roi_pool", "vision.yolo_reorg")


def differentiable_ops() -> list:
    """Names of the registered ops that have a gradient."""
    from ..registry import list_ops
    return [op.name for op in list_ops() if op.has_attr("FPrimalGradient")]


__all__ = ["differentiable_ops", "NOT_DIFFERENTIABLE"]
