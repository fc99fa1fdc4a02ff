"""Passes preserve meaning: on random programs the debug interpreter gives the same outputs
before and after every pass of the library (simplifications, normal forms, fusion and its
inverse, layout and precision conversions) and build()'s whole pipeline; the result is well
formed and still type-checks. The passes that work on functions (Inline, LambdaLift, EtaExpand,
RemoveUnusedFunctions, normal forms, CPS, ...) also run on programs with global functions,
closures and globals used as values (testing.program_functions), and each pass's stated
guarantee is checked on its output. Passes that should be idempotent give the same program when
run twice."""
import networkx as nx
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from relay_backend import transform
from relay_backend.ir.expr import Call, Function, GlobalVar
from relay_backend.ir.functor import all_children, all_nodes_post_order
from relay_backend.transform.dead_code import reachable_functions
from relay_backend.transform.inline import call_graph
from relay_backend.ir.structural import assert_structural_equal
from relay_backend.transform.to_mixed_precision import to_mixed_precision
from relay_backend.transform import default_pipeline
from relay_backend.ir import check_well_formed
from relay_backend.testing import executors
from relay_backend.testing.program_functions import programs_with_functions
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
    "PoolBeforePointwiseConv": lambda: [transform.PoolBeforePointwiseConv()],
    "PadConvChannels": lambda: [transform.PadConvChannels("llvm")],
    "FoldScaleAxis": lambda: [transform.SimplifyInference(), transform.FoldConstant(),
                              transform.FoldScaleAxis()],
    "ForwardFoldScaleAxis": lambda: [transform.SimplifyInference(), transform.FoldConstant(),
                                     transform.ForwardFoldScaleAxis()],
    "BackwardFoldScaleAxis": lambda: [transform.SimplifyInference(), transform.FoldConstant(),
                                      transform.BackwardFoldScaleAxis()],
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

# Passes for which pass(pass(m)) == pass(m) structurally (every function of the module).
IDEMPOTENT = {
    "ToANormalForm": lambda: transform.ToANormalForm(),
    "ToBasicBlockNormalForm": lambda: transform.ToBasicBlockNormalForm(),
    "ToGraphNormalForm": lambda: transform.ToGraphNormalForm(),
    "SimplifyExpr": lambda: transform.SimplifyExpr(),
    "EliminateCommonSubexpr": lambda: transform.EliminateCommonSubexpr(),
    "CanonicalizeOps": lambda: transform.CanonicalizeOps(),
    "SimplifyInference": lambda: transform.SimplifyInference(),
    "FoldConstant": lambda: transform.FoldConstant(),
    "DeadCodeElimination": lambda: transform.DeadCodeElimination(),
    "FuseOps": lambda: transform.FuseOps(),
    "DefuseOps": lambda: transform.DefuseOps(),
    "FastMath": lambda: transform.FastMath(),
    "FoldScaleAxis": lambda: transform.FoldScaleAxis(),
    "PoolBeforePointwiseConv": lambda: transform.PoolBeforePointwiseConv(),
    "PadConvChannels": lambda: transform.PadConvChannels("llvm"),
    "ConvertLayout(NHWC)": lambda: transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]}),
    "Inline": lambda: transform.Inline(),
    "LambdaLift": lambda: transform.LambdaLift(),
    "EtaExpand": lambda: transform.EtaExpand(expand_global_var=True),
    "RemoveUnusedFunctions": lambda: transform.RemoveUnusedFunctions(),
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
    @given(program=st.one_of(programs(max_calls=25), programs_with_functions(max_calls=15)))
    def check(program):
        note(program.describe())
        once = apply([IDEMPOTENT[name]()], program.mod, opt_level=4)
        twice = apply([IDEMPOTENT[name]()], once, opt_level=4)
        note(f"once:\n{once.astext()}")
        assert sorted(gv.name_hint for gv in twice.functions) == sorted(gv.name_hint for gv in once.functions)
        for gv in once.functions:
            assert_structural_equal(twice[gv.name_hint], once[gv])
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


# --- programs with functions ------------------------------------------------------------------
def _global_value_uses(mod) -> list:
    """GlobalVars used other than as a callee, anywhere in the module."""
    out = []
    for fn in mod.functions.values():
        for node in all_nodes_post_order(fn):
            for i, child in enumerate(all_children(node)):
                if isinstance(child, GlobalVar) and not (isinstance(node, Call) and i == 0):
                    out.append(child.name_hint)
    return out


def _inlined(before, after) -> None:
    """Inline: no call is left of an Inline=1 function whose callees can all be inlined too (as
    Relay; the generated functions never recurse), and such functions are gone from the module
    unless something still names them."""
    graph = call_graph(before)
    inlinable = set()
    for gv in reversed(list(nx.topological_sort(graph))):      # callees first
        if int(before[gv].attrs.get("Inline", 0)) == 1 and all(c in inlinable for c in graph.successors(gv)):
            inlinable.add(gv.name_hint)
    for fn in after.functions.values():
        for node in all_nodes_post_order(fn):
            assert not (isinstance(node, Call) and isinstance(node.op, GlobalVar) and node.op.name_hint in inlinable), \
                f"a call of inline function @{node.op.name_hint} is left"
    assert not inlinable & {gv.name_hint for gv in after.functions} - {"unused"}


def _lifted(before, after) -> None:
    """LambdaLift: no function literal is left inside a global function, except the body of a
    lifted closure (a global with Closure=1 whose body is the closure's function)."""
    for gv, fn in after.functions.items():
        allowed = fn.body if int(fn.attrs.get("Closure", 0)) == 1 else None
        for node in all_nodes_post_order(fn.body):
            assert not (isinstance(node, Function) and not node.is_primitive and node is not allowed), \
                f"@{gv.name_hint} still holds a function literal"


def _eta_expanded(before, after) -> None:
    """EtaExpand(expand_global_var=True): every global is only ever called."""
    assert not _global_value_uses(after), _global_value_uses(after)


def _unused_removed(before, after) -> None:
    """RemoveUnusedFunctions: what is left is exactly what main reaches."""
    names = {gv.name_hint for gv in after.functions}
    assert "unused" not in names
    reached = {gv.name_hint for gv in reachable_functions(before, ["main"])}
    assert names == reached


FUNCTION_PASSES = {
    "Inline": (lambda: [transform.Inline()], _inlined),
    "LambdaLift": (lambda: [transform.LambdaLift()], _lifted),
    "EtaExpand": (lambda: [transform.EtaExpand(expand_global_var=True)], _eta_expanded),
    "RemoveUnusedFunctions": (lambda: [transform.RemoveUnusedFunctions()], _unused_removed),
}
# passes of the library that must also keep their meaning across functions and closures
FUNCTION_PASSES.update({name: (PASSES[name], None) for name in (
    "ToANormalForm", "ToBasicBlockNormalForm", "ToGraphNormalForm(ANF)", "ToCPS-UnCPS",
    "DeadCodeElimination", "FoldConstant", "DefuseOps(FuseOps)", "build_pipeline",
    "EliminateCommonSubexpr", "SimplifyExpr", "ToMixedPrecision(float64)")})


@pytest.mark.parametrize("name", sorted(FUNCTION_PASSES))
def test_pass_preserves_meaning_across_functions(name):
    make_passes, guarantee = FUNCTION_PASSES[name]

    @profile(ci_examples=12, soak_examples=500)
    @given(program=programs_with_functions(max_calls=12))
    def check(program):
        note(program.describe())
        note("; ".join(program.notes))
        expected = executors.run("debug", program.mod, program.inputs)
        after = apply(make_passes(), program.mod, opt_level=4)
        note(f"after {name}:\n{after.astext()}")
        for fn in after.functions.values():
            check_well_formed(fn)
        if guarantee is not None:
            guarantee(program.mod, after)
        actual = executors.run("debug", after, program.inputs)
        assert len(actual) == len(expected)
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_allclose(a, e, what=f"output {i} after {name}")
    check()
