"""Graph-form sharing: where a sub-expression used from several scopes is computed, once.

A Relay program is a DAG, not a tree: `e = If(c, e + 1, e)` uses `e` from both branches. A
consumer that handles each branch on its own (the printer printing a block, the VM compiling a
branch) repeats a shared node once per path to it, so 18 such Ifs cost 2**18 copies. Relay binds
each shared sub-expression once, in the innermost scope holding all its uses (ToANormalForm's
placement, the text printer's `%N = ...`). `plan_sharing(root)` computes that placement and says,
for each scope-opening node, which shared nodes must be bound just before it, so every scope
inside finds them bound.

Scopes: each If branch, Match clause and Function body is one, and so is the content (value and
body) of a Let used inside an expression. A let chain (`let %a = ..; let %b = ..; body`) stays in
the scope it heads, as the printer and the VM lay it out. Atoms (variables, constants, ops,
globals, constructors) print and load anywhere, so they are never placed.

A node that reads a variable is used only where the variable is bound (well-formedness), so the
innermost scope of its uses never lies outside the variable's scope.
"""
from dataclasses import dataclass, field

from .adt import Constructor, Match
from .expr import Call, Constant, Function, GlobalVar, If, Let, Op, Var
from .functor import dataflow_children

# How a node uses a child: in its own scope, as the root of a new scope, or as a let's parts.
OPERAND, SCOPE_ROOT, LET_VALUE, LET_BODY = range(4)
ATOMS = (Var, GlobalVar, Constant, Op, Constructor)


def scoped_children(e, enter_functions: bool = True) -> tuple:
    """(child, role) for each sub-expression of `e`: OPERAND, SCOPE_ROOT (a branch, a clause, a
    function body), LET_VALUE or LET_BODY. Function bodies only when `enter_functions`."""
    if isinstance(e, Let):
        return ((e.value, LET_VALUE), (e.body, LET_BODY))
    if isinstance(e, If):
        return ((e.cond, OPERAND), (e.true_branch, SCOPE_ROOT), (e.false_branch, SCOPE_ROOT))
    if isinstance(e, Match):
        return ((e.data, OPERAND), *((c.rhs, SCOPE_ROOT) for c in e.clauses))
    if isinstance(e, Function):
        return ((e.body, SCOPE_ROOT),) if enter_functions else ()
    if isinstance(e, Call):
        return (*((a, OPERAND) for a in e.args), (e.op, OPERAND))
    return tuple((k, OPERAND) for k in dataflow_children(e))


class _Scope:
    """A scope of the tree: `jumps[i]` is its ancestor 2**i levels up (binary lifting), so the
    common scope of two uses costs O(log depth) even when thousands of Ifs nest."""

    __slots__ = ("parent", "depth", "opener", "jumps")

    def __init__(self, parent, opener):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.opener = opener     # the node whose branch / clause / body / let content this is
        self.jumps = []
        up = parent
        while up is not None:    # jumps[i + 1] is jumps[i]'s own jump i: 2**i + 2**i levels
            self.jumps.append(up)
            i = len(self.jumps) - 1
            up = up.jumps[i] if i < len(up.jumps) else None


def _ancestor_at(scope: _Scope, depth: int) -> _Scope:
    """The ancestor of `scope` (or itself) at `depth` <= scope.depth."""
    climb, i = scope.depth - depth, 0
    while climb:
        if climb & 1:
            scope = scope.jumps[i]
        climb >>= 1
        i += 1
    return scope


def _common_scope(a: _Scope, b: _Scope) -> _Scope:
    a, b = _ancestor_at(a, min(a.depth, b.depth)), _ancestor_at(b, min(a.depth, b.depth))
    if a is b:
        return a
    for i in reversed(range(len(a.jumps))):   # a and b stay distinct, at equal depth
        if i < len(a.jumps) and a.jumps[i] is not b.jumps[i]:
            a, b = a.jumps[i], b.jumps[i]
    return a.parent


@dataclass
class SharingPlan:
    """Where shared nodes are bound. `uses[e]`: how many edges of the program lead to the
    non-atomic node e; `before[opener]`: shared nodes to bind just before `opener`, children first;
    `let_chains`: the Lets laid out flat in the scope they continue (not opening one)."""

    uses: dict = field(default_factory=dict)
    before: dict = field(default_factory=dict)
    let_chains: set = field(default_factory=set)

    def is_shared(self, e) -> bool:
        """Used more than once (so it needs a binding of its own wherever it is placed)."""
        return self.uses.get(e, 0) > 1

    def hoisted(self, opener) -> list:
        """The shared nodes to bind just before `opener` (in the scope `opener` sits in)."""
        return self.before.get(opener, ())


def _post_order_with_uses(root, children):
    """(non-atomic nodes children-first, use counts, nodes reached as a scope's first let)."""
    order, uses, heads, expanded = [], {root: 0}, set(), set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in expanded:     # reached again while waiting lower on the stack
            continue
        expanded.add(node)
        stack.append((node, True))
        for child, role in reversed(children(node)):
            if isinstance(child, ATOMS):
                continue
            if role in (SCOPE_ROOT, LET_BODY):
                heads.add(child)
            uses[child] = uses.get(child, 0) + 1
            if child not in expanded:
                stack.append((child, False))
    return order, uses, heads


def plan_sharing(root, children=scoped_children) -> SharingPlan:
    """Place every shared non-atomic node of `root` in the innermost scope holding its uses.

    `children(e)` gives (child, role) pairs (default `scoped_children`); a consumer that never
    enters some sub-expressions (the VM skips primitive function bodies) passes its own."""
    order, uses, heads = _post_order_with_uses(root, children)
    plan = SharingPlan(uses=uses)
    rank = {node: i for i, node in enumerate(order)}
    use_scopes = {root: [_Scope(None, None)]}
    before = {}
    for node in reversed(order):                 # parents before children: a topological order
        scopes = list({id(s): s for s in use_scopes.pop(node)}.values())
        place = scopes[0]
        for s in scopes[1:]:
            place = _common_scope(place, s)
        for s in scopes:                         # a use in a scope inside `place`: bind
            if s is not place:                   # before the opener of the scope it is in
                before.setdefault(_ancestor_at(s, place.depth + 1).opener, {})[node] = None
        content = place
        if isinstance(node, Let):
            if node is root or (uses[node] == 1 and node in heads):
                plan.let_chains.add(node)
            else:
                content = _Scope(place, node)
        for child, role in children(node):
            if isinstance(child, ATOMS):
                continue
            scope = _Scope(place, node) if role == SCOPE_ROOT else \
                content if role in (LET_VALUE, LET_BODY) else place
            use_scopes.setdefault(child, []).append(scope)
    plan.before = {opener: sorted(nodes, key=rank.__getitem__) for opener, nodes in before.items()}
    return plan


__all__ = ["plan_sharing", "scoped_children", "SharingPlan", "OPERAND", "SCOPE_ROOT", "LET_VALUE",
           "LET_BODY", "ATOMS"]
