"""Level 4: passes over IRModules (tvm.relay.transform) and the pass infrastructure.

One pass per file; each import line below exposes one file's public names.
"""
from .pass_infra import (FunctionPass, ModulePass, Pass, PassContext, PassInfo, PassInstrument,
                         PassTiming, PrintIRAfter, PrintIRBefore, Sequential, function_pass,
                         module_pass)
from .instrument import pass_instrument
from .print_ir import PrintIR
from .infer_type import InferType, InferTypeLocal
from .simplify_inference import SimplifyInference
from .fold_constant import FoldConstant, FoldConstantExpr
from .dead_code import DeadCodeElimination, RemoveUnusedFunctions
from .bind_params import BindParams, bind_params_by_name, bind_params_to_main
from .fuse_ops import FuseOps
from .dynamic_to_static import DynamicToStatic
from .plan_devices import PlanDevices
from .lambda_lift import LambdaLift
from .to_a_normal_form import ToANormalForm, ToANormalFormExpr
from .to_basic_block_normal_form import ToBasicBlockNormalForm
from .to_graph_normal_form import ToGraphNormalForm
from .to_cps import ToCPS, UnCPS, to_cps, un_cps
from .inline import Inline
from .defuse_ops import DefuseOps
from .eta_expand import EtaExpand
from .substitute import bind, dedup
from .simplify_expr import SimplifyExpr, SimplifyExprPostAlterOp
from .eliminate_common_subexpr import EliminateCommonSubexpr
from .canonicalize_ops import CanonicalizeOps
from .legalize import Legalize
from .fast_math import FastMath
from .combine_parallel_conv2d import CombineParallelConv2D
from .combine_parallel_dense import CombineParallelDense
from .combine_parallel_batch_matmul import CombineParallelBatchMatmul
from .fold_scale_axis import BackwardFoldScaleAxis, FoldScaleAxis, ForwardFoldScaleAxis
from .pad_channels import PadConvChannels
from .pool_before_pointwise_conv import PoolBeforePointwiseConv
from .first_order_gradient import FirstOrderGradient
from .gradient import gradient
from .convert_layout import ConvertLayout
from .alter_op_layout import AlterOpLayout
from .to_mixed_precision import ToMixedPrecision
from .pipeline import default_pipeline, pipeline_passes, print_pipeline
from .annotate_spans import AnnotateSpans
