"""Passes preserve meaning: on random programs the debug interpreter gives the same outputs
before and after every pass of the library (simplifications, normal forms, fusion and its
inverse, layout and precision conversions) and build()'s whole pipeline; the result is well
formed and still type-checks. Passes that should be idempotent give the same program when run
twice."""
import pytest
from hypothesis import given, note

from relay_backend import transform
from relay_backend.ir.structural import assert_structural_equal
from relay_backend.transform.to_mixed_precision import to_mixed_precision
from relay_backend.transform import default_pipeline
from relay_backend.ir import check_well_formed
from relay_backend.testing import executors
from relay_backend.testing.program_gen import programs
from relay_backend.testing.tolerances import assert_allclose

from .profiles import profile

PASSES = {
    "SimplifyInference": lambda: [transform.SimplifyInference()],
    "FoldConstant": lambda: [transform.FoldConstant()],
    "DeadCodeElimination": lambda: [transform.DeadCodeElimination()],
    "DeadCodeElimination-inline_once": lambda: [transform.DeadCodeElimination(inline_once=True)],
    "FuseOps-0": lambda: [transform.FuseOps(fuse_opt_level=0)],
    "FuseOps-2": lambda: [transform.FuseOps(fuse_opt_level=2)],
    "FuseOps-3": lambda: [transform.FuseOps(fuse_opt_level=3)],
    "build_pipeline": lambda: [default_pipeline()],
    "ToANormalForm": lambda: [transform.ToANormalForm()],
    "ToBasicBlockNormalForm": lambda: [transform.ToBasicBlockNormalForm()],
    "ToGraphNormalForm(ANF)": lambda: [transform.ToANormalForm(), transform.ToGraphNormalForm()],
    "ToCPS-UnCPS": lambda: [transform.ToCPS(), transform.InferType(), transform.UnCPS()],
    "DefuseOps(FuseOps)": lambda: [transform.FuseOps(), transform.InferType(), transform.DefuseOps()],
    "SimplifyExpr": lambda: [transform.SimplifyExpr()],
    "EliminateCommonSubexpr": lambda: [transform.EliminateCommonSubexpr()],
    "CanonicalizeOps": lambda: [transform.CanonicalizeOps()],
    "FastMath": lambda: [transform.FastMath()],
    "FoldScaleAxis": lambda: [transform.SimplifyInference(), transform.FoldConstant(),
                              transform.FoldScaleAxis()],
    "ConvertLayout(NHWC)": lambda: [transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]})],
    # float64 as the "mixed" type checks the casts and categories without float16 rounding;
    # the output keeps its dtype so the results compare directly
    "ToMixedPrecision(float64)": lambda: [transform.function_pass(
        lambda f, m, c: to_mixed_precision(f, "float64", 2, keep_orig_output_dtype=True, mod=m),
        opt_level=0, name="ToMixedPrecision")],
    "CombineParallel(2)": lambda: [transform.CombineParallelConv2D(2), transform.InferType(),
                                   transform.CombineParallelDense(2), transform.InferType(),
                                   transform.CombineParallelDense(2, to_batch=False),
                                   transform.InferType(), transform.CombineParallelBatchMatmul(2)],
}

# Passes for which pass(pass(m)) == pass(m) structurally.
IDEMPOTENT = {
    "ToANormalForm": lambda: transform.ToANormalForm(),
    "ToBasicBlockNormalForm": lambda: transform.ToBasicBlockNormalForm(),
    "ToGraphNormalForm": lambda: transform.ToGraphNormalForm(),
    "SimplifyExpr": lambda: transform.SimplifyExpr(),
    "EliminateCommonSubexpr": lambda: transform.EliminateCommonSubexpr(),
    "CanonicalizeOps": lambda: transform.CanonicalizeOps(),
}


def apply(passes, mod, opt_level):
    """`passes` then InferType on `mod` under a PassContext at `opt_level`."""
    with transform.PassContext(opt_level=opt_level):
        return transform.Sequential(list(passes) + [transform.InferType()])(mod)


@pytest.mark.parametrize("name", sorted(PASSES))
def test_pass_preserves_interpreter_result(name):
    @profile(ci_examples=25, soak_examples=1000)
    @given(program=programs(max_calls=30))
    def check(program):
        note(program.describe())
        expected = executors.run("debug", program.mod, program.inputs)
        after = apply(PASSES[name](), program.mod, opt_level=4)
        note(f"after {name}:\n{after.astext()}")
        check_well_formed(after["main"])
        actual = executors.run("debug", after, program.inputs)
        assert len(actual) == len(expected)
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_allclose(a, e, what=f"output {i} after {name}")
    check()


@pytest.mark.parametrize("name", sorted(IDEMPOTENT))
def test_pass_is_idempotent(name):
    @profile(ci_examples=15, soak_examples=500)
    @given(program=programs(max_calls=25))
    def check(program):
        note(program.describe())
        once = apply([IDEMPOTENT[name]()], program.mod, opt_level=3)
        twice = apply([IDEMPOTENT[name]()], once, opt_level=3)
        note(f"once:\n{once.astext()}")
        assert_structural_equal(twice["main"], once["main"])
    check()


def test_gradient_modes_agree_on_random_programs():
    """First- and higher-order AD are independent implementations over the same per-op
    gradients: on random dataflow programs both return the forward value and equal gradients."""
    @profile(ci_examples=20, soak_examples=500)
    @given(program=programs(max_calls=15, control_flow=False))
    def check(program):
        note(program.describe())
        func = program.mod["main"]
        first = transform.first_order_gradient.first_order_gradient(func)
        higher = transform.higher_order_gradient.higher_order_gradient(func)
        forward = executors.run("debug", program.mod, program.inputs)
        results = []
        for back in (first, higher):
            mod = transform.InferType()(type(program.mod).from_expr(back))
            results.append(executors.run("debug", mod, program.inputs))
        n_out = len(forward)
        for i, (a, e) in enumerate(zip(results[0][:n_out], forward)):
            assert_allclose(a, e, what=f"first-order value {i}")
        for i, (a, e) in enumerate(zip(results[0][n_out:], results[1][n_out:])):
            assert_allclose(a, e, what=f"gradient {i}: first vs higher order", scale=4.0)
    check()
