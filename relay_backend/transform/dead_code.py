"""Dead code elimination over let bindings, and removal of unreachable module functions.

`DeadCodeElimination(inline_once=False)` drops `let x = v; body` when x is never used (the value
is pure) and, with inline_once, substitutes values used exactly once. Uses are counted lazily: a
binding's value only counts toward other variables' uses once its own variable is used, so a
whole chain of dead bindings disappears in one run. A value is impure when it contains a
RefWrite (outside function literals); such bindings stay unless ignore_impurity=True.

`RemoveUnusedFunctions(entry_functions=None)` keeps only the module functions reachable through
GlobalVar references from the entries (default ["main"]), as TVM does.
"""
from collections import defaultdict

from ..ir.adt import Match
from ..ir.expr import Call, Function, GlobalVar, If, Let, RefWrite, Var
from ..ir.functor import all_nodes_post_order, dataflow_children, post_order
from ..ir.module import IRModule
from .let_chain import LetChainMutator
from .pass_infra import function_pass, module_pass


# --- effects -------------------------------------------------------------------------------------
def _effect_children(expr):
    """Sub-expressions evaluated when expr is (function literals' bodies are not)."""
    if isinstance(expr, If):
        return (expr.cond, expr.true_branch, expr.false_branch)
    if isinstance(expr, Match):
        return (expr.data, *(c.rhs for c in expr.clauses))
    if isinstance(expr, Call):
        return (expr.op, *expr.args)
    return dataflow_children(expr)


class _Purity:
    """Memoized 'does evaluating this write a reference?' over shared sub-graphs."""

    def __init__(self):
        self.impure = {}
        self._done = set()  # the keys of `impure`, as the `seen` set post_order extends

    def is_impure(self, expr) -> bool:
        if expr not in self.impure:
            for node in post_order(expr, seen=self._done, children=_effect_children):
                self.impure[node] = isinstance(node, RefWrite) or any(
                    self.impure[c] for c in _effect_children(node))
        return self.impure[expr]


# --- use counting --------------------------------------------------------------------------------
def _use_children(expr):
    """Children through which a variable can be used (let values are reached lazily)."""
    if isinstance(expr, Let):
        return (expr.body,)
    if isinstance(expr, Function):
        return (expr.body,)
    if isinstance(expr, Match):
        return (expr.data, *(c.rhs for c in expr.clauses))
    return _effect_children(expr)


def count_uses(expr, purity: _Purity = None) -> dict:
    """{let-bound Var: number of live uses}; a dead binding's value contributes nothing."""
    counts = defaultdict(int)
    let_value = {}
    seen, stack = set(), [expr]

    def use(v):
        counts[v] += 1
        if counts[v] == 1 and v in let_value:
            stack.append(let_value.pop(v))

    if isinstance(expr, Var):
        use(expr)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, Let):
            if counts[node.var] > 0 or (purity is not None and purity.is_impure(node.value)):
                stack.append(node.value)  # recursive use already seen, or kept for its effect
            else:
                let_value[node.var] = node.value
        for child in _use_children(node):
            if isinstance(child, Var):
                use(child)
            elif child not in seen:
                stack.append(child)
    return counts


class _Eliminator(LetChainMutator):
    def __init__(self, counts, purity, inline_once: bool):
        super().__init__()
        self.counts = counts
        self.purity = purity
        self.inline_once = inline_once

    def bind_let(self, let):
        uses = self.counts.get(let.var, 0)
        keep_for_effect = self.purity is not None and self.purity.is_impure(let.value)
        if uses == 0 and not keep_for_effect:
            self._bound[let] = None  # dead: drop without visiting the value
        elif uses == 1 and self.inline_once and not keep_for_effect and not _is_recursive(let):
            self.memo_map[let.var] = self.visit(let.value)  # uses now see the value
            self._bound[let] = None
        else:
            super().bind_let(let)

    def rebuild_let(self, let, body):
        if self._bound.get(let, ()) is None:
            del self._bound[let]
            return body
        return super().rebuild_let(let, body)


def _is_recursive(let) -> bool:
    """A let-bound function that refers to its own variable cannot be inlined."""
    return isinstance(let.value, Function) and any(
        n is let.var for n in all_nodes_post_order(let.value))


def dead_code_elimination(expr, inline_once: bool = False, ignore_impurity: bool = False):
    """The DCE rewrite of one expression (used by the pass; handy on its own in tests)."""
    purity = None if ignore_impurity else _Purity()
    counts = count_uses(expr, purity)
    return _Eliminator(counts, purity, inline_once).visit(expr)


def DeadCodeElimination(inline_once: bool = False, ignore_impurity: bool = False):  # noqa: N802
    """Function pass (opt_level 1): remove let bindings whose variable is never used.

    Parameters
    ----------
    inline_once : bool, optional
        If True, also inline bindings used exactly once. Defaults to False.
    ignore_impurity : bool, optional
        If True, remove unused bindings even when their value may have effects (reference
        writes); if False (the default), such bindings stay.

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """

    def transform(func, mod, ctx):
        return dead_code_elimination(func, inline_once, ignore_impurity)

    return function_pass(transform, opt_level=1, name="DeadCodeElimination")


# --- module-level reachability -------------------------------------------------------------------
def reachable_functions(mod: IRModule, entry_functions) -> set:
    """GlobalVars of `mod` reachable from the named entries through GlobalVar references."""
    todo = [mod.get_global_var(name) for name in entry_functions if name in mod]
    reached = set(todo)
    while todo:
        gv = todo.pop()
        for node in all_nodes_post_order(mod[gv]):
            if isinstance(node, GlobalVar) and node not in reached and node in mod:
                reached.add(node)
                todo.append(node)
    return reached


def RemoveUnusedFunctions(entry_functions=None):  # noqa: N802 - tvm.relay naming
    """Module pass (opt_level 1): drop the global functions unreachable from the entry
    functions.

    Parameters
    ----------
    entry_functions : list of str, optional
        The names of the functions to keep with everything they reach; None (the default)
        means ["main"].

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """
    entries = list(entry_functions) if entry_functions is not None else ["main"]

    def transform(mod: IRModule, ctx) -> IRModule:
        keep = reachable_functions(mod, entries)
        if len(keep) == len(mod.functions):
            return mod
        new_mod = mod.copy()
        for gv in list(mod.functions):
            if gv not in keep:
                del new_mod[gv]
        return new_mod

    return module_pass(transform, opt_level=1, name="RemoveUnusedFunctions")


__all__ = ["DeadCodeElimination", "RemoveUnusedFunctions", "dead_code_elimination", "count_uses"]
