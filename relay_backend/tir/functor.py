"""Generic, iterative traversals of tir nodes driven by each class's `_fields`.

`walk` visits every node pre-order (`stored_buffers`: the buffers its statements write);
`rewrite` rebuilds a tree bottom-up through a callback; `substitute` replaces Vars. All use
explicit stacks, so a 10,000-deep expression is fine.
"""
from .expr import PrimExpr, Var
from .stmt import BufferStore, Stmt

_NODE_TYPES = (PrimExpr, Stmt)


def _is_node(x):
    return isinstance(x, _NODE_TYPES)


def children(node):
    """The direct child nodes of `node`, in `_fields` order (the hottest function of code
    generation: the node test is inlined)."""
    out = []
    for name in node._fields:
        value = getattr(node, name)
        if isinstance(value, tuple):
            out.extend([v for v in value if isinstance(v, _NODE_TYPES)])
        elif isinstance(value, _NODE_TYPES):
            out.append(value)
    return out


def mentions(node, var) -> bool:
    """Whether `var` (a node, by identity) occurs in `node`; a leaf is answered without a walk
    (most indices are a constant or a single variable)."""
    if node is var:
        return True
    if not node._fields:
        return False
    return any(n is var for n in walk(node))


def walk(node, stop=None):
    """Yield `node` and every node below it, pre-order (shared nodes once); below a node for
    which `stop(node)` is true nothing is visited."""
    seen = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        if stop is None or not stop(n):
            stack.extend(reversed(children(n)))


def stored_buffers(node) -> set:
    """id(buffer.data) of every buffer a BufferStore under statement `node` writes: tir writes
    memory only by BufferStore, and expressions hold no statements, so the walk stays out of
    them (an unrolled kernel's expressions are most of its nodes)."""
    return {id(n.buffer.data) for n in walk(node, stop=lambda n: isinstance(n, PrimExpr))
            if isinstance(n, BufferStore)}


def _all_slots(cls):
    slots = []
    for klass in reversed(cls.__mro__):
        for s in klass.__dict__.get("__slots__", ()):
            if s not in slots:
                slots.append(s)
    return slots


_SLOTS = {}


def copy_with(node, **changes):
    """A shallow copy of `node` with some fields replaced (no validation re-run)."""
    cls = type(node)
    slots = _SLOTS.get(cls)
    if slots is None:
        slots = _SLOTS[cls] = _all_slots(cls)
    new = object.__new__(cls)
    for s in slots:
        if hasattr(node, s):
            object.__setattr__(new, s, changes.get(s, getattr(node, s)))
    for k, v in changes.items():
        if k not in slots:
            raise AttributeError(f"{cls.__name__} has no field {k}")
    return new


def rewrite(node, fn, memo=None, replace_by_child=None):
    """Rebuild `node` bottom-up: children first, then `fn(rebuilt)` (None keeps it).

    Shared subtrees are rewritten once (memo by id). `replace_by_child(n)`, when given, is
    asked top-down before `n`'s children are visited: a returned child stands for `n` (its
    rewrite becomes `n`'s, `fn` is not called on `n`) and `n`'s other children are never
    visited, so a pass that prunes branches skips the subtrees it drops.
    """
    memo = {} if memo is None else memo
    chosen = {}
    stack = [(node, False)]
    while stack:
        n, ready = stack.pop()
        if id(n) in memo:
            continue
        if not ready:
            if replace_by_child is not None and id(n) not in chosen:
                chosen[id(n)] = replace_by_child(n)
            stack.append((n, True))
            child = chosen.get(id(n))
            kids = children(n) if child is None else (child,)
            stack.extend((c, False) for c in kids if id(c) not in memo)
            continue
        child = chosen.get(id(n))
        if child is not None:
            memo[id(n)] = memo[id(child)]
            continue
        changes = {}
        for name in n._fields:
            value = getattr(n, name)
            if isinstance(value, tuple):
                new = tuple(memo[id(v)] if _is_node(v) else v for v in value)
                if any(a is not b for a, b in zip(new, value)):
                    changes[name] = new
            elif _is_node(value):
                if memo[id(value)] is not value:
                    changes[name] = memo[id(value)]
        rebuilt = copy_with(n, **changes) if changes else n
        out = fn(rebuilt)
        memo[id(n)] = rebuilt if out is None else out
    return memo[id(node)]


def var_dependence(roots, var) -> tuple:
    """(ids of the nodes under `roots` whose value depends on `var`, every node visited in
    post-order, each once) by one iterative walk: a node's children are listed once and kept on
    the stack until the node is finished. The loop vectorizer and the unroller use it to tell
    the subtrees that vary with a loop variable from those that do not."""
    varying, done, order = set(), set(), []
    stack = [(root, None) for root in roots]
    while stack:
        node, kids = stack.pop()
        key = id(node)
        if key in done:
            continue
        if kids is None:
            if not node._fields:                 # a leaf: varying when it is the variable
                done.add(key)
                order.append(node)
                if node is var:
                    varying.add(key)
                continue
            kids = children(node)
            stack.append((node, kids))
            stack.extend([(k, None) for k in kids if id(k) not in done])
            continue
        done.add(key)
        order.append(node)
        if node is var:
            varying.add(key)
            continue
        for kid in kids:
            if id(kid) in varying:
                varying.add(key)
                break
    return varying, order


def substitute(node, vmap):
    """Replace Vars by the expressions in `vmap` (keyed by Var or by id(Var))."""
    if not vmap:
        return node
    by_id = {(id(k) if isinstance(k, Var) else k): v for k, v in vmap.items()}

    def fn(n):
        if isinstance(n, Var):
            return by_id.get(id(n))
        return None
    return rewrite(node, fn)


def uses_var(node, pred) -> bool:
    """Whether some Var below `node` satisfies `pred`."""
    return any(isinstance(n, Var) and pred(n) for n in walk(node))
