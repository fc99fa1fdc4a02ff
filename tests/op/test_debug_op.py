"""relay.op.debug: the interpreter calls the Python callback with the value and passes the value
on; compiled executors refuse a call that names a callback with a clear CompileError; FoldConstant
never runs the callback; the call prints and parses back."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import CompileError, ExecutionError
from relay_backend.op.debug import DebugAttrs, register_debug_func


def _program(callback):
    x = relay.var("x", shape=(2, 3))
    return relay.IRModule.from_expr(relay.Function([x], relay.op.debug(x * relay.const(2.0), callback) + x))


def test_interpreter_calls_the_callback_with_the_value():
    seen = []
    mod = _program(seen.append)
    data = np.arange(6, dtype="float32").reshape(2, 3)
    out = relay.create_executor("debug", mod=mod).evaluate()(data).numpy()
    np.testing.assert_array_equal(out, 3 * data)
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], 2 * data)


@pytest.mark.parametrize("kind", ["graph", "vm", "aot"])
def test_compiled_executors_refuse_a_callback(kind):
    with pytest.raises(CompileError, match="compiled code cannot call"):
        relay.create_executor(kind, mod=_program(lambda v: None)).evaluate()(np.zeros((2, 3), "float32"))


def test_fold_constant_does_not_run_the_callback():
    calls = []
    mod = relay.IRModule.from_expr(relay.Function([], relay.op.debug(relay.const(np.ones(3, "float32")), calls.append)))
    folded = relay.transform.FoldConstant()(relay.transform.InferType()(mod))
    assert calls == [] and "debug(" in folded.astext()


def test_prints_parses_and_names_a_missing_callback():
    mod = relay.transform.InferType()(_program(lambda v: None))
    text = mod.astext()
    assert "debug_func=" in text
    relay.assert_structural_equal(relay.parse(text), mod)
    x = relay.var("x", shape=(2,))
    lost = relay.IRModule.from_expr(relay.Function([x], relay.op.get("debug")(x, attrs=DebugAttrs("nowhere"))))
    with pytest.raises(ExecutionError, match="no callback is registered under 'nowhere'"):
        relay.create_executor("debug", mod=lost).evaluate()(np.zeros(2, "float32"))
    register_debug_func("nowhere", lambda v: None)
    relay.create_executor("debug", mod=lost).evaluate()(np.zeros(2, "float32"))
