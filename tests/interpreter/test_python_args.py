"""Python arguments to executors: lists become tuples only for tuple parameters, tensors only for
tensor parameters, and ints must fit int32; each mistake is an InputError naming the parameter.
The adaptation happens in convert_args, so the debug, graph and vm executors agree."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import InputError
from relay_backend.ir import (Function, IRModule, TensorType, TupleGetItem, TupleType, TypeCall,
                              Var, var)
from relay_backend.prelude import Prelude

F2 = TensorType((2,))
PAIR = TupleType([F2, TensorType((), "int32")])


def _pair_mod():
    t = Var("t", PAIR)
    return IRModule.from_expr(Function([t], relay.add(TupleGetItem(t, 0), relay.const(1.0))))


@pytest.mark.parametrize("kind", ["debug", "vm", "graph"])
def test_list_for_tuple_parameter_becomes_a_tuple(kind):
    run = relay.create_executor(kind, mod=_pair_mod()).evaluate()
    out = run([np.float32([1, 2]), 7])
    np.testing.assert_allclose(out.numpy(), [2, 3])
    np.testing.assert_allclose(run(t=(np.float32([1, 2]), 7)).numpy(), [2, 3])


def test_nested_lists_follow_the_tuple_type():
    nested = Var("n", TupleType([PAIR, F2]))
    mod = IRModule.from_expr(Function([nested], TupleGetItem(TupleGetItem(nested, 0), 0)))
    run = relay.create_executor("debug", mod=mod).evaluate()
    out = run([[np.float32([5, 6]), 1], np.float32([0, 0])])
    np.testing.assert_allclose(out.numpy(), [5, 6])


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_list_of_wrong_length_names_the_parameter(kind):
    run = relay.create_executor(kind, mod=_pair_mod()).evaluate()
    with pytest.raises(InputError, match=r"main: parameter 't' expects a tuple of 2 field\(s\) "
                                         r"\(Tensor\[\(2\), float32\], int32\), got a list of 3"):
        run([np.float32([1, 2]), 7, 8])


def test_list_for_tensor_parameter_is_a_tensor_as_before():
    x = var("x", shape=(2,), dtype="float32")
    run = relay.create_executor("debug", mod=IRModule.from_expr(Function([x], relay.negative(x)))).evaluate()
    np.testing.assert_allclose(run([1.5, 2.5]).numpy(), [-1.5, -2.5])
    with pytest.raises(InputError, match=r"main: parameter 'x' expects Tensor\[\(2\), float32\], got a "
                                         r"list that is not a rectangular array"):
        run([[1.0, 2.0], [3.0]])


def test_list_for_adt_parameter_says_what_is_expected():
    p = Prelude()
    xs = Var("xs", TypeCall(p.l, [TensorType((), "int32")]))
    p.mod["main"] = Function([xs], p.length(xs))
    run = relay.create_executor("debug", mod=p.mod).evaluate()
    with pytest.raises(InputError, match=r"main: parameter 'xs' expects List\[int32\], got a Python list; "
                                         r"a list is accepted only for a tensor or a tuple parameter"):
        run([1, 2, 3])


@pytest.mark.parametrize("kind", ["debug", "vm", "graph"])
def test_python_int_out_of_int32_range(kind):
    n = var("n", shape=(), dtype="int32")
    mod = IRModule.from_expr(Function([n], relay.add(n, relay.const(1))))
    run = relay.create_executor(kind, mod=mod).evaluate()
    assert int(run(2 ** 31 - 2).numpy()) == 2 ** 31 - 1
    with pytest.raises(InputError, match=r"main: parameter 'n' expects int32: value 1099511627776 is "
                                         r"out of range for int32"):
        run(2 ** 40)
    with pytest.raises(InputError, match=r"parameter 'n'.*value -2147483649 is out of range for int32"):
        run(-2 ** 31 - 1)


def test_python_int_for_int64_parameter_suggests_numpy():
    n = var("n", shape=(), dtype="int64")
    run = relay.create_executor("debug", mod=IRModule.from_expr(Function([n], n))).evaluate()
    with pytest.raises(InputError, match=r"out of range for int32 .*pass np\.int64\(1099511627776\)"):
        run(2 ** 40)
    assert int(run(np.int64(2 ** 40)).numpy()) == 2 ** 40


def test_closure_call_with_huge_int_is_an_input_error():
    from relay_backend.executor import to_value
    with pytest.raises(InputError, match=r"cannot pass int 1099511627776 to a relay function"):
        to_value(2 ** 40)
