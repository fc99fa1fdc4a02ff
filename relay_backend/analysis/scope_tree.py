"""The scope tree behind ToANormalForm and ToBasicBlockNormalForm (TVM's CalcScope).

A scope is where let bindings can be placed: the top level, a function body, each branch of an
If, each clause of a Match, and the value-and-body of each Let. Every expression is assigned the
innermost scope that contains all of its uses (the lowest common ancestor of the scopes its
parents use it in), so a value shared by both branches of an If is placed before the If and a
value used only inside a branch stays inside it. An expression is *lifted* when some use sits in
a deeper scope than the one it is assigned: basic block normal form must let-bind those.

The walk is iterative; `order` lists the expressions (and one LetBinding marker per Let, placed
between its value and its body) children first, the order the normal-form passes emit bindings
in. Primitive (fused) functions are leaves: their bodies are not scoped.
"""
from ..ir.adt import Constructor, Match
from ..ir.expr import (Call, Constant, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                       RefWrite, Tuple, TupleGetItem, Var)

ATOMS = (Var, GlobalVar, Op, Constructor)


class Scope:
    """A node of the scope tree; `is_let` marks the scope of one Let's value and body."""

    __slots__ = ("parent", "level", "is_let")

    def __init__(self, parent=None, is_let: bool = False):
        self.parent = parent
        self.level = 0 if parent is None else parent.level + 1
        self.is_let = is_let


def lca(a: Scope, b: Scope) -> Scope:
    """The innermost scope containing both `a` and `b`."""
    while a is not b:
        if a.level > b.level:
            a = a.parent
        elif b.level > a.level:
            b = b.parent
        else:
            a, b = a.parent, b.parent
    return a


class LetBinding:
    """Marks the moment a Let's variable is bound: after its value, before its body."""

    __slots__ = ("let",)

    def __init__(self, let: Let):
        self.let = let


def _children(item):
    """(child, slot) pairs; slot None means the parent's own scope, else a sub-scope key."""
    if isinstance(item, (LetBinding, Constant) + ATOMS):
        return ()
    if isinstance(item, Call):
        head = () if isinstance(item.op, (Op, Constructor)) else ((item.op, None),)
        return head + tuple((a, None) for a in item.args)
    if isinstance(item, Tuple):
        return tuple((f, None) for f in item.fields)
    if isinstance(item, TupleGetItem):
        return ((item.tuple_value, None),)
    if isinstance(item, RefCreate):
        return ((item.value, None),)
    if isinstance(item, RefRead):
        return ((item.ref, None),)
    if isinstance(item, RefWrite):
        return ((item.ref, None), (item.value, None))
    if isinstance(item, Function):
        return () if item.is_primitive else ((item.body, "body"),)
    if isinstance(item, If):
        return ((item.cond, None), (item.true_branch, "then"), (item.false_branch, "else"))
    if isinstance(item, Match):
        return ((item.data, None),) + tuple((c.rhs, i) for i, c in enumerate(item.clauses))
    raise TypeError(f"scope tree: unknown expression {type(item).__name__}")


class ScopeTree:
    """Scopes of every expression under `root` (see the module docstring)."""

    def __init__(self, root):
        self.root = root
        self.markers = {}           # Let -> LetBinding
        self.order = self._post_order(root)
        self.scope_of = {}          # expr -> Scope
        self.sub_scopes = {}        # (expr, slot) -> Scope
        self.uses = {}              # expr -> number of parent edges
        self.lifted = set()         # exprs with a use in a scope deeper than their own
        self._assign()

    def _post_order(self, root) -> list:
        order, seen, stack = [], set(), [(root, False)]
        while stack:
            item, expanded = stack.pop()
            if expanded:
                order.append(item)
                continue
            if item in seen:
                continue
            seen.add(item)
            stack.append((item, True))
            for child, _ in reversed(self._kids(item)):
                if child not in seen:
                    stack.append((child, False))
        return order

    def _kids(self, item):
        if isinstance(item, Let):
            marker = self.markers.get(item)
            if marker is None:
                marker = self.markers[item] = LetBinding(item)
            return ((item.value, "let"), (marker, "let"), (item.body, "let"))
        return _children(item)

    def _assign(self) -> None:
        top = Scope()
        self.scope_of[self.root] = top
        first_use = {}
        for item in reversed(self.order):          # parents before children
            scope = self.scope_of.get(item)
            if scope is None:                      # unreachable: the root is always first
                scope = self.scope_of[item] = top
            for child, slot in self._kids(item):
                if slot is None:
                    edge = scope
                else:
                    edge = self.sub_scopes.get((item, slot))
                    if edge is None:
                        edge = self.sub_scopes[(item, slot)] = Scope(scope, is_let=slot == "let")
                self.uses[child] = self.uses.get(child, 0) + 1
                known = self.scope_of.get(child)
                if known is None:
                    self.scope_of[child] = first_use[child] = edge
                else:   # uses in two different scopes: placed above one of them
                    if edge is not first_use[child]:
                        self.lifted.add(child)
                    self.scope_of[child] = lca(known, edge)

    def scope(self, expr) -> Scope:
        return self.scope_of[expr]

    def sub_scope(self, expr, slot) -> Scope:
        return self.sub_scopes[(expr, slot)]





def check_basic_block_normal_form(expr) -> bool:
    """True if no non-atomic expression is used in a scope deeper than the one it belongs to
    (tvm.relay.analysis.check_basic_block_normal_form); otherwise a RelayError names it."""
    from ..errors import RelayError
    from ..ir.excerpt import excerpt
    tree = ScopeTree(expr)
    for item in tree.order:
        if item in tree.lifted and not isinstance(item, ATOMS + (Constant, LetBinding)):
            raise RelayError(f"`{excerpt(item)}` violates basic block normal form: it is used in "
                             f"more than one scope and should be let-bound in the innermost "
                             f"scope enclosing its uses (run ToBasicBlockNormalForm)")
    return True

__all__ = ["ScopeTree", "Scope", "LetBinding", "lca", "ATOMS", "check_basic_block_normal_form"]
