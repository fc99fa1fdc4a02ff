"""The default pipeline is Relay v0.18's GetPassPrefix + FuseOps with the passes that exist
here (after PlanDevices): the names run at each opt_level, the VM's EtaExpand, disabled_pass, and
build() running exactly that list (observed with a PassTiming instrument); AlterOpLayout at
opt_level 3 with the build's target; the pipeline told its target or its device type."""
import io

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import RelayError
from relay_backend.transform import PassContext, PassTiming, default_pipeline, pipeline_passes, print_pipeline

QNN = ["QnnLegalize", "QnnCanonicalize"]   # qnn ops to basic ops, at every opt_level
LEVEL_2 = ["RemoveUnusedFunctions", "PlanDevices", "ToBasicBlockNormalForm", *QNN, "SimplifyInference", "FoldConstant",
           "FoldConstant",   # FoldScaleAxis's own FoldConstant: its scale passes are opt_level 3
           "SimplifyExpr", "SimplifyExprPostAlterOp", "FoldConstant", "FuseOps"]
LEVEL_3 = ["RemoveUnusedFunctions", "PlanDevices", "ToBasicBlockNormalForm", *QNN, "SimplifyInference",
           "EliminateCommonSubexpr", "FoldConstant", "BackwardFoldScaleAxis", "ForwardFoldScaleAxis",
           "FoldConstant", "PoolBeforePointwiseConv", "SimplifyExpr", "PadConvChannels", "CanonicalizeOps", "AlterOpLayout",
           "SimplifyExprPostAlterOp", "FoldConstant", "FuseOps"]
LEVEL_4 = ["RemoveUnusedFunctions", "PlanDevices", "ToBasicBlockNormalForm", *QNN, "SimplifyInference",
           "EliminateCommonSubexpr", "CombineParallelConv2d", "CombineParallelDense",
           "CombineParallelBatchMatmul", "FoldConstant", "BackwardFoldScaleAxis", "ForwardFoldScaleAxis",
           "FoldConstant", "PoolBeforePointwiseConv", "SimplifyExpr", "PadConvChannels", "CanonicalizeOps", "AlterOpLayout",
           "SimplifyExprPostAlterOp", "FastMath", "FoldConstant", "FuseOps"]


def without_infer(names):
    return [n for n in names if n != "InferType"]


def test_pass_names_at_each_opt_level():
    assert without_infer(pipeline_passes(0)) == ["PlanDevices", *QNN, "SimplifyInference", "SimplifyExpr",
                                                 "SimplifyExprPostAlterOp", "FuseOps"]
    assert without_infer(pipeline_passes(2)) == LEVEL_2
    assert without_infer(pipeline_passes(3)) == LEVEL_3
    assert without_infer(pipeline_passes(4)) == LEVEL_4
    vm = without_infer(pipeline_passes(3, is_vm=True))
    assert vm[:7] == ["RemoveUnusedFunctions", "PlanDevices", "ToBasicBlockNormalForm", *QNN, "SimplifyInference",
                      "EtaExpand"]
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


def _annotated_conv_module():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.const(np.random.default_rng(1).normal(size=(8, 8, 3, 3)).astype("float32"))
    body = relay.nn.conv2d(relay.annotation.on_device(x, relay.cpu()), w, padding=(1, 1))
    return relay.IRModule.from_expr(relay.Function([x], body))


def test_pipeline_is_told_a_target_or_a_device_type():
    """A Target carries its device type (PlanDevices checks the annotations against it) and is
    what AlterOpLayout alters for; a bare device type (keyword, or positional as before) reaches
    only PlanDevices."""
    with PassContext(opt_level=3):
        by_target = default_pipeline(target=relay.target.Target("llvm"))(_annotated_conv_module())
        by_device = default_pipeline(device_type=1)(_annotated_conv_module())
        by_position = default_pipeline(True, False, 1)(_annotated_conv_module())
        assert "nn.contrib_conv2d_NCHWc" in by_target.astext()
        for mod in (by_device, by_position):
            assert "NCHWc" not in mod.astext() and "nn.conv2d" in mod.astext()
        for told in ({"target": relay.target.Target("cuda")}, {"device_type": 2},
                     {"target": "llvm", "device_type": 2}):
            with pytest.raises(RelayError, match="runs on cuda"):
                default_pipeline(**told)(_annotated_conv_module())
