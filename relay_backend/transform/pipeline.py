"""The one optimisation pipeline that build(), vm.compile() and create_executor() run.

Every compiled executor sees the same program: device annotations checked and removed, types
inferred, inference-only ops simplified,
constants folded, primitive functions fused (FuseOps at the PassContext's opt_level), types
inferred again. Each pass is gated by the current PassContext (opt_level, disabled_pass), so
`PassContext(disabled_pass=["FoldConstant"])` reaches all executors alike.
`print(default_pipeline())` shows the list.
"""
from .dead_code import RemoveUnusedFunctions
from .fold_constant import FoldConstant
from .fuse_ops import FuseOps
from .infer_type import InferType
from .pass_infra import Sequential
from .plan_devices import PlanDevices
from .simplify_inference import SimplifyInference


def default_pipeline(keep_only_main: bool = False, device_type=None) -> Sequential:
    """The optimisation passes, in order. `keep_only_main` first drops the functions main does
    not reach (the VM compiles every global, so it asks for that; build() only compiles main).
    PlanDevices checks that device annotations name one device (`device_type`, 1 cpu / 2 cuda,
    when the caller knows the target's) and removes them."""
    passes = [RemoveUnusedFunctions(["main"])] if keep_only_main else []
    passes += [
        PlanDevices(device_type),
        InferType(),
        SimplifyInference(),
        FoldConstant(),
        InferType(),
        FuseOps(),            # fuse_opt_level=-1: fuse at PassContext.opt_level
        InferType(),
    ]
    return Sequential(passes, name="default_pipeline")


__all__ = ["default_pipeline"]
