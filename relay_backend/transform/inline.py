"""Inline (tvm.relay.transform.Inline, pass name "InlineGlobals"): replace calls to global
functions marked `Inline=1` by their bodies.

Guarantee: a global function carrying the attribute Inline=1 that is not recursive, and all of
whose own global callees could be inlined into it, has every call `@f(args)` replaced by a fresh
copy of its body with the parameters bound to the arguments (a reference to @f that is not a call
becomes a copy of the function literal). Functions are processed callees first, so chains of
inline functions collapse. Afterwards the inline functions nobody refers to any more are removed,
except entry functions (those no function called to begin with, e.g. main). Functions given to
an external compiler (Compiler attr) are never inlined. Meaning is unchanged.
"""
import networkx as nx

from ..ir.expr import Function, GlobalVar
from ..ir.functor import ExprMutator, all_nodes_post_order
from .pass_infra import module_pass
from .substitute import bind, dedup


def call_graph(mod) -> nx.DiGraph:
    """Edges caller -> callee between the module's global functions (by GlobalVar)."""
    graph = nx.DiGraph()
    for gv, fn in mod.functions.items():
        graph.add_node(gv)
        for node in all_nodes_post_order(fn):
            if isinstance(node, GlobalVar) and node in mod.functions:
                graph.add_edge(gv, node)
    return graph


def _marked_inline(fn) -> bool:
    return isinstance(fn, Function) and int(fn.attrs.get("Inline", 0)) == 1 and \
        fn.attrs.get("Compiler") is None


class _Inliner(ExprMutator):
    def __init__(self, mod, inlinable):
        super().__init__()
        self.mod = mod
        self.inlinable = inlinable

    def visit_call(self, call):
        if isinstance(call.op, GlobalVar) and call.op in self.inlinable:
            args = [self.visit(a) for a in call.args]
            fresh = dedup(self.mod[call.op])
            return bind(fresh.body, dict(zip(fresh.params, args)))
        return super().visit_call(call)

    def visit_global_var(self, gv):
        return dedup(self.mod[gv]) if gv in self.inlinable else gv


def inline_globals(mod):
    """The module with inline-marked global functions inlined (see the module docstring)."""
    out = mod.copy()
    graph = call_graph(mod)
    entries = {gv for gv in graph if graph.in_degree(gv) == 0}
    recursive = {gv for comp in nx.strongly_connected_components(graph) for gv in comp
                 if len(comp) > 1 or graph.has_edge(gv, gv)}
    inlinable = set()
    dag = nx.condensation(graph)
    for comp in reversed(list(nx.topological_sort(dag))):     # callees first
        for gv in dag.nodes[comp]["members"]:
            fn = out[gv]
            callees = [c for c in graph.successors(gv) if c in inlinable]
            if callees and isinstance(fn, Function):
                inliner = _Inliner(out, set(callees))
                out[gv] = Function(fn.params, inliner.visit(fn.body), fn.ret_type, fn.type_params,
                                   fn.attrs)
            remaining = [c for c in graph.successors(gv) if c not in inlinable]
            if _marked_inline(fn) and gv not in recursive and not remaining:
                inlinable.add(gv)
    still_used = {node for fn in out.functions.values() for node in all_nodes_post_order(fn)
                  if isinstance(node, GlobalVar)}
    for gv in inlinable:
        if gv not in entries and gv not in still_used:
            del out[gv]
    return out


def Inline():  # noqa: N802 - tvm.relay naming
    """Module pass (opt_level 1, named "InlineGlobals" as in TVM)."""
    return module_pass(lambda mod, ctx: inline_globals(mod), opt_level=1, name="InlineGlobals")


__all__ = ["Inline", "inline_globals", "call_graph"]
