"""set_span: mark the expressions a frontend built for one model node with that node's name.

A converter turns one ONNX node into a few Relay expressions (a Conv into conv2d + bias_add,
say). Each of them gets `Span(SourceName(node name), 0, 0, 0, 0)` (tvm.relay.frontend.common's
set_span does the same), so a type or lowering error later names the model node it came from.
Expressions that already have a span, and the node's inputs, are left alone.
"""
from ..ir.functor import dataflow_children
from ..ir.span import SourceName, Span


def node_span(name: str) -> Span:
    """The span that names a model node (no position: line 0)."""
    return Span(SourceName(name), 0, 0, 0, 0)


def set_span(outputs, span: Span, inputs=()) -> None:
    """Give `span` to every expression reachable from `outputs` that has none, stopping at
    `inputs` (and at anything already spanned). Iterative; nodes are marked in place."""
    stop = {id(e) for e in inputs if e is not None}
    stack = [e for e in outputs if e is not None]
    seen = set()
    while stack:
        e = stack.pop()
        if id(e) in seen or id(e) in stop or getattr(e, "span", None) is not None:
            continue
        seen.add(id(e))
        e.span = span
        stack.extend(dataflow_children(e))


__all__ = ["node_span", "set_span"]
