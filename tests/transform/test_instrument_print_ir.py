"""tvm.transform.PrintIR and the pass_instrument decorator."""
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.errors import RelayError
from relay_backend.transform import PassContext, PassInstrument, PrintIR, Sequential, pass_instrument


def small_module():
    x = relay.var("x", shape=(2,))
    return relay.IRModule.from_expr(relay.Function([x], relay.exp(relay.add(x, relay.const(1.0)))))


def test_print_ir_prints_and_returns_the_module_unchanged(capsys):
    mod = small_module()
    out = Sequential([PrintIR("before infer"), transform.InferType(), PrintIR()])(mod)
    text = capsys.readouterr().out
    assert text.count("PrintIR(") == 2 and "PrintIR(before infer):" in text
    assert "exp(" in text and "def @main" in text
    assert PrintIR().info.opt_level == 0 and PrintIR().info.name == "PrintIR"
    relay.assert_structural_equal(out["main"], mod["main"])


def test_print_ir_can_be_disabled_by_name(capsys):
    with PassContext(disabled_pass=["PrintIR"]):
        Sequential([PrintIR("x")])(small_module())
    assert capsys.readouterr().out == ""


def test_pass_instrument_decorator_calls_defined_hooks():
    @pass_instrument
    class Recorder:
        """Records the passes it sees."""

        def __init__(self, skip):
            self.skip = skip
            self.events = []

        def enter_pass_ctx(self):
            self.events.append("enter")

        def exit_pass_ctx(self):
            self.events.append("exit")

        def should_run(self, mod, info):
            return info.name != self.skip

        def run_before_pass(self, mod, info):
            self.events.append(f"before {info.name}")

    rec = Recorder(skip="FoldConstant")
    assert isinstance(rec, PassInstrument) and Recorder.__doc__ == "Records the passes it sees."
    with PassContext(opt_level=3, instruments=[rec]):
        assert PassContext.current().instruments == [rec]
        Sequential([transform.InferType(), transform.FoldConstant()])(small_module())
    assert rec.events == ["enter", "before sequential", "before InferType", "exit"]


def test_pass_instrument_called_form_and_missing_hooks():
    @pass_instrument()
    class Nothing:
        pass

    inst = Nothing()
    assert inst.should_run(None, None) is True and inst.run_after_pass(None, None) is None
    with pytest.raises(RelayError, match="decorates a class"):
        pass_instrument(lambda: None)
