"""Spans: the parser and the ONNX frontend record where each node came from, passes keep it,
AnnotateSpans gives spans to programs built in Python, and type and lowering errors name it."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.errors import CompileError, TypeInferenceError
from relay_backend.ir import ExprMutator, Span
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.strategy import register_strategy, unregister_strategy

HEADER = '#[version = "0.0.5"]\n'
TEXT = HEADER + """def @main(%x: Tensor[(3, 7), float32]) {
  %0 = exp(%x);
  %1 = nn.relu(%0);
  add(%1, %0)
}"""


def _where(node):
    s = node.span
    return (s.source_name.name, s.line, s.column)


def test_parser_gives_every_node_its_position():
    main = relay.parse(TEXT, source_name="prog.rly")["main"]
    add = main.body
    relu, exp = add.args
    assert _where(add) == ("prog.rly", 5, 3) and _where(relu) == ("prog.rly", 4, 8)
    assert _where(exp) == ("prog.rly", 3, 8) and _where(main.params[0]) == ("prog.rly", 2, 11)
    assert (exp.span.end_line, exp.span.end_column) == (3, 15)   # `exp(%x)` ends before `;`
    assert all(n.span is not None for n in all_nodes_post_order(main) if not isinstance(n, relay.ir.Op))


def test_rewrites_keep_spans():
    mod = relay.parse(TEXT, source_name="prog.rly")

    class SwapAdd(ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            return relay.Call(new.op, list(reversed(new.args)), new.attrs, span=new.span) \
                if new.op.name == "add" else new

    rewritten = SwapAdd().visit(mod["main"])
    assert _where(rewritten.body) == ("prog.rly", 5, 3) and _where(rewritten) == _where(mod["main"])
    with transform.PassContext(opt_level=3):
        fused = transform.Sequential([transform.FuseOps(2), transform.InferType()])(mod)
    inner_calls = [n for n in all_nodes_post_order(fused["main"])
                   if isinstance(n, relay.Call) and isinstance(n.op, relay.ir.Op)]
    assert {_where(c)[1] for c in inner_calls} == {3, 4, 5}


def test_annotate_spans_gives_built_programs_positions():
    x = relay.var("x", shape=(2, 2))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.exp(x))))
    assert mod["main"].body.span is None
    annotated = transform.AnnotateSpans()(mod)
    relay.assert_structural_equal(annotated, transform.InferType()(mod))
    text = mod.astext()
    for node in all_nodes_post_order(annotated["main"]):
        if isinstance(node, relay.Call):
            assert node.span.source_name.name == "GeneratedSource"
            assert node.op.name + "(" in text.split("\n")[node.span.line - 1]


def test_type_error_in_an_annotated_program_names_the_line():
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(4,))
    body = relay.add(relay.exp(x), y)
    mod = relay.IRModule.from_expr(relay.Function([x, y], body))
    with pytest.raises(TypeInferenceError) as info:
        transform.AnnotateSpans()(mod)
    assert info.value.span.source_name.name == "GeneratedSource" and info.value.span.line == 4
    assert "at GeneratedSource:4:3" in str(info.value)


def test_lowering_error_names_the_span():
    def broken(strategy, attrs, inputs, out_type, target):
        def compute(attrs, inputs, out_type):
            raise ValueError("this implementation cannot be lowered")
        strategy.add_implementation(compute, None, name="broken.x86", plevel=99)

    text = HEADER + """def @main(%x: Tensor[(5, 11, 3), float32]) {
  %0 = exp(%x);
  nn.relu(%0)
}"""
    mod = relay.parse(text, source_name="lower.rly")
    register_strategy("nn.relu", "x86", broken)
    try:
        relay.backend.te_compiler.get().clear()
        with pytest.raises(CompileError) as info:
            relay.build(mod, target="llvm")
    finally:
        unregister_strategy("nn.relu", "x86", broken)
        relay.backend.te_compiler.get().clear()
    assert "cannot be lowered" in str(info.value)
    assert info.value.span.source_name.name == "lower.rly" and info.value.span.line == 4
    assert "at lower.rly:4:3" in str(info.value)


def test_onnx_nodes_name_the_expressions_they_became():
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    from tests.frontend.conftest import make_model
    model = make_model([helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="fc1", transB=1),
                        helper.make_node("Relu", ["h"], ["y"], name="act1")],
                       [("x", "float32", [2, 3])], [("y", "float32", [2, 4])],
                       inits={"w": np.ones((4, 3), "float32"), "b": np.zeros(4, "float32")})
    mod, params = relay.frontend.from_onnx(model, freeze_params=False)
    calls = [n for n in all_nodes_post_order(mod["main"]) if isinstance(n, relay.Call)]
    names = {c.op.name: c.span.source_name.name for c in calls}
    assert names["nn.relu"] == "act1" and names["nn.dense"] == "fc1"
    assert isinstance(calls[0].span, Span) and calls[0].span.line == 0
    assert onnx is not None
