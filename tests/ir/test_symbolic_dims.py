"""Tensor dims as TVM's Relay has them: IntImm-like constants, size variables, arithmetic on
them (simplified), Any; their printed form; structural equality/hash treating size variables in
a function's parameter types as bound names; call sugar and same_as on every node."""
import copy

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te, tir
from relay_backend.errors import IRConstructionError
from relay_backend.ir.dims import IntDim, dim_to_str, is_static, is_symbolic
from relay_backend.ir.structural import structural_equal, structural_hash


def test_constant_dims_behave_like_intimm():
    t = relay.TensorType((2, np.int64(3)), "float32")
    d = t.shape[1]
    assert isinstance(d, IntDim) and isinstance(d, int)
    assert d.value == 3 and type(d.value) is int and d.dtype == "int32"
    assert int(d) == 3 and d == 3 and hash(d) == hash(3) and list(range(d)) == [0, 1, 2]
    assert repr(d) == "3" and str(t) == "Tensor[(2, 3), float32]"
    assert t.shape == (2, 3) and np.prod(t.shape) == 6
    assert relay.TensorType((tir.IntImm("int64", 4),)).shape[0] == 4
    assert IntDim(2 ** 40).dtype == "int64"
    assert copy.deepcopy(t) == t


def test_size_variables_and_arithmetic_are_kept_simplified():
    n, m = te.size_var("n"), te.var("m")
    t = relay.TensorType((n, m, n * 2 // 2, n + 0, (n + 4 - 2) // 2, n - n + 5, relay.Any(), None))
    assert t.shape[0] is n and t.shape[1] is m and t.shape[2] is n and t.shape[3] is n
    assert is_symbolic(t.shape[4]) and is_static(t.shape[5]) and t.shape[5] == 5
    assert str(t) == "Tensor[(n, m, n, n, n // 2 + 1, 5, ?, ?), float32]"
    assert t.is_dynamic and not relay.TensorType((1, 2)).is_dynamic
    assert relay.TensorType((tir.Var("k", "int64"),)).shape[0].dtype == "int64"


@pytest.mark.parametrize("build, text", [
    (lambda n, m: n * 2 + 1, "n * 2 + 1"),
    (lambda n, m: (n + 2) // 3, "(n + 2) // 3"),
    (lambda n, m: n - (m - 1), "n - m + 1"),
    (lambda n, m: tir.FloorMod(n, m + 1), "n % (m + 1)"),
    (lambda n, m: tir.min(n, m) * tir.max(n, 3), "min(n, m) * max(n, 3)"),
    (lambda n, m: (n * m) // (m * 2), "n * m // (m * 2)"),
    (lambda n, m: tir.Sub(n, tir.Sub(m, n)), "n * 2 - m"),
])
def test_dim_text(build, text):
    n, m = te.size_var("n"), te.size_var("m")
    assert dim_to_str(relay.TensorType((build(n, m),)).shape[0]) == text


def test_printer_shows_symbolic_dims():
    n = te.size_var("n")
    x = relay.var("x", shape=(n, 3))
    y = relay.var("y", shape=(relay.Any(), 3))
    text = relay.Function([x, y], relay.add(x, y)).astext()
    assert "%x: Tensor[(n, 3), float32]" in text and "%y: Tensor[(?, 3), float32]" in text


@pytest.mark.parametrize("dim, match", [
    (tir.const(2.5, "float32"), r"integer arithmetic .* got `2.5` \(FloatImm, float32\)"),
    (te.var("f", "float32"), r"integer arithmetic .* got `f` \(Var, float32\)"),
    (tir.IntImm("int32", -2), r"must be >= 0, got -2"),
    ((lambda n: n - n - 1)(te.size_var("n")), r"must be >= 0, got -1"),
    (tir.Select(tir.const(True, "bool"), te.var("a"), te.var("b")), r"got `select"),
    (True, r"got bool True"),
    (np.float32(2.0), r"got float32 (np.float32\()?2.0"),
])
def test_bad_dims_are_construction_errors(dim, match):
    with pytest.raises(IRConstructionError, match=match):
        relay.TensorType((dim, 3))


def test_tensor_type_equality_is_structural_with_vars_by_identity():
    n, other_n = te.size_var("n"), te.size_var("n")
    assert relay.TensorType((n * 2, 3)) == relay.TensorType((n * 2, 3))
    assert hash(relay.TensorType((n * 2, 3))) == hash(relay.TensorType((n * 2, 3)))
    assert relay.TensorType((n, 3)) != relay.TensorType((other_n, 3))
    assert relay.TensorType((n, 3)) != relay.TensorType((relay.Any(), 3))
    assert relay.TensorType((3,)) == relay.TensorType((3,)) != relay.TensorType((n,))


def _two_inputs(a, b, ret=None):
    x, y = relay.var("x", shape=(a, 3)), relay.var("y", shape=(b, 3))
    return relay.Function([x, y], relay.add(x, y), ret)


def test_size_vars_in_parameter_types_are_bound_names():
    n, m, k = te.size_var("n"), te.size_var("m"), te.size_var("k")
    same = _two_inputs(n, n)
    renamed = _two_inputs(m, m)
    assert structural_equal(same, renamed) and structural_hash(same) == structural_hash(renamed)
    different = _two_inputs(n, m)
    assert not structural_equal(same, different)
    assert structural_hash(same) != structural_hash(different)
    assert structural_equal(different, _two_inputs(k, n))         # n->k, m->n: a bijection
    assert structural_hash(different) == structural_hash(_two_inputs(k, n))
    assert not structural_equal(different, _two_inputs(n, n))
    # the return annotation uses the names the parameters bound
    assert structural_equal(_two_inputs(n, n, relay.TensorType((n, 3))),
                            _two_inputs(m, m, relay.TensorType((m, 3))))
    assert not structural_equal(_two_inputs(n, n, relay.TensorType((n, 3))),
                                _two_inputs(m, m, relay.TensorType((k, 3))))


def test_free_size_vars_compare_by_identity_unless_mapped():
    n, m = te.size_var("n"), te.size_var("m")
    assert not structural_equal(relay.TensorType((n,)), relay.TensorType((m,)))
    assert structural_equal(relay.TensorType((n,)), relay.TensorType((m,)), map_free_vars=True)
    assert structural_equal(relay.TensorType((n + 1,)), relay.TensorType((n + 1,)))
    assert not structural_equal(relay.TensorType((n + 1,)), relay.TensorType((n * 2,)), map_free_vars=True)
    # a let binder's annotation binds its size vars too
    x1, x2 = relay.var("x", shape=(n,)), relay.var("x", shape=(m,))
    v = relay.var("v", shape=(2,))
    assert structural_equal(relay.Function([v], relay.Let(x1, relay.zeros((3,)), x1)),
                            relay.Function([v], relay.Let(x2, relay.zeros((3,)), x2)))


def test_structural_hash_of_symbolic_function_is_stable_and_distinguishes_dtypes():
    import subprocess
    import sys
    n64 = tir.SizeVar("n", "int64")
    n32 = te.size_var("n")
    f32 = _two_inputs(n32, n32)
    f64 = _two_inputs(n64, n64)
    assert structural_hash(f32) != structural_hash(f64) and not structural_equal(f32, f64)
    code = ("import relay_backend as relay\nfrom relay_backend import te\n"
            "n=te.size_var('n'); x=relay.var('x',shape=(n,3)); y=relay.var('y',shape=(n*2,3))\n"
            "print(relay.structural_hash(relay.Function([x,y],relay.concatenate([x,x],0)+y)))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout for seed in ("1", "2")}
    assert len(outs) == 1 and outs.pop().strip().isdigit()


def test_call_sugar_and_same_as():
    x = relay.var("x", shape=(3,))
    f = relay.Function([x], x)
    call = f(relay.const(np.zeros(3, "float32")))
    assert isinstance(call, relay.Call) and call.op is f and len(call.args) == 1
    g = relay.var("g")
    assert isinstance(g(x, x), relay.Call) and g(x).op is g
    gv = relay.GlobalVar("main")
    assert gv(x).op is gv
    lst = relay.GlobalTypeVar("List")
    tc = lst(relay.TensorType((), "int32"))
    assert isinstance(tc, relay.TypeCall) and tc.func is lst and tc.args == (relay.TensorType((), "int32"),)
    tv = relay.TypeVar("T")
    assert tv(relay.TensorType(()),).func is tv
    ctor = relay.Constructor("Nil", [], lst)
    td = relay.TypeData(lst, [], [ctor])
    clause = relay.Clause(relay.PatternWildcard(), x)
    mod = relay.IRModule.from_expr(f)
    attrs = relay.nn.dense(x, x).attrs
    for node in (x, f, call, gv, tc, tv, td, clause, clause.lhs, mod, attrs, f.attrs,
                 relay.TensorType((3,)), relay.Any()):
        assert node.same_as(node)
    assert not x.same_as(relay.var("x", shape=(3,)))
    assert not relay.TensorType((3,)).same_as(relay.TensorType((3,)))
    n = te.size_var("n")
    assert n.same_as(n) and not n.same_as(te.size_var("n"))
    d = relay.TensorType((3,)).shape[0]
    assert d.same_as(d)
