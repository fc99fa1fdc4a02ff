"""The default pipeline is Relay v0.18's GetPassPrefix + FuseOps with the passes that exist
here (after PlanDevices): the names run at each opt_level, the VM's EtaExpand, disabled_pass, and build() running
exactly that list (observed with a PassTiming instrument)."""
import io

import numpy as np

import relay_backend as relay
from relay_backend.transform import PassContext, PassTiming, pipeline_passes, print_pipeline

LEVEL_2 = ["RemoveUnusedFunctions", "PlanDevices", "ToBasicBlockNormalForm", "SimplifyInference", "FoldConstant",
           "FoldConstant",   # FoldScaleAxis's own FoldConstant: its scale passes are opt_level 3
           "SimplifyExpr", "SimplifyExprPostAlterOp", "FoldConstant", "FuseOps"]
LEVEL_3 = ["RemoveUnusedFunctions", "PlanDevices", "ToBasicBlockNormalForm", "SimplifyInference",
           "EliminateCommonSubexpr", "FoldConstant", "BackwardFoldScaleAxis", "ForwardFoldScaleAxis",
           "FoldConstant", "SimplifyExpr", "CanonicalizeOps", "SimplifyExprPostAlterOp", "FoldConstant",
           "FuseOps"]
LEVEL_4 = ["RemoveUnusedFunctions", "PlanDevices", "ToBasicBlockNormalForm", "SimplifyInference",
           "EliminateCommonSubexpr", "CombineParallelConv2d", "CombineParallelDense",
           "CombineParallelBatchMatmul", "FoldConstant", "BackwardFoldScaleAxis", "ForwardFoldScaleAxis",
           "FoldConstant", "SimplifyExpr", "CanonicalizeOps", "SimplifyExprPostAlterOp", "FastMath",
           "FoldConstant", "FuseOps"]


def without_infer(names):
    return [n for n in names if n != "InferType"]


def test_pass_names_at_each_opt_level():
    assert without_infer(pipeline_passes(0)) == ["PlanDevices", "SimplifyInference", "SimplifyExpr",
                                                 "SimplifyExprPostAlterOp", "FuseOps"]
    assert without_infer(pipeline_passes(2)) == LEVEL_2
    assert without_infer(pipeline_passes(3)) == LEVEL_3
    assert without_infer(pipeline_passes(4)) == LEVEL_4
    vm = without_infer(pipeline_passes(3, is_vm=True))
    assert vm[:5] == ["RemoveUnusedFunctions", "PlanDevices", "ToBasicBlockNormalForm", "SimplifyInference", "EtaExpand"]
    assert pipeline_passes(3)[0] == "InferType" and pipeline_passes(3)[-1] == "InferType"


def test_disabled_and_required_pass_change_the_list():
    with PassContext(opt_level=3, disabled_pass=["FoldScaleAxis", "EliminateCommonSubexpr"]):
        names = without_infer(pipeline_passes())
    assert "BackwardFoldScaleAxis" not in names and "EliminateCommonSubexpr" not in names
    with PassContext(opt_level=2, required_pass=["FastMath"]):
        assert "FastMath" in pipeline_passes()


def test_print_pipeline():
    out = io.StringIO()
    print_pipeline(4, file=out)
    text = out.getvalue()
    assert text.startswith("# default pipeline at opt_level=4")
    assert "CombineParallelConv2d" in text and "FastMath" in text


def test_build_runs_the_listed_passes():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.const(np.random.default_rng(0).normal(size=(4, 3, 3, 3)).astype("float32"))
    func = relay.Function([x], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))))
    timing = PassTiming()
    with PassContext(opt_level=3, instruments=[timing]):
        relay.build(relay.IRModule.from_expr(func), target="llvm")
    ran = [name for depth, name, _ in timing.records if depth == 1]
    names = [n for n in without_infer(pipeline_passes(3))]
    top_level = [n for n in names if n not in ("BackwardFoldScaleAxis", "ForwardFoldScaleAxis")]
    ran_top = [n for n in ran if n != "InferType"]
    for expected in top_level:
        assert expected in ran_top, (expected, ran_top)
    assert "FoldScaleAxis" in ran_top
