"""The one optimisation pipeline that build(), vm.compile() and create_executor() run.

It is Relay v0.18's list (GetPassPrefix in src/relay/backend/utils.cc, then FuseOps), with the
passes that exist here, each gated by its own opt_level under the current PassContext:

  RemoveUnusedFunctions(["main"])   1     PlanDevices(device type)  0
  ToBasicBlockNormalForm            1     QnnLegalize, QnnCanonicalize  0  (TVM: 1)
  SimplifyInference                 0
  EtaExpand(constructors) 1 (VM only)     EliminateCommonSubexpr    3
  CombineParallelConv2D(3)          4     CombineParallelDense(3)   4
  CombineParallelBatchMatmul(3)     4     FoldConstant              2
  FoldScaleAxis (its passes 3)            PoolBeforePointwiseConv   3  (not in TVM)
  SimplifyExpr                      0     PadConvChannels(target)   3  (not in TVM)
  CanonicalizeOps                   3
  AlterOpLayout(target)             3     SimplifyExprPostAlterOp   0
  FastMath                          4     FoldConstant              2
  FuseOps (at opt_level)            0
(read row by row)

PlanDevices runs first (device annotations checked against the target's device and removed).
AlterOpLayout needs the target (x86 runs conv2d / dense in channel-blocked layouts with
pre-packed weights, which the last FoldConstant packs); without one it changes nothing.
(Relay's Legalize, CanonicalizeCast and FlattenAtrousConv have no counterpart here; InferType
runs wherever a pass requires types, as Relay's Sequential does.)

The pipeline is told what it compiles for by `target` (a Target or its string: AlterOpLayout
alters for it, and PlanDevices checks annotations against its device type) and/or
`device_type` (1 cpu, 2 cuda: PlanDevices only, as the executors that know their device pass
it); an explicit device_type wins over the target's.
`pipeline_passes(opt_level)` returns the names that run at an opt_level and `print_pipeline`
prints them; `PassContext(disabled_pass=[...])` reaches all executors alike.
"""
import sys

from ..docstrings import shared_parameters
from ..target import as_target
from .alter_op_layout import AlterOpLayout
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
from .legalize import qnn_lowering_passes
from .pass_infra import PassContext, Sequential
from .plan_devices import PlanDevices
from .pad_channels import PadConvChannels
from .pool_before_pointwise_conv import PoolBeforePointwiseConv
from .simplify_expr import SimplifyExpr, SimplifyExprPostAlterOp
from .simplify_inference import SimplifyInference
from .to_basic_block_normal_form import ToBasicBlockNormalForm


def _target_and_device(target, device_type) -> tuple:
    """(target for AlterOpLayout, device type for PlanDevices): `device_type` when given, else
    the target's. A bare device type passed as the target (the older positional call) is taken
    as the device type, with no target to alter for."""
    if isinstance(target, int) and not isinstance(target, bool):
        return None, target if device_type is None else device_type
    if device_type is None and target is not None:
        target = as_target(target)
        device_type = target.device_type
    return target, device_type


def pass_prefix(keep_only_main: bool = True, is_vm: bool = False, target=None, device_type=None) -> list:
    """Relay's GetPassPrefix: the optimisations before fusion, in order, after PlanDevices.

    Parameters
    ----------
    keep_only_main : bool, optional
        If True (the default), first drop the functions main does not reach.
    is_vm : bool, optional
        If True, add the VM's passes (EtaExpand). Defaults to False.
    target : Target or str or int, optional
        What AlterOpLayout alters for; an int is taken as a device type. Defaults to None.
    device_type : int, optional
        The device type (1 cpu, 2 cuda) device annotations must name; defaults to the target's.

    Returns
    -------
    passes : list of Pass
        The passes, in order.
    """
    target, device_type = _target_and_device(target, device_type)
    passes = [RemoveUnusedFunctions(["main"])] if keep_only_main else []
    passes += [PlanDevices(device_type), ToBasicBlockNormalForm(),
               *qnn_lowering_passes(),  # qnn ops to basic ops: they have no compute of their own
               SimplifyInference()]
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
        PoolBeforePointwiseConv(),   # after FoldScaleAxis: a scale folds into the conv, not the pool
        SimplifyExpr(),
        PadConvChannels(target),     # before CanonicalizeOps: bias_add is still one op
        CanonicalizeOps(),
        AlterOpLayout(target),
        SimplifyExprPostAlterOp(),
        FastMath(),
        FoldConstant(),
    ]
    return passes


def default_pipeline(keep_only_main: bool = True, is_vm: bool = False, target=None,
                     device_type=None) -> Sequential:
    """The optimisation passes relay.build and vm.compile run, in order, ending with FuseOps.

    Parameters
    ----------
    keep_only_main : bool, optional
        If True (the default), first drop the functions main does not reach; pass False for a
        module without main.
    is_vm : bool, optional
        If True, add the VM's passes (EtaExpand). Defaults to False.
    target : Target or str or int, optional
        The build's target: what AlterOpLayout alters for (x86 NCHWc layouts on llvm), and whose
        device type PlanDevices checks annotations against. Defaults to None (no layout change).
    device_type : int, optional
        The device type (1 cpu, 2 cuda) PlanDevices checks annotations against, when it differs
        from the target's. Defaults to None.

    Returns
    -------
    pipeline : Sequential
        The passes.
    """
    passes = [InferType(), *pass_prefix(keep_only_main, is_vm, target, device_type),
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


# what the two listings share (shared_parameters completes their docstrings)
LISTING_PARAMETERS = {
    "opt_level": ("int", "The opt_level to list for; None is the current PassContext's."),
    "is_vm": ("bool", "If True, list vm.compile's pipeline instead of build()'s."),
}


@shared_parameters(LISTING_PARAMETERS)
def pipeline_passes(opt_level: int = None, is_vm: bool = False) -> list:
    """The names of the passes build() (or, with is_vm, vm.compile()) runs, in order, with the
    InferType runs the passes require.

    Returns
    -------
    names : list of str
        The pass names.
    """
    ctx = PassContext.current()
    if opt_level is not None:
        ctx = PassContext(opt_level=opt_level, required_pass=ctx.required_pass,
                          disabled_pass=ctx.disabled_pass)
    return _enabled_names(default_pipeline(is_vm=is_vm), ctx)


@shared_parameters(LISTING_PARAMETERS)
def print_pipeline(opt_level: int = None, is_vm: bool = False, file=None) -> None:
    """Print pipeline_passes(opt_level, is_vm), one numbered pass per line.

    Parameters
    ----------
    file : file-like, optional
        Where to print; None (the default) is stdout.
    """
    level = PassContext.current().opt_level if opt_level is None else opt_level
    out = file or sys.stdout
    print(f"# default pipeline at opt_level={level}{' (vm)' if is_vm else ''}", file=out)
    for i, name in enumerate(pipeline_passes(opt_level, is_vm)):
        print(f"{i:3d}  {name}", file=out)


__all__ = ["default_pipeline", "pass_prefix", "pipeline_passes", "print_pipeline"]
