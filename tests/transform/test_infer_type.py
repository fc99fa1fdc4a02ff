"""InferType / InferTypeLocal: inferred types against shapes computed independently with numpy
(np.broadcast_shapes, explicit arithmetic), and the text of the errors users see."""
import numpy as np
import pytest

from relay_backend import op
from relay_backend.errors import TypeInferenceError
from relay_backend.ir import (Any, Call, Clause, Constructor, FuncType, Function, GlobalTypeVar,
                              GlobalVar, If, IRModule, Let, Match, PatternConstructor, PatternTuple,
                              PatternVar, PatternWildcard, RefCreate, RefRead, RefType, RefWrite,
                              TensorType, Tuple, TupleGetItem, TupleType, TypeCall, TypeData, TypeVar,
                              const, var)
from relay_backend.ir.functor import post_order_visit
from relay_backend.transform import InferType, InferTypeLocal


def infer(expr_or_fn, mod=None):
    """Type `expr_or_fn` as @main of a module; returns the typed main function."""
    mod = IRModule.from_expr(expr_or_fn) if mod is None else mod
    return InferType()(mod)["main"]


def all_typed(fn):
    """Every sub-expression except Op singletons carries a checked_type."""
    missing = []
    post_order_visit(fn, lambda e: missing.append(e) if (e._checked_type_ is None and
                                                         not isinstance(e, op.OpDef)) else None)
    return not missing


# ---------------------------------------------------------------------------------------------
# Tensor programs
# ---------------------------------------------------------------------------------------------
def test_elementwise_mlp_types_match_numpy_shapes():
    x = var("x", shape=(8, 16))
    w = var("w", shape=(16,))
    b = var("b", shape=(8, 1))
    h = op.nn.relu(op.add(op.multiply(x, w), b))
    out = op.subtract(op.tanh(h), const(np.float32(1.0)))
    fn = infer(Function([x, w, b], out))
    expected = np.broadcast_shapes((8, 16), (16,), (8, 1))
    assert fn.body.checked_type == TensorType(expected, "float32")
    assert fn.checked_type == FuncType([TensorType((8, 16)), TensorType((16,)), TensorType((8, 1))],
                                       TensorType(expected))
    assert all_typed(fn)


def test_comparison_gives_bool_and_broadcasts():
    x, y = var("x", shape=(3, 1, 5)), var("y", shape=(4, 1))
    fn = infer(Function([x, y], op.less(x, y)))
    assert fn.body.checked_type == TensorType(np.broadcast_shapes((3, 1, 5), (4, 1)), "bool")


@pytest.mark.parametrize("lhs,rhs,expected", [
    ((Any(), 4), (3, 4), (3, 4)),
    ((Any(), 1), (1, 7), (Any(), 7)),
    ((Any(), Any()), (5,), (Any(), 5)),
    ((2, Any()), (2, 1), (2, Any())),
])
def test_broadcast_with_any_dims(lhs, rhs, expected):
    x, y = var("x", shape=lhs), var("y", shape=rhs)
    fn = infer(Function([x, y], op.add(x, y)))
    assert fn.body.checked_type == TensorType(expected, "float32")


def test_dense_conv_model_if_available():
    nn = op.nn
    if not hasattr(nn, "dense") or not hasattr(nn, "conv2d"):
        pytest.skip("nn.dense / nn.conv2d not written yet")
    data = var("data", shape=(2, 3, 10, 10))
    weight = var("weight", shape=(4, 3, 3, 3))
    conv = nn.relu(nn.conv2d(data, weight, padding=(1, 1)))
    flat = op.reshape(conv, (2, 4 * 10 * 10))
    dw = var("dw", shape=(5, 400))
    out = nn.dense(flat, dw)
    fn = infer(Function([data, weight, dw], out))
    # conv with pad 1, kernel 3, stride 1 keeps 10x10: out = (10 + 2*1 - 3) // 1 + 1
    assert conv.checked_type == TensorType((2, 4, (10 + 2 - 3) + 1, (10 + 2 - 3) + 1))
    assert fn.body.checked_type == TensorType((2, 5))


def test_unannotated_var_gets_type_from_let_value():
    x = var("x", shape=(2, 2))
    y = var("y")   # no annotation
    fn = infer(Function([x], Let(y, op.exp(x), op.add(y, x))))
    assert y.checked_type == TensorType((2, 2))
    assert fn.body.checked_type == TensorType((2, 2))


def test_infer_type_local_returns_the_type():
    x = var("x", shape=(3,), dtype="int32")
    call = op.add(x, const(np.int32(2)))
    assert InferTypeLocal(call) == TensorType((3,), "int32")
    assert call.checked_type == TensorType((3,), "int32")


def test_tuples_and_getitem():
    x, y = var("x", shape=(2,)), var("y", shape=(3,), dtype="int32")
    tup = Tuple([x, y])
    fn = infer(Function([x, y], Tuple([TupleGetItem(tup, 1), tup])))
    assert fn.body.checked_type == TupleType([TensorType((3,), "int32"),
                                              TupleType([TensorType((2,)), TensorType((3,), "int32")])])


def test_if_branches_unify_and_any_is_compatible():
    c = var("c", shape=(), dtype="bool")
    a, b = var("a", shape=(Any(), 4)), var("b", shape=(2, 4))
    fn = infer(Function([c, a, b], If(c, a, b)))
    assert fn.body.checked_type == TensorType((Any(), 4))


# ---------------------------------------------------------------------------------------------
# Error messages
# ---------------------------------------------------------------------------------------------
def test_dtype_mismatch_names_call_and_argument_types():
    x, y = var("x", shape=(2,)), var("y", shape=(2,), dtype="int32")
    with pytest.raises(TypeInferenceError) as info:
        infer(Function([x, y], op.add(x, y)))
    msg = str(info.value)
    assert "float32" in msg and "int32" in msg
    assert "add(" in msg                      # the call
    assert "Tensor[(2), float32]" in msg and "Tensor[(2), int32]" in msg


def test_broadcast_conflict_message():
    x, y = var("x", shape=(3, 4)), var("y", shape=(5,))
    with pytest.raises(TypeInferenceError, match="Incompatible broadcast") as info:
        infer(Function([x, y], op.multiply(x, y)))
    assert "multiply(" in str(info.value)


def test_dimension_conflict_at_call_site():
    f_x = var("fx", shape=(4,))
    f = Function([f_x], op.negative(f_x))
    a = var("a", shape=(2,))
    with pytest.raises(TypeInferenceError) as info:
        infer(Function([a], Call(f, [a])))
    msg = str(info.value)
    assert ("unable to unify: `Tensor[(4), float32]` and `Tensor[(2), float32]`; "
            "in particular dimension 0 conflicts: 4 does not match 2") in msg
    assert "argument 0" in msg and "%a" in msg


def test_let_annotation_conflict():
    x = var("x", shape=(2, 3))
    y = var("y", shape=(2, 3), dtype="float64")
    expected = r"in particular dtype float64 does not match float32"
    with pytest.raises(TypeInferenceError, match=expected) as info:
        infer(Function([x], Let(y, x, y)))
    assert "let %y" in str(info.value)


def test_return_annotation_conflict():
    x = var("x", shape=(2,))
    with pytest.raises(TypeInferenceError, match="rank 2 does not match rank 1"):
        infer(Function([x], x, ret_type=TensorType((2, 1))))


@pytest.mark.parametrize("cond_type", [TensorType((), "int32"), TensorType((1,), "bool")])
def test_if_condition_must_be_bool_scalar(cond_type):
    c, x = var("c", cond_type), var("x", shape=(2,))
    with pytest.raises(TypeInferenceError, match=r"bool scalar `Tensor\[\(\), bool\]`") as info:
        infer(Function([c, x], If(c, x, x)))
    assert "%c" in str(info.value)


def test_tuple_index_out_of_range():
    x = var("x", shape=(2,))
    with pytest.raises(TypeInferenceError, match=r"tuple index 2 is out of range.*2 field"):
        infer(Function([x], TupleGetItem(Tuple([x, x]), 2)))


def test_getitem_of_non_tuple():
    x = var("x", shape=(2,))
    with pytest.raises(TypeInferenceError, match="not a tuple"):
        infer(Function([x], TupleGetItem(x, 0)))


def test_unresolved_type_names_the_variable():
    x = var("x")   # never constrained
    with pytest.raises(TypeInferenceError, match=r"cannot infer the type of .*%x.*annotate"):
        infer(Function([x], op.negative(x)))


def test_call_arity_error():
    p = var("p", shape=(1,))
    f = Function([p], p)
    with pytest.raises(TypeInferenceError, match="passes 2 argument"):
        infer(Function([], Call(f, [const(np.float32([1.0])), const(np.float32([2.0]))])))


# ---------------------------------------------------------------------------------------------
# Functions, recursion, polymorphism
# ---------------------------------------------------------------------------------------------
def _factorial_module(annotate_ret=True):
    mod = IRModule()
    fact = GlobalVar("fact")
    n = var("n", shape=(), dtype="int32")
    one = const(1)
    body = If(op.less_equal(n, one), one, op.multiply(n, Call(fact, [op.subtract(n, one)])))
    mod[fact] = Function([n], body, ret_type=TensorType((), "int32") if annotate_ret else None)
    x = var("x", shape=(), dtype="int32")
    mod["main"] = Function([x], Call(fact, [x]))
    return mod, fact


@pytest.mark.parametrize("annotate_ret", [True, False])
def test_recursive_factorial(annotate_ret):
    mod, fact = _factorial_module(annotate_ret)
    mod = InferType()(mod)
    int_scalar = TensorType((), "int32")
    assert mod[fact].checked_type == FuncType([int_scalar], int_scalar)
    assert mod["main"].body.checked_type == int_scalar
    assert fact.checked_type == FuncType([int_scalar], int_scalar)


def test_mutual_recursion_without_annotations():
    # even(n) = if n == 0 then true else odd(n - 1); odd(n) = if n == 0 then false else even(n - 1)
    mod = IRModule()
    even, odd = GlobalVar("even"), GlobalVar("odd")
    zero, one = const(0), const(1)
    n1, n2 = var("n1", shape=(), dtype="int32"), var("n2")   # n2 inferred from even's call
    mod[even] = Function([n1], If(op.equal(n1, zero), const(True), Call(odd, [op.subtract(n1, one)])))
    mod[odd] = Function([n2], If(op.equal(n2, zero), const(False), Call(even, [op.subtract(n2, one)])))
    mod = InferType()(mod)
    expected = FuncType([TensorType((), "int32")], TensorType((), "bool"))
    assert mod[even].checked_type == expected and mod[odd].checked_type == expected
    assert n2.checked_type == TensorType((), "int32")


def test_loop_without_ret_annotation_through_local_closure():
    # let loop = fn (i, acc) { if (i < 10) { loop(i + 1, acc * 2) } else { acc } }; loop(0, x)
    loop = var("loop")
    i, acc = var("i", shape=(), dtype="int32"), var("acc", shape=(3,))
    body = If(op.less(i, const(10)), Call(loop, [op.add(i, const(1)), op.multiply(acc, const(2.0))]), acc)
    x = var("x", shape=(3,))
    prog = Function([x], Let(loop, Function([i, acc], body), Call(loop, [const(0), x])))
    fn = infer(prog)
    assert fn.body.checked_type == TensorType((3,))
    assert loop.checked_type == FuncType([TensorType((), "int32"), TensorType((3,))], TensorType((3,)))


def test_param_type_inferred_from_call_site():
    p = var("p")   # unannotated parameter
    f = Function([p], op.exp(p))
    a = var("a", shape=(2, 5))
    fn = infer(Function([a], Call(f, [a])))
    assert p.checked_type == TensorType((2, 5))
    assert f.checked_type == FuncType([TensorType((2, 5))], TensorType((2, 5)))


def test_polymorphic_identity_at_two_types():
    mod = IRModule()
    ident = GlobalVar("id")
    t = TypeVar("T")
    v = var("v", t)
    mod[ident] = Function([v], v, ret_type=t, type_params=[t])
    a, b = var("a", shape=(2,)), var("b", shape=(), dtype="int32")
    mod["main"] = Function([a, b], Tuple([Call(ident, [a]), Call(ident, [b])]))
    mod = InferType()(mod)
    assert mod["main"].body.checked_type == TupleType([TensorType((2,)), TensorType((), "int32")])
    assert mod[ident].checked_type.type_params == (t,)


def test_polymorphic_function_without_ret_annotation_is_generalized():
    mod = IRModule()
    first = GlobalVar("first")
    a_t, b_t = TypeVar("A"), TypeVar("B")
    p, q = var("p", a_t), var("q", b_t)
    mod[first] = Function([p, q], Tuple([q, p]), type_params=[a_t, b_t])
    x, y = var("x", shape=(1,)), var("y", shape=(2,), dtype="int8")
    mod["main"] = Function([x, y], Tuple([Call(first, [x, y]), Call(first, [y, x])]))
    mod = InferType()(mod)
    f32, i8 = TensorType((1,)), TensorType((2,), "int8")
    assert mod["main"].body.checked_type == TupleType([TupleType([i8, f32]), TupleType([f32, i8])])


def test_rigid_type_var_rejects_ops():
    t = TypeVar("T")
    v = var("v", t)
    with pytest.raises(TypeInferenceError, match="expected a tensor"):
        infer(Function([v], op.negative(v), type_params=[t]))


def test_higher_order_function_param():
    f = var("f")   # used as a function: its type is inferred from the call and the argument
    x = var("x", shape=(4,))
    apply = Function([f, x], Call(f, [x]))
    g_p = var("gp", shape=(4,))
    g = Function([g_p], op.less(g_p, g_p))
    fn = infer(Function([x], Call(apply, [g, x])))
    assert fn.body.checked_type == TensorType((4,), "bool")
    assert f.checked_type == FuncType([TensorType((4,))], TensorType((4,), "bool"))


# ---------------------------------------------------------------------------------------------
# ADTs and references
# ---------------------------------------------------------------------------------------------
def _list_adt(mod):
    lst = GlobalTypeVar("List")
    a = TypeVar("a")
    cons = Constructor("Cons", [a, TypeCall(lst, [a])], lst)
    nil = Constructor("Nil", [], lst)
    mod.add_type_definition(TypeData(lst, [a], [cons, nil]))
    return lst, cons, nil


def test_adt_constructors_and_match_sum():
    mod = IRModule()
    lst, cons, nil = _list_adt(mod)
    scalar = TensorType((), "float32")
    # @sum(%l: List[float32]) -> float32 { match (%l) { Cons(%h, %t) => %h + @sum(%t), Nil => 0f } }
    total = GlobalVar("sum")
    l_var, h, t = var("l", TypeCall(lst, [scalar])), var("h"), var("t")
    body = Match(l_var, [
        Clause(PatternConstructor(cons, [PatternVar(h), PatternVar(t)]), op.add(h, Call(total, [t]))),
        Clause(PatternConstructor(nil), const(0.0)),
    ])
    mod[total] = Function([l_var], body, ret_type=scalar)
    lst_value = cons(const(1.0), cons(const(2.0), nil()))
    mod["main"] = Function([], Call(total, [lst_value]))
    mod = InferType()(mod)
    assert h.checked_type == scalar and t.checked_type == TypeCall(lst, [scalar])
    assert lst_value.checked_type == TypeCall(lst, [scalar])
    assert mod["main"].body.checked_type == scalar
    assert cons.checked_type.type_params  # the constructor's polymorphic type


def test_adt_element_type_mismatch():
    mod = IRModule()
    lst, cons, nil = _list_adt(mod)
    bad = cons(const(1.0), cons(const(2), nil()))   # float32 head, int32 list
    mod["main"] = Function([], bad)
    conflict = "dtype (float32 does not match int32|int32 does not match float32)"
    with pytest.raises(TypeInferenceError, match=conflict):
        InferType()(mod)


def test_match_with_tuple_pattern_and_wildcard():
    mod = IRModule()
    x = var("x", TupleType([TensorType((2,)), TensorType((), "int32")]))
    a, b = var("a"), var("b")
    m = Match(x, [Clause(PatternTuple([PatternVar(a), PatternVar(b)]), op.add(b, const(1))),
                  Clause(PatternWildcard(), const(0))])
    mod["main"] = Function([x], m)
    mod = InferType()(mod)
    assert a.checked_type == TensorType((2,))
    assert m.checked_type == TensorType((), "int32")


def test_constructor_without_type_definition():
    lst = GlobalTypeVar("List")
    stray = Constructor("Nil", [], lst)
    with pytest.raises(TypeInferenceError, match="not defined in the module"):
        infer(Function([], stray()))


def test_refs():
    x = var("x", shape=(3,))
    r = var("r")
    body = Let(r, RefCreate(x), Let(var("_"), RefWrite(r, op.exp(x)), RefRead(r)))
    fn = infer(Function([x], body))
    assert r.checked_type == RefType(TensorType((3,)))
    assert fn.body.checked_type == TensorType((3,))
    write = fn.body.body.value
    assert write.checked_type == TupleType([])


def test_ref_write_type_mismatch():
    x = var("x", shape=(3,))
    with pytest.raises(TypeInferenceError, match="dimension 0 conflicts"):
        infer(Function([x], RefWrite(RefCreate(x), const(np.zeros(4, "float32")))))


# ---------------------------------------------------------------------------------------------
# Deep programs (no recursion limit) and re-running
# ---------------------------------------------------------------------------------------------
def test_ten_thousand_op_chain():
    x = var("x", shape=(2, 3))
    y = x
    for _ in range(10_000):
        y = op.add(y, x)
    fn = infer(Function([x], y))
    assert fn.body.checked_type == TensorType((2, 3))


def test_ten_thousand_deep_let_chain():
    x = var("x", shape=(4,), dtype="int32")
    vs = [var(f"v{i}") for i in range(10_000)]
    body = vs[-1]
    for i in reversed(range(10_000)):
        prev = x if i == 0 else vs[i - 1]
        body = Let(vs[i], op.add(prev, const(1)), body)
    fn = infer(Function([x], body))
    assert fn.body.checked_type == TensorType((4,), "int32")
    assert vs[5000].checked_type == TensorType((4,), "int32")


def test_deeply_nested_functions_and_ifs():
    x = var("x", shape=(), dtype="bool")
    body = const(1.0)
    for _ in range(2_000):
        body = If(x, body, const(0.0))
    fn = infer(Function([x], body))
    assert fn.body.checked_type == TensorType(())


def test_infer_type_is_idempotent_and_returns_new_module():
    x = var("x", shape=(2,))
    mod = IRModule.from_expr(Function([x], op.exp(x)))
    out1 = InferType()(mod)
    out2 = InferType()(out1)
    assert out1 is not mod and out2["main"] is mod["main"]
    assert out2["main"].checked_type == FuncType([TensorType((2,))], TensorType((2,)))


def test_dense_error_names_the_op_once():
    x, w = var("x", shape=(1, 4)), var("w", shape=(3, 8))
    with pytest.raises(TypeInferenceError) as info:
        infer(Function([x, w], op.nn.dense(x, w)))
    assert str(info.value) == (
        "nn.dense: input has 4 features but weight expects 8 (data: Tensor[(1, 4), float32], "
        "weight: Tensor[(3, 8), float32])\n"
        "  in call `nn.dense(%x, %w)`\n"
        "  argument types:\n"
        "    data: Tensor[(1, 4), float32]\n"
        "    weight: Tensor[(3, 8), float32]")


def _deep_tuple_type(n, leaf):
    t = leaf
    for _ in range(n):
        t = TupleType([t, leaf])
    return t


def test_tuples_nested_5000_deep(low_recursion_limit):
    n, f2 = 5_000, TensorType((2,))
    x = var("x", shape=(2,))
    body = x
    for _ in range(n):
        body = Tuple([body, x])
    fn = infer(Function([x], body))
    assert fn.body.checked_type == _deep_tuple_type(n, f2)
    # unification of two deep tuple types: the return annotation, and the branches of an If
    c = var("c", shape=(), dtype="bool")
    fn = infer(Function([x, c], If(c, body, body), ret_type=_deep_tuple_type(n, f2)))
    assert fn.checked_type.ret_type == _deep_tuple_type(n, f2)
    with pytest.raises(TypeInferenceError) as info:
        infer(Function([x], body, ret_type=_deep_tuple_type(n, TensorType((2,), "int32"))))
    msg = str(info.value)   # both types cut short, and the path to the conflict abbreviated
    assert len(msg) < 1000 and "` and `((((" in msg and " ... " in msg
    assert ("in particular field 0: field 0: field 0: ... (4994 more levels) ... field 0: field 0: "
            "field 0: dtype int32 does not match float32") in msg


@pytest.fixture
def low_recursion_limit():
    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(old)
