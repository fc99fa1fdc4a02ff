"""structural_equal / structural_hash / assert_structural_equal: alpha-equivalence, what differs,
free-var mapping, attrs, constants, types, ADTs and modules."""
import dataclasses

import numpy as np
import pytest

from relay_backend import ir
from relay_backend.ir import (Call, Clause, Constructor, Function, FuncType, GlobalTypeVar, If,
                              IRModule, Let, Match, Op, PatternConstructor, PatternVar,
                              PatternWildcard, TensorType, Tuple, TupleGetItem, TypeCall,
                              TypeData, TypeVar, Var, assert_structural_equal, const,
                              structural_equal, structural_hash, var)

ADD, MUL, SUB = Op("add"), Op("multiply"), Op("subtract")


@dataclasses.dataclass(frozen=True)
class PoolAttrs(ir.Attrs):
    pool_size: tuple = (1, 1)
    layout: str = "NCHW"


def same(a, b, map_free_vars=False):
    eq = structural_equal(a, b, map_free_vars)
    if eq:
        assert structural_hash(a, map_free_vars) == structural_hash(b, map_free_vars)
    return eq


def make_fn(names=("x", "y"), shape=(2, 3), op=ADD, value=1.0):
    x, y = (var(n, shape=shape) for n in names)
    return Function([x, y], Call(op, [Call(MUL, [x, y]), const(np.full(shape, value, "float32"))]))


def test_alpha_renamed_functions_are_equal_and_hash_the_same():
    f1, f2 = make_fn(("x", "y")), make_fn(("a", "b"))
    assert same(f1, f2)
    assert_structural_equal(f1, f2)


def test_param_order_matters():
    x, y = var("x", shape=(3,)), var("y", shape=(3,))
    f1 = Function([x, y], Call(SUB, [x, y]))
    f2 = Function([x, y], Call(SUB, [y, x]))
    assert not structural_equal(f1, f2)
    assert structural_hash(f1) != structural_hash(f2)


@pytest.mark.parametrize("other", [
    lambda: make_fn(shape=(2, 4)),               # shape
    lambda: make_fn(op=SUB),                     # op name
    lambda: make_fn(value=2.0),                  # constant value
])
def test_differences_are_detected(other):
    a, b = make_fn(), other()
    assert not structural_equal(a, b)
    assert structural_hash(a) != structural_hash(b)


def test_dtype_and_constant_bytes_matter():
    assert not same(const(np.zeros(3), "float32"), const(np.zeros(3), "float64"))
    assert not same(const(np.zeros(3, "float32")), const(np.zeros((3, 1), "float32")))
    assert same(const(np.arange(4.0, dtype="float32")), const(np.arange(4.0, dtype="float32")))
    assert not same(var("x", shape=(3,), dtype="float32"), var("x", shape=(3,), dtype="int32"), True)


def test_attrs_compare_by_value():
    x = var("x", shape=(1, 3, 8, 8))
    a = Call(Op("nn.max_pool2d"), [x], PoolAttrs((2, 2)))
    b = Call(Op("nn.max_pool2d"), [x], PoolAttrs((2, 2)))
    c = Call(Op("nn.max_pool2d"), [x], PoolAttrs((3, 3)))
    assert same(a, b)
    assert not structural_equal(a, c)
    assert structural_hash(a) != structural_hash(c)
    with pytest.raises(AssertionError, match=r"attribute pool_size: \(2, 2\) vs \(3, 3\)"):
        assert_structural_equal(a, c)
    assert same(PoolAttrs(), PoolAttrs())
    assert not structural_equal(PoolAttrs(), PoolAttrs(layout="NHWC"))


def test_function_attrs_and_dict_attrs():
    f = make_fn()
    assert same(f.with_attr("Primitive", 1), make_fn().with_attr("Primitive", 1))
    assert not structural_equal(f.with_attr("Primitive", 1), make_fn())
    assert same(ir.DictAttrs(a=1, b=(1, 2)), ir.DictAttrs(b=(1, 2), a=1))
    assert not structural_equal(ir.DictAttrs(a=1), ir.DictAttrs(a=2))


def test_free_vars_identity_unless_mapped():
    x1, x2 = var("x", shape=(3,)), var("x", shape=(3,))
    e1, e2 = Call(ADD, [x1, x1]), Call(ADD, [x2, x2])
    assert not structural_equal(e1, e2)
    assert same(e1, e2, map_free_vars=True)
    assert structural_equal(e1, e1)
    # Mapping is a bijection: add(x, x) is not add(a, b).
    a, b = var("a", shape=(3,)), var("b", shape=(3,))
    assert not structural_equal(e1, Call(ADD, [a, b]), map_free_vars=True)
    assert not structural_equal(Call(ADD, [x1, x1]), Call(ADD, [x1, x2]), map_free_vars=True)
    assert same(Call(ADD, [x1, x2]), Call(ADD, [x2, x1]), map_free_vars=True)
    # Mapped free vars must still agree on their types.
    assert not structural_equal(x1, var("x", shape=(4,)), map_free_vars=True)


def test_let_and_nested_function_alpha_equivalence():
    def build(n1, n2):
        x = var(n1, shape=(2,))
        t = var(n2)
        inner = Function([x], Call(ADD, [x, x]))
        return Let(t, inner, Call(t, [const(np.ones(2, "float32"))]))
    assert same(build("x", "t"), build("p", "q"))


def test_shared_dag_equals_tree():
    x = var("x", shape=(2,))
    shared = Call(MUL, [x, x])
    dag = Function([x], Call(ADD, [shared, shared]))
    y = var("y", shape=(2,))
    tree = Function([y], Call(ADD, [Call(MUL, [y, y]), Call(MUL, [y, y])]))
    assert same(dag, tree)


def test_types_with_type_params():
    a, b = TypeVar("A"), TypeVar("B")
    assert same(FuncType([a], a, [a]), FuncType([b], b, [b]))
    assert not structural_equal(a, b)
    assert structural_equal(a, b, map_free_vars=True)
    assert same(TensorType((ir.Any(), 3)), TensorType((ir.Any(), 3)))
    assert not structural_equal(TensorType((2, 3)), TensorType((ir.Any(), 3)))
    # Polymorphic identity functions with renamed type params are equal.
    x1, x2 = Var("x", a), Var("y", b)
    assert same(Function([x1], x1, a, [a]), Function([x2], x2, b, [b]))


def adt_module(names=("h", "t")):
    mod = IRModule()
    lst = GlobalTypeVar("List")
    a = TypeVar("A")
    cons = Constructor("Cons", [a, TypeCall(lst, [a])], lst)
    nil = Constructor("Nil", [], lst)
    mod.add_type_definition(TypeData(lst, [a], [cons, nil]))
    h, t, xs = Var(names[0]), Var(names[1]), Var("xs")
    body = Match(xs, [Clause(PatternConstructor(cons, [PatternVar(h), PatternWildcard()]), h),
                      Clause(PatternConstructor(nil), const(0.0))])
    mod["head"] = Function([xs], body)
    return mod


def test_match_and_modules():
    assert same(adt_module(("h", "t")), adt_module(("p", "q")))
    m1, m2 = adt_module(), adt_module()
    m2["other"] = Function([], const(1))
    assert not structural_equal(m1, m2)


def test_if_tuple_getitem():
    c = var("c", "bool")
    x = var("x", shape=(2,))
    e1 = Function([c, x], If(c, TupleGetItem(Tuple([x, x]), 0), x))
    c2, x2 = var("c", "bool"), var("x", shape=(2,))
    e2 = Function([c2, x2], If(c2, TupleGetItem(Tuple([x2, x2]), 1), x2))
    assert not structural_equal(e1, e2)
    e3 = Function([c2, x2], If(c2, TupleGetItem(Tuple([x2, x2]), 0), x2))
    assert same(e1, e3)


def test_assert_structural_equal_reports_path_and_both_programs():
    x = var("x", shape=(3,))
    f1 = Function([x], Call(ADD, [Call(MUL, [x, x]), x]))
    y = var("y", shape=(3,))
    f2 = Function([y], Call(ADD, [Call(SUB, [y, y]), y]))
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(f1, f2)
    msg = str(info.value)
    assert ".body.args[0].op" in msg
    assert "ops multiply vs subtract" in msg
    assert "multiply(%x, %x)" in msg and "subtract(%y, %y)" in msg


def test_hash_is_stable_across_processes():
    import subprocess
    import sys
    code = ("import numpy as np\nfrom relay_backend.ir import *\n"
            "x=var('x',shape=(2,3)); y=var('y',shape=(2,3))\n"
            "print(structural_hash(Function([x,y],Call(Op('add'),[x,const(np.ones((2,3),'float32'))]))))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout for seed in ("1", "2")}
    assert len(outs) == 1 and outs.pop().strip().isdigit()


def test_alpha_renaming_mutator_gives_equal_program():
    """Rename every bound var (params, lets, pattern vars) with ExprMutator: equal, same hash,
    and the renamed program is not identical to the original."""
    mod = adt_module()
    x, t = var("x", shape=(2,)), var("t")
    inner = Function([x], Let(t, Call(ADD, [x, x]), Call(MUL, [t, x])))
    prog = Tuple([mod["head"], inner, Call(inner, [const(np.ones(2, "float32"))])])
    bound = set(ir.bound_vars(prog))

    class Rename(ir.ExprMutator):
        fresh = {}

        def visit_var(self, v):
            if v not in bound:
                return v
            return self.fresh.setdefault(v, Var(v.name_hint + "_renamed", v.type_annotation))

    renamed = Rename().visit(prog)
    assert renamed is not prog and not (set(ir.all_vars(renamed)) & bound)
    assert same(prog, renamed)
    assert_structural_equal(prog, renamed)
