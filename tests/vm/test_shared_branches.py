"""The VM compiles a program as a DAG: a node used from several branches or clauses is computed
once, before the If / Match (in the innermost scope holding all its uses, as after Relay's
ToANormalForm), so bytecode grows linearly with nesting depth. Results are checked against
numpy and the debug interpreter; graph and AOT reject If quickly with a clear error."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.ir import (Clause, Constructor, Function, GlobalTypeVar, IRModule, Match,
                              PatternConstructor, PatternWildcard, TypeData)
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.te_compiler.lower_main import GraphCodegenError
from relay_backend.testing.shared_dag import shared_dag_program
from relay_backend.vm import VMCompiler, dialect
from relay_backend.vm.bytecode import Opcode

from .conftest import assert_same, run_both

pytestmark = pytest.mark.compile


def nested_ifs(depth: int) -> IRModule:
    """e = x; e = If(c, e + 1, e) `depth` times: main(x, c) = x + depth if c else x."""
    x = relay.var("x", shape=(2,))
    c = relay.var("c", shape=(), dtype="bool")
    e = x
    for _ in range(depth):
        e = relay.If(c, relay.add(e, relay.const(1.0)), e)
    return IRModule.from_expr(Function([x, c], e))


def bytecode(mod: IRModule) -> list:
    """main's instructions (bytecode only: no kernel is built)."""
    compiler = VMCompiler()
    compiler.lower(mod, "llvm")
    return next(f for f in compiler._exec.functions if f.name == "main").instructions


def test_if_chain_bytecode_grows_linearly_with_depth():
    short, long = bytecode(nested_ifs(10)), bytecode(nested_ifs(20))
    assert sum(ins[0] == Opcode.If for ins in long) == 20
    assert sum(ins[0] == Opcode.InvokePacked for ins in long) == 20
    assert len(long) < 2.5 * len(short), (len(short), len(long))


@pytest.mark.parametrize("flag", [True, False])
def test_if_chain_18_deep_matches_numpy(flag):
    data = np.arange(2, dtype="float32")
    expected = data + 18 if flag else data
    mod = nested_ifs(18)
    for kind in ("debug", "vm"):
        out = relay.create_executor(kind, mod=mod).evaluate()(data, np.array(flag))
        np.testing.assert_allclose(out.numpy(), expected, rtol=0, atol=0, err_msg=kind)


@pytest.mark.parametrize("kind", ["graph", "aot"])
def test_graph_and_aot_reject_the_if_chain(kind):
    # static-dataflow executors reject If; the error (with its program excerpt) comes quickly
    with pytest.raises(GraphCodegenError, match=r"control flow \(If\)"):
        relay.create_executor(kind, mod=nested_ifs(18)).evaluate()


def test_node_shared_by_two_ifs_and_a_nested_branch(rng):
    # Ifs are boundaries FuseOps keeps shared (it copies fusable producers into each branch)
    x = relay.var("x", shape=(4,))
    c, d = relay.var("c", shape=(), dtype="bool"), relay.var("d", shape=(), dtype="bool")
    shared = relay.If(d, relay.exp(x), relay.negative(x))            # used by both outer Ifs
    inner_only = relay.If(c, relay.multiply(x, relay.const(3.0)), x)  # shared inside one branch
    first = relay.If(c, relay.add(shared, x), relay.If(d, inner_only, relay.add(inner_only, x)))
    second = relay.If(d, shared, relay.negative(x))
    mod = IRModule.from_expr(Function([x, c, d], relay.Tuple([first, second])))
    data = rng.standard_normal(4).astype("float32")
    for flags in [(True, True), (True, False), (False, True), (False, False)]:
        out, ref = run_both(mod, data, *map(np.array, flags))
        assert_same(out, ref)
    assert sum(ins[0] == Opcode.If for ins in bytecode(mod)) == 5   # each If compiled once


def test_match_clauses_share_a_node(rng):
    mod = IRModule()
    gtv = GlobalTypeVar("Choice")
    left, right = Constructor("Left", [], gtv), Constructor("Right", [], gtv)
    mod.add_type_definition(TypeData(gtv, [], [left, right]))
    x = relay.var("x", shape=(3,))
    flag = relay.var("flag", shape=(), dtype="bool")
    choice = relay.If(flag, left(), right())
    e = x
    for _ in range(11):
        e = Match(choice, [Clause(PatternConstructor(left), relay.negative(e)),
                           Clause(PatternWildcard(), e)])
    mod["main"] = Function([x, flag], e)
    data = rng.standard_normal(3).astype("float32")
    for value in (True, False):
        out = relay.create_executor("vm", mod=mod).evaluate()(data, np.array(value))
        np.testing.assert_allclose(out.numpy(), -data if value else data, rtol=0, atol=0)
    assert sum(ins[0] == Opcode.InvokePacked for ins in bytecode(mod)) == 11


@pytest.mark.parametrize("seed", range(8))
def test_random_shared_programs_agree_with_the_interpreter(seed, rng):
    mod = IRModule.from_expr(shared_dag_program(seed, size=30))
    data = rng.standard_normal(2).astype("float32")
    vm = relay.create_executor("vm", mod=mod).evaluate()
    debug = relay.create_executor("debug", mod=mod).evaluate()
    for flags in [(True, True), (False, True), (True, False), (False, False)]:
        args = (data, *map(np.array, flags))
        assert_same(vm(*args), debug(*args))
    compiler = VMCompiler()
    compiler.lower(mod, "llvm")
    # after ManifestAlloc every kernel (or shape function) call is one of these dialect calls
    packed_ops = (dialect.INVOKE_TVM_OP, dialect.SHAPE_FUNC, dialect.CHECK_SHAPES)
    kernel_calls = [n for n in all_nodes_post_order(compiler.optimized_mod["main"])
                    if isinstance(n, relay.Call) and n.op in packed_ops]
    assert kernel_calls
    main = next(f for f in compiler._exec.functions if f.name == "main")
    assert sum(ins[0] == Opcode.InvokePacked for ins in main.instructions) == len(kernel_calls)
