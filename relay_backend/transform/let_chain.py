"""LetChainMutator: an ExprMutator that walks `let` chains with a loop, not recursion.

ExprMutator pre-visits a Let's value *and body* before `visit_let` runs, which leaves no moment
to act on a binding before its uses are rewritten. Passes that substitute or drop bindings
(FoldConstant, DeadCodeElimination) need that moment, so here a Let pre-visits only its value and
`visit_let` walks the whole chain `let x1 = v1; let x2 = v2; ...; body` iteratively, calling
`bind_let` on each binding in order, then `rebuild_let` from the inside out. A 10,000-binding
chain therefore costs constant Python stack depth.
"""
from ..ir.expr import Let
from ..ir.functor import ExprMutator, dataflow_children


class LetChainMutator(ExprMutator):
    """Subclasses override `bind_let(let)` (visit/record the binding) and `rebuild_let(let, body)`."""

    def __init__(self):
        super().__init__()
        self._bound = {}  # Let -> (new var, new value) recorded by bind_let

    def _previsit_children(self, expr):
        if isinstance(expr, Let):
            return [] if expr.value in self.memo_map else [expr.value]
        return [c for c in dataflow_children(expr) if c not in self.memo_map]

    def visit_let(self, let):
        chain, e = [], let
        while isinstance(e, Let) and (e is let or e not in self.memo_map):
            chain.append(e)
            self.bind_let(e)
            e = e.body
        body = self.visit(e)
        for binding in reversed(chain):
            body = self.rebuild_let(binding, body)
            self.memo_map[binding] = body
        return body

    def bind_let(self, let) -> None:
        """Default: visit the var and the value before the body is visited."""
        self._bound[let] = (self.visit(let.var), self.visit(let.value))

    def rebuild_let(self, let, body):
        """Default: keep the binding, reusing the old node when nothing changed."""
        var, value = self._bound.pop(let)
        if var is let.var and value is let.value and body is let.body:
            return let
        return Let(var, value, body)


__all__ = ["LetChainMutator"]
