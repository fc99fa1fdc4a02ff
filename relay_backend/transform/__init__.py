"""Level 4: passes over IRModules (tvm.relay.transform) and the pass infrastructure.

One pass per file; each import line below exposes one file's public names.
"""
from .pass_infra import (FunctionPass, ModulePass, Pass, PassContext, PassInfo, PassInstrument,
                         PassTiming, PrintIRAfter, PrintIRBefore, Sequential, function_pass,
                         module_pass)
from .infer_type import InferType, InferTypeLocal
from .simplify_inference import SimplifyInference
from .fold_constant import FoldConstant, FoldConstantExpr
from .dead_code import DeadCodeElimination, RemoveUnusedFunctions
from .bind_params import BindParams, bind_params_by_name, bind_params_to_main
from .fuse_ops import FuseOps
from .dynamic_to_static import DynamicToStatic
from .pipeline import default_pipeline
