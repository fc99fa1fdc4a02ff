"""Building IR from wrong values raises IRConstructionError (a RelayError, and a TypeError/
ValueError as before) with a message that names the mistake; GlobalVar calls build Calls."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import IRConstructionError, RelayError
from relay_backend.ir import (Call, Function, GlobalVar, If, Let, RefCreate, TensorType, Tuple,
                              TupleGetItem, TupleType, Var, const, var)


def test_error_class_keeps_builtin_compatibility():
    assert issubclass(IRConstructionError, RelayError)
    assert issubclass(IRConstructionError, TypeError) and issubclass(IRConstructionError, ValueError)


@pytest.mark.parametrize("dtype", ["floaty", "float33", object()])
def test_unknown_dtype(dtype):
    with pytest.raises(IRConstructionError, match=r"unknown dtype .*use a numpy dtype name"):
        TensorType((2,), dtype)


@pytest.mark.parametrize("shape,match", [
    (3, r"a tensor shape must be a sequence of dimensions, e\.g\. \(3,\).*got int 3"),
    ("abc", r"must be a sequence of dimensions"),
    ((2, -1), r"a tensor dimension must be >= 0, got -1"),
    ((2, "x"), r"a tensor dimension must be an int, a size variable \(te.size_var\), a tir expression "
               r"or relay.Any\(\), got str 'x'"),
    ((2.0,), r"a tensor dimension must be an int"),
])
def test_bad_shapes(shape, match):
    with pytest.raises(IRConstructionError, match=match):
        TensorType(shape)


def test_var_shape_must_be_a_sequence():
    with pytest.raises(IRConstructionError, match=r"var\('x'\): shape must be a sequence of dimensions, "
                                                   r"e\.g\. shape=\(3,\), got int 3"):
        var("x", shape=3)
    with pytest.raises(IRConstructionError, match=r"var\('x'\): give either type_annotation or shape"):
        var("x", TensorType((3,)), shape=(3,))
    with pytest.raises(IRConstructionError, match=r"type_annotation must be a relay type or a dtype"):
        var("x", (3, 4))
    assert var("x", shape=[2, 3]).type_annotation == TensorType((2, 3))
    assert var("x", shape=np.array([2, 3])).type_annotation == TensorType((2, 3))
    assert var("x", "int32").type_annotation == TensorType((), "int32")


def test_function_params_must_be_vars():
    x = var("x", shape=(2,))
    with pytest.raises(IRConstructionError, match=r"Function: parameter 0 must be a relay.Var .*got a Constant"):
        Function([const(1.0)], const(1.0))
    with pytest.raises(IRConstructionError, match=r"Function: parameter 1 must be a relay.Var .*got str 'y'"):
        Function([x, "y"], x)
    with pytest.raises(IRConstructionError, match=r"Function: params must be a list of relay.Var, got a Var"):
        Function(x, x)
    with pytest.raises(IRConstructionError, match=r"Function: the body must be a relay expression, got float 1.0"):
        Function([x], 1.0)


def test_if_condition_and_branches_must_be_exprs():
    x = var("x", shape=(2,))
    with pytest.raises(IRConstructionError,
                       match=r"If: the condition must be a relay expression \(a bool scalar.*got bool True; "
                             r"wrap constants with relay.const"):
        If(True, x, x)
    with pytest.raises(IRConstructionError, match=r"If: the else-branch must be a relay expression, got int 3"):
        If(const(True), x, 3)
    assert If(const(True), x, None).false_branch is None  # ScopeBuilder's partial If, as in TVM


def test_other_nodes_check_their_operands():
    x = var("x", shape=(2,))
    with pytest.raises(IRConstructionError, match=r"Call: argument 1 must be a relay expression, got list"):
        Call(relay.op.get("add"), [x, [1, 2]])
    with pytest.raises(IRConstructionError, match=r"Call: the callee must be a relay expression, got str 'add'"):
        Call("add", [x, x])
    with pytest.raises(IRConstructionError, match=r"Tuple: each field must be a relay expression, got ndarray"):
        Tuple([x, np.zeros(2)])
    with pytest.raises(IRConstructionError, match=r"TupleGetItem: the index must be an int, got str"):
        TupleGetItem(Tuple([x]), "0")
    with pytest.raises(IRConstructionError, match=r"TupleGetItem: the tuple must be a relay expression"):
        TupleGetItem((x,), 0)
    with pytest.raises(IRConstructionError, match=r"Let: the bound variable must be a relay.Var, got str"):
        Let("v", x, x)
    with pytest.raises(IRConstructionError, match=r"RefCreate: the value must be a relay expression"):
        RefCreate(1.0)
    split = relay.split(var("s", shape=(4,)), 2)
    with pytest.raises(IRConstructionError, match=r"TupleWrapper: use .astuple\(\) or index it"):
        Function([x], split)
    # still TypeError for callers that caught the old exception
    with pytest.raises(TypeError):
        Tuple([x, 1])


def test_valid_construction_is_unchanged():
    x = var("x", shape=(2,))
    t = TupleType([TensorType((2,)), TensorType((), "int32")])
    y = Var("y", t)
    fn = Function([x, y], Let(var("z"), TupleGetItem(y, np.int64(1)), x))
    assert fn.params == (x, y) and fn.body.value.index == 1


def test_global_var_call_builds_a_call():
    gv = GlobalVar("f")
    x, y = var("x", shape=(2,)), var("y", shape=(2,))
    call = gv(x, y)
    assert isinstance(call, Call) and call.op is gv and call.args == (x, y)
    with pytest.raises(IRConstructionError, match=r"Call: argument 0 must be a relay expression"):
        gv(1.0)
