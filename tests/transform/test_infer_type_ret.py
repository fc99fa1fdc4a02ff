"""InferType fills a missing `Function.ret_type` with the inferred return type, as Relay's InferType
does, for every function it checks: globals, nested function literals, let-bound closures. So a
typed program compares structurally equal to one a Relay user writes with annotations."""
import numpy as np

import relay_backend as relay
from relay_backend.ir import Function, IRModule, Let, TensorType, TupleType, var
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.ir.structural import assert_structural_equal
from relay_backend.transform import FuseOps, InferType, InferTypeLocal

F32_2x3 = TensorType((2, 3), "float32")


def _functions(expr) -> list:
    return [n for n in all_nodes_post_order(expr) if isinstance(n, Function)]


def test_every_checked_function_gets_its_return_type():
    x = var("x", shape=(2, 3))
    y = var("y", shape=(2, 3))
    inner = Function([y], relay.exp(y))                       # a literal called in place
    f = var("f")
    closure = Function([y], relay.Tuple([y, relay.sum(y, axis=1)]))
    body = Let(f, closure, relay.Call(f, [relay.Call(inner, [x])]))
    mod = InferType()(IRModule.from_expr(Function([x], body)))
    main = mod["main"]
    assert main.ret_type == TupleType([F32_2x3, TensorType((2,), "float32")])
    assert inner.ret_type == F32_2x3
    assert closure.ret_type == main.ret_type
    for fn in _functions(main):
        assert fn.ret_type == fn.checked_type.ret_type


def test_typed_program_equals_the_annotated_relay_program():
    x = var("x", shape=(2, 3))
    typed = InferType()(IRModule.from_expr(Function([x], relay.nn.relu(x))))["main"]
    x2 = var("x", shape=(2, 3))
    expected = Function([x2], relay.nn.relu(x2), ret_type=F32_2x3)
    assert_structural_equal(typed, expected)


def test_fused_module_equals_its_relay_expectation():
    # FuseOps gives fused functions a ret_type; main must carry one too, as in Relay
    x = var("x", shape=(2, 3))
    mod = InferType()(IRModule.from_expr(Function([x], relay.exp(relay.add(x, x)))))
    fused = InferType()(FuseOps()(mod))["main"]
    p = var("p0", shape=(2, 3))
    prim = Function([p], relay.exp(relay.add(p, p)), ret_type=F32_2x3, attrs={"Primitive": 1})
    x2 = var("x", shape=(2, 3))
    expected = InferType()(IRModule.from_expr(Function([x2], relay.Call(prim, [x2]), ret_type=F32_2x3)))
    assert_structural_equal(fused, expected["main"])


def test_annotated_return_type_is_kept():
    x = var("x", shape=(2, 3))
    annotation = TensorType((2, 3), "float32")
    fn = Function([x], relay.negative(x), ret_type=annotation)
    InferTypeLocal(fn)
    assert fn.ret_type is annotation


def test_infer_type_local_fills_nested_functions():
    x = var("x", shape=(4,), dtype="int32")
    inner = Function([], relay.cast(x, "float32"))
    fn = Function([x], relay.Call(inner, []))
    InferTypeLocal(fn)
    assert inner.ret_type == TensorType((4,), "float32") and fn.ret_type == inner.ret_type
    out = relay.create_executor("debug", mod=IRModule.from_expr(fn)).evaluate()(np.arange(4, dtype="int32"))
    np.testing.assert_array_equal(out.numpy(), np.arange(4, dtype="float32"))
