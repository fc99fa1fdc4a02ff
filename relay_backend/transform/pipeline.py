"""The one optimisation pipeline that build(), vm.compile() and create_executor() run.

It is Relay v0.18's list (GetPassPrefix in src/relay/backend/utils.cc, then FuseOps), with the
passes that exist here, each gated by its own opt_level under the current PassContext:

  RemoveUnusedFunctions(["main"])   1     EtaExpand(constructors)   1  (VM only)
  ToBasicBlockNormalForm            1     EliminateCommonSubexpr    3
  SimplifyInference                 0     CombineParallelConv2D(3)  4
  CombineParallelDense(3)           4     CombineParallelBatchMatmul(3) 4
  FoldConstant                      2     FoldScaleAxis (its passes 3)
  SimplifyExpr                      0     CanonicalizeOps           3
  SimplifyExprPostAlterOp           0     FastMath                  4
  FoldConstant                      2     FuseOps (at opt_level)    0

PlanDevices runs first (device annotations checked against the target's device and removed).
(Relay's Legalize, CanonicalizeCast, FlattenAtrousConv and AlterOpLayout have no counterpart
here; InferType runs wherever a pass requires types, as Relay's Sequential does.)
`pipeline_passes(opt_level)` returns the names that run at an opt_level and `print_pipeline`
prints them; `PassContext(disabled_pass=[...])` reaches all executors alike.
"""
import sys

from .canonicalize_ops import CanonicalizeOps
from .combine_parallel_batch_matmul import CombineParallelBatchMatmul
from .combine_parallel_conv2d import CombineParallelConv2D
from .combine_parallel_dense import CombineParallelDense
from .dead_code import RemoveUnusedFunctions
from .eliminate_common_subexpr import EliminateCommonSubexpr
from .eta_expand import EtaExpand
from .fast_math import FastMath
from .fold_constant import FoldConstant
from .fold_scale_axis import FoldScaleAxis
from .fuse_ops import FuseOps
from .infer_type import InferType
from .pass_infra import PassContext, Sequential
from .plan_devices import PlanDevices
from .simplify_expr import SimplifyExpr, SimplifyExprPostAlterOp
from .simplify_inference import SimplifyInference
from .to_basic_block_normal_form import ToBasicBlockNormalForm


def pass_prefix(keep_only_main: bool = True, is_vm: bool = False, device_type=None) -> list:
    """Relay's GetPassPrefix: the optimisations before fusion, in order, after PlanDevices
    (device annotations must name `device_type`, 1 cpu / 2 cuda, when the caller knows it)."""
    passes = [RemoveUnusedFunctions(["main"])] if keep_only_main else []
    passes += [PlanDevices(device_type), ToBasicBlockNormalForm(), SimplifyInference()]
    if is_vm:   # constructors in argument position become closures the VM can pass around
        passes.append(EtaExpand(expand_constructor=True, expand_global_var=False))
    passes += [
        # Relay passes an fskip meant to keep int32 casts apart, but it always answers False
        EliminateCommonSubexpr(),
        CombineParallelConv2D(3),
        CombineParallelDense(3),
        CombineParallelBatchMatmul(3),
        FoldConstant(),
        FoldScaleAxis(),
        SimplifyExpr(),
        CanonicalizeOps(),
        SimplifyExprPostAlterOp(),
        FastMath(),
        FoldConstant(),
    ]
    return passes


def default_pipeline(keep_only_main: bool = True, is_vm: bool = False,
                     device_type=None) -> Sequential:
    """The optimisation passes, in order, ending with FuseOps. `keep_only_main` first drops the
    functions main does not reach (pass False for a module without main); `is_vm` adds the
    VM's EtaExpand; `device_type` is the target's device for PlanDevices."""
    passes = [InferType(), *pass_prefix(keep_only_main, is_vm, device_type),
              FuseOps(),            # fuse_opt_level=-1: fuse at PassContext.opt_level
              InferType()]
    return Sequential(passes, name="default_pipeline")


def _enabled_names(seq, ctx) -> list:
    names = []
    for p in seq.passes:
        if not ctx.pass_enabled(p.info):
            continue
        names.extend(p.info.required)
        names.extend(_enabled_names(p, ctx) if isinstance(p, Sequential) else [p.info.name])
    return names


def pipeline_passes(opt_level: int = None, is_vm: bool = False) -> list:
    """The names of the passes build() (or, with is_vm, vm.compile()) runs at `opt_level`
    (default: the current PassContext's), in order, with the InferType runs passes require."""
    ctx = PassContext.current()
    if opt_level is not None:
        ctx = PassContext(opt_level=opt_level, required_pass=ctx.required_pass,
                          disabled_pass=ctx.disabled_pass)
    return _enabled_names(default_pipeline(is_vm=is_vm), ctx)


def print_pipeline(opt_level: int = None, is_vm: bool = False, file=None) -> None:
    """Print pipeline_passes(opt_level, is_vm), one per line."""
    level = PassContext.current().opt_level if opt_level is None else opt_level
    out = file or sys.stdout
    print(f"# default pipeline at opt_level={level}{' (vm)' if is_vm else ''}", file=out)
    for i, name in enumerate(pipeline_passes(opt_level, is_vm)):
        print(f"{i:3d}  {name}", file=out)


__all__ = ["default_pipeline", "pass_prefix", "pipeline_passes", "print_pipeline"]
