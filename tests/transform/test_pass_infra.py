"""Pass infrastructure: decorators, Sequential gating by PassContext, instruments, debug output."""
import io

import numpy as np
import pytest

from relay_backend import config, op
from relay_backend.errors import RelayError
from relay_backend.ir import Function, IRModule, TensorType, const, var
from relay_backend.transform import (InferType, Pass, PassContext, PassInfo, PassTiming,
                                     PrintIRAfter, PrintIRBefore, Sequential, function_pass,
                                     module_pass)


def small_module():
    x = var("x", shape=(2,))
    return IRModule.from_expr(Function([x], op.exp(x)))


def recording_pass(log, name, opt_level):
    """A module pass that appends its name to `log` and returns a copy of the module."""
    @module_pass(opt_level=opt_level, name=name)
    def run(mod, ctx):
        log.append(name)
        return mod.copy()
    return run


def test_module_pass_from_function_and_info():
    log = []
    p = recording_pass(log, "Rec", 1)
    assert isinstance(p, Pass)
    assert p.info.name == "Rec" and p.info.opt_level == 1
    mod = small_module()
    out = p(mod)
    assert log == ["Rec"] and isinstance(out, IRModule) and out is not mod
    assert "Rec" in repr(p) and "opt_level=1" in repr(p)


def test_module_pass_name_defaults_to_function_name():
    @module_pass(opt_level=0)
    def my_pass(mod, ctx):
        return mod
    assert my_pass.info.name == "my_pass"


def test_module_pass_requires_opt_level():
    with pytest.raises(RelayError, match="opt_level"):
        module_pass(lambda mod, ctx: mod)


def test_module_pass_from_class_keeps_state():
    @module_pass(opt_level=2, name="Counter")
    class Counter:
        def __init__(self, start):
            self.count = start

        def transform_module(self, mod, ctx):
            self.count += 1
            return mod

    p = Counter(10)
    p(small_module())
    p(small_module())
    assert p.count == 12 and p.info.name == "Counter"


def test_function_pass_rewrites_functions_and_skips_primitive():
    seen = []

    @function_pass(opt_level=1)
    def negate_body(func, mod, ctx):
        seen.append(func)
        return Function(func.params, op.negative(func.body), func.ret_type)

    x, y = var("x", shape=(2,)), var("y", shape=(2,))
    mod = IRModule()
    mod["main"] = Function([x], op.exp(x))
    prim = Function([y], op.exp(y)).with_attr("Primitive", 1)
    mod["prim"] = prim
    out = negate_body(mod)
    assert len(seen) == 1 and seen[0] is mod["main"]
    assert out["main"].body.op.name == "negative"
    assert out["prim"] is prim and mod["main"].body.op.name == "exp"   # input module untouched


def test_function_pass_class_form():
    @function_pass(opt_level=0, name="Ident")
    class Ident:
        def transform_function(self, func, mod, ctx):
            return func

    mod = small_module()
    assert Ident()(mod)["main"] is mod["main"]


def test_pass_must_return_module():
    bad = module_pass(lambda mod, ctx: None, opt_level=0, name="Bad")
    with pytest.raises(RelayError, match="Bad returned NoneType"):
        bad(small_module())


def test_sequential_gates_by_opt_level():
    log = []
    seq = Sequential([recording_pass(log, "L0", 0), recording_pass(log, "L2", 2),
                      recording_pass(log, "L3", 3)])
    seq(small_module())                       # default context: opt_level 2
    assert log == ["L0", "L2"]
    log.clear()
    with PassContext(opt_level=3):
        seq(small_module())
    assert log == ["L0", "L2", "L3"]
    log.clear()
    with PassContext(opt_level=0):
        seq(small_module())
    assert log == ["L0"]


def test_required_and_disabled_pass():
    log = []
    seq = Sequential([recording_pass(log, "A", 0), recording_pass(log, "B", 4)])
    with PassContext(opt_level=1, required_pass=["B"]):
        seq(small_module())
    assert log == ["A", "B"]
    log.clear()
    with PassContext(opt_level=4, disabled_pass=["A"], required_pass=["A"]):   # disabled wins
        seq(small_module())
    assert log == ["B"]
    log.clear()
    with PassContext(disabled_pass=["A"]):    # a direct call of a disabled pass is a no-op
        mod = small_module()
        assert seq.passes[0](mod) is mod
    assert log == []


def test_direct_call_ignores_opt_level():
    log = []
    high = recording_pass(log, "High", 4)
    with PassContext(opt_level=0):
        high(small_module())
    assert log == ["High"]


def test_nested_sequential_and_required_list():
    log = []

    @module_pass(opt_level=0, name="NeedsTypes", required=["InferType"])
    def needs_types(mod, ctx):
        log.append(str(mod["main"].body.checked_type))
        return mod

    inner = Sequential([needs_types], name="inner")
    outer = Sequential([recording_pass(log, "First", 0), inner], name="outer")
    outer(small_module())
    assert log == ["First", str(TensorType((2,)))]


def test_sequential_repr_lists_passes():
    seq = Sequential([InferType(), recording_pass([], "Other", 3)], opt_level=1, name="pipeline")
    text = repr(seq)
    assert "pipeline" in text and "opt_level=1" in text
    assert text.index("InferType") < text.index("Other") and "opt_level=3" in text


def test_pass_context_current_and_nesting():
    default = PassContext.current()
    assert default.opt_level == 2
    with PassContext(opt_level=3, config={"relay.FuseOps.max_depth": 4}) as outer:
        assert PassContext.current() is outer
        with PassContext(opt_level=1) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer and outer.config["relay.FuseOps.max_depth"] == 4
    assert PassContext.current() is default


def test_pass_context_rejects_bad_arguments():
    with pytest.raises(RelayError, match="opt_level"):
        PassContext(opt_level="3")
    with pytest.raises(RelayError, match="PassInstrument"):
        PassContext(instruments=[object()])


def test_pass_timing_records_every_run():
    timing = PassTiming()
    log = []
    seq = Sequential([InferType(), recording_pass(log, "Rec", 0)], name="seq")
    with PassContext(instruments=[timing]):
        seq(small_module())
    names = [name for _, name, _ in timing.records]
    assert sorted(names) == ["InferType", "Rec", "seq"]
    assert all(secs >= 0 for _, _, secs in timing.records)
    table = timing.render()
    lines = table.splitlines()
    body = [ln.strip().split()[0] for ln in lines[2:-2]]
    assert body == ["seq", "InferType", "Rec"]          # parent first, children in run order
    assert lines[-1].startswith("total")


def test_print_ir_before_and_after(capsys):
    buf = io.StringIO()
    with PassContext(instruments=[PrintIRBefore("InferType", file=buf), PrintIRAfter(["Other"])]):
        InferType()(small_module())
        recording_pass([], "Other", 0)(small_module())
    assert "# IR before InferType" in buf.getvalue()
    out = capsys.readouterr().out
    assert "# IR after Other" in out and "before" not in out


def test_debug_level_prints_pass_times(monkeypatch, capsys):
    monkeypatch.setenv("RB_DEBUG", "1")
    config.reload()
    try:
        Sequential([InferType()], name="dbg")(small_module())
    finally:
        monkeypatch.delenv("RB_DEBUG")
        config.reload()
    err = capsys.readouterr().err
    assert "[pass]" in err and "InferType" in err and "dbg" in err and "ms" in err


def test_pass_info_repr():
    info = PassInfo(3, "FuseOps", required=["InferType"])
    assert "FuseOps" in repr(info) and "3" in repr(info) and "InferType" in repr(info)


def test_infer_type_pass_metadata_and_const_program():
    p = InferType()
    assert p.info.name == "InferType" and p.info.opt_level == 0
    mod = IRModule.from_expr(Function([], const(np.ones((2, 3), "float32"))))
    assert p(mod)["main"].body.checked_type == TensorType((2, 3))
