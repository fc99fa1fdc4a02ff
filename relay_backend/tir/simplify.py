"""The arithmetic simplifier: constant folding, identities, linear index canonicalization
and range-aware rules for the index math that loop splitting and fusion produce.

Rules, applied bottom-up (children first):
* constants fold (`2 * 3` -> 6, `3 < 4` -> True); `x + 0`, `x * 1`, `x - 0`, `x // 1` -> x,
  `x * 0` -> 0 and `x % 1` -> 0 for integers;
* integer sums are put in a canonical linear form (`(i * 4 + 3) + 5 - i * 4` -> 8), which
  merges nested constant adds and cancels terms;
* `(q * c + r) // c` -> `q + r // c` and `(q * c + r) % c` -> `r % c` (exact for floor
  semantics), then `r // c` -> 0 and `r % c` -> r when 0 <= r < c is known from loop ranges;
* comparisons, min and max are decided when the operands' ranges do not overlap, which removes
  the guards of evenly dividing splits (and `x % n < n`, `x % n >= 0` for a size variable n,
  the guards of splits over symbolic extents); a Select or IfThenElse on a constant keeps one side;
* a loop of extent 1 is replaced by its body with the loop var set to the loop min.
Variable ranges come from enclosing For loops (and SizeVar >= 0); everything else is unknown.
"""
from . import expr as E
from . import stmt as S
from .functor import rewrite, substitute
from .prim_func import PrimFunc

_INT_OPS = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.FloorDiv: lambda a, b: a // b, E.FloorMod: lambda a, b: a % b,
    E.Min: min, E.Max: max,
}
_CMP = {E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b, E.LT: lambda a, b: a < b,
        E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b, E.GE: lambda a, b: a >= b}


def _is_const(e, value=None):
    return isinstance(e, (E.IntImm, E.FloatImm)) and (value is None or e.value == value)


def _is_int(e):
    return E.is_int_dtype(e.dtype)


# --- constant bounds ----------------------------------------------------------------------

def const_bound(e, ranges):
    """Inclusive integer bounds (lo, hi) of `e` given var ranges; None where unknown."""
    memo = {}
    stack = [(e, False)]
    while stack:
        n, ready = stack.pop()
        if id(n) in memo:
            continue
        kids = [getattr(n, f) for f in n._fields if isinstance(getattr(n, f), E.PrimExpr)]
        if not ready and kids and not isinstance(n, (E.BufferLoad, E.Call, E.Let)):
            stack.append((n, True))
            stack.extend((c, False) for c in kids)
            continue
        memo[id(n)] = _bound_node(n, [memo.get(id(c), (None, None)) for c in kids], ranges)
    return memo[id(e)]


def _bound_node(n, kb, ranges):
    if isinstance(n, E.IntImm):
        return (int(n.value), int(n.value))
    if isinstance(n, E.Var):
        if id(n) in ranges:
            return ranges[id(n)]
        return (0, None) if isinstance(n, E.SizeVar) else (None, None)
    if not _is_int(n) or len(kb) == 0:
        return (None, None)
    if isinstance(n, E.Cast):
        return kb[0] if _is_int(n.value) else (None, None)
    if isinstance(n, E.Select):
        (l1, h1), (l2, h2) = kb[1], kb[2]
        return (None if l1 is None or l2 is None else min(l1, l2),
                None if h1 is None or h2 is None else max(h1, h2))
    if len(kb) != 2:
        return (None, None)
    (al, ah), (bl, bh) = kb
    if isinstance(n, E.Add):
        return (_opt(al, bl, int.__add__), _opt(ah, bh, int.__add__))
    if isinstance(n, E.Sub):
        return (_opt(al, bh, int.__sub__), _opt(ah, bl, int.__sub__))
    if isinstance(n, E.Mul):
        if None in (al, ah, bl, bh):
            if bl is not None and bl == bh and bl >= 0:
                return (_opt(al, bl, int.__mul__), _opt(ah, bl, int.__mul__))
            return (None, None)
        corners = [al * bl, al * bh, ah * bl, ah * bh]
        return (min(corners), max(corners))
    if isinstance(n, (E.FloorDiv, E.FloorMod)) and bl is not None and bl == bh and bl > 0:
        if isinstance(n, E.FloorDiv):
            return (None if al is None else al // bl, None if ah is None else ah // bl)
        if al is not None and ah is not None and 0 <= al and ah < bl:
            return (al, ah)
        return (0, bl - 1)
    if isinstance(n, E.FloorMod) and bl is not None and bl >= 0:
        # a non-negative divisor (a size variable): x % y is in [0, y - 1] (y = 0 is undefined)
        return (0, None if bh is None else bh - 1)
    if isinstance(n, E.Min):
        return (_opt(al, bl, min), None if ah is None and bh is None else
                min(x for x in (ah, bh) if x is not None))
    if isinstance(n, E.Max):
        return (None if al is None and bl is None else max(x for x in (al, bl) if x is not None),
                _opt(ah, bh, max))
    return (None, None)


def _opt(a, b, f):
    return None if a is None or b is None else f(a, b)


# --- linear forms -------------------------------------------------------------------------

def _key(e):
    """A structural key for a term (Vars by identity)."""
    if isinstance(e, E.Var):
        return ("var", id(e))
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return ("imm", e.dtype, e.value)
    parts = [type(e).__name__, e.dtype, getattr(e, "op_name", None)]
    if isinstance(e, E.BufferLoad):
        parts.append(id(e.buffer))
    for f in e._fields:
        v = getattr(e, f)
        parts.append(tuple(_key(x) for x in v) if isinstance(v, tuple) else
                     _key(v) if isinstance(v, E.PrimExpr) else v)
    return tuple(parts)


def term_key(e):
    """The key linear_form files term `e` under in its terms dict (Vars by identity)."""
    return _key(e)


def linear_form(e):
    """(terms, const): e == sum(coeff * term) + const, terms = {key: [term, coeff]}."""
    terms, const = {}, 0
    stack = [(e, 1)]
    while stack:
        n, k = stack.pop()
        if isinstance(n, E.IntImm) and n.dtype != "bool":
            const += k * n.value
        elif isinstance(n, E.Add):
            stack += [(n.b, k), (n.a, k)]
        elif isinstance(n, E.Sub):
            stack += [(n.b, -k), (n.a, k)]
        elif isinstance(n, E.Mul) and isinstance(n.b, E.IntImm):
            stack.append((n.a, k * n.b.value))
        elif isinstance(n, E.Mul) and isinstance(n.a, E.IntImm):
            stack.append((n.b, k * n.a.value))
        else:
            key = _key(n)
            if key in terms:
                terms[key][1] += k
            else:
                terms[key] = [n, k]
    return {key: tc for key, tc in terms.items() if tc[1] != 0}, const


def from_linear(terms, const, dtype):
    """Rebuild `sum(coeff * term) + const`, positive terms first, constant last."""
    ordered = sorted(terms.values(), key=lambda tc: tc[1] < 0)
    out = None
    for term, k in ordered:
        piece = term if abs(k) == 1 else E.Mul(term, E.IntImm(dtype, abs(k)))
        if out is None:
            out = piece if k > 0 else E.Sub(E.IntImm(dtype, 0), piece)
        else:
            out = E.Add(out, piece) if k > 0 else E.Sub(out, piece)
    if out is None:
        return E.IntImm(dtype, const)
    if const > 0:
        return E.Add(out, E.IntImm(dtype, const))
    if const < 0:
        return E.Sub(out, E.IntImm(dtype, -const))
    return out


# --- the rewrite rules --------------------------------------------------------------------

def _fold(n):
    a, b = n.a, n.b
    if isinstance(n, (E.And, E.Or)):
        return E.IntImm("bool", (a.value and b.value) if isinstance(n, E.And) else
                        (a.value or b.value))
    if type(n) in _CMP:
        return E.IntImm("bool", _CMP[type(n)](a.value, b.value))
    if E.is_float_dtype(n.dtype):
        if isinstance(n, E.Div):
            return E.FloatImm(n.dtype, a.value / b.value) if b.value != 0 else None
        if isinstance(n, (E.FloorDiv, E.FloorMod, E.Mod)):
            return None
        return E.FloatImm(n.dtype, _INT_OPS[type(n)](a.value, b.value))
    if isinstance(n, (E.FloorDiv, E.FloorMod, E.Div, E.Mod)) and b.value == 0:
        return None
    if isinstance(n, E.Div):
        q = abs(a.value) // abs(b.value)
        return E.IntImm(n.dtype, q if (a.value >= 0) == (b.value >= 0) else -q)
    if isinstance(n, E.Mod):
        q = abs(a.value) // abs(b.value)
        q = q if (a.value >= 0) == (b.value >= 0) else -q
        return E.IntImm(n.dtype, a.value - b.value * q)
    return E.IntImm(n.dtype, _INT_OPS[type(n)](a.value, b.value))


def _divmod_rule(n, ranges):
    c = n.b.value
    terms, const = linear_form(n.a)
    q_terms, r_terms = {}, {}
    for key, (t, k) in terms.items():
        (q_terms if k % c == 0 else r_terms)[key] = [t, k]
    q_const, r_const = divmod(const, c)
    r = from_linear(r_terms, r_const, n.dtype)
    lo, hi = const_bound(r, ranges)
    r_in_range = lo is not None and hi is not None and 0 <= lo and hi < c
    if isinstance(n, E.FloorMod):
        if r_in_range:
            return r
        if not q_terms and not q_const:
            return None if r_terms == terms else E.FloorMod(r, n.b)
        return E.FloorMod(r, n.b)
    q = from_linear({key: [t, k // c] for key, (t, k) in q_terms.items()}, q_const, n.dtype)
    if r_in_range:
        return q
    if not q_terms and not q_const:
        if lo is not None and hi is not None and lo // c == hi // c:
            return E.IntImm(n.dtype, lo // c)
        return None
    return _simplify_node(E.Add(q, E.FloorDiv(r, n.b)), ranges)


def fold_constant_node(n):
    """`n` with its operands' constants folded, for a node whose children are already folded:
    integer / bool arithmetic and comparisons of two constants, Not / And / Or of constants, a
    Select on a constant condition. None when nothing folds. The cheap subset of
    `_simplify_node` (no linear forms, no ranges), for code that only substituted constants
    into simplified tir (tir/unroll.py)."""
    if isinstance(n, E.BinaryOp):
        a, b = n.a, n.b
        if _is_const(a) and _is_const(b) and not E.is_float_dtype(a.dtype):
            return _fold(n)
        if isinstance(n, (E.And, E.Or)):
            for x, y in ((a, b), (b, a)):
                if _is_const(x):
                    return (y if x.value else x) if isinstance(n, E.And) else (x if x.value else y)
        return None
    if isinstance(n, E.Not) and _is_const(n.a):
        return E.IntImm("bool", not n.a.value)
    if isinstance(n, E.Select) and _is_const(n.condition):
        return n.true_value if n.condition.value else n.false_value
    return None


def _simplify_node(n, ranges):
    """One bottom-up step on a node whose children are already simplified."""
    if isinstance(n, E.BinaryOp):
        a, b = n.a, n.b
        if _is_const(a) and _is_const(b):
            folded = _fold(n)
            if folded is not None:
                return folded
        is_int = _is_int(a)
        if isinstance(n, (E.Add, E.Sub, E.Mul)) and is_int:
            if isinstance(n, E.Mul) and not (_is_const(a) or _is_const(b)):
                return n
            terms, const = linear_form(n)
            return from_linear(terms, const, n.dtype)
        if isinstance(n, E.Add) and _is_const(b, 0):
            return a
        if isinstance(n, E.Add) and _is_const(a, 0):
            return b
        if isinstance(n, E.Sub) and _is_const(b, 0):
            return a
        if isinstance(n, E.Mul) and _is_const(b, 1):
            return a
        if isinstance(n, E.Mul) and _is_const(a, 1):
            return b
        if isinstance(n, E.Div) and _is_const(b, 1):
            return a
        if isinstance(n, (E.FloorDiv, E.FloorMod)) and is_int and isinstance(b, E.IntImm) \
                and b.value > 0:
            if b.value == 1:
                return a if isinstance(n, E.FloorDiv) else E.IntImm(n.dtype, 0)
            return _divmod_rule(n, ranges)
        if isinstance(n, (E.Min, E.Max)):
            if a is b:
                return a
            if is_int:
                lo, hi = const_bound(_simplify_node(E.Sub(a, b), ranges), ranges)
                if hi is not None and hi <= 0:
                    return a if isinstance(n, E.Min) else b
                if lo is not None and lo >= 0:
                    return b if isinstance(n, E.Min) else a
            return n
        if type(n) in _CMP and is_int:
            lo, hi = const_bound(_simplify_node(E.Sub(a, b), ranges), ranges)
            decided = _decide(type(n), lo, hi)
            if decided is None:
                decided = _mod_below_divisor(n, ranges)
            return E.IntImm("bool", decided) if decided is not None else n
        if isinstance(n, E.And):
            for x, y in ((a, b), (b, a)):
                if _is_const(x):
                    return y if x.value else x
        if isinstance(n, E.Or):
            for x, y in ((a, b), (b, a)):
                if _is_const(x):
                    return x if x.value else y
        return n
    if isinstance(n, E.Not) and _is_const(n.a):
        return E.IntImm("bool", not n.a.value)
    if isinstance(n, E.Select):
        if _is_const(n.condition):
            return n.true_value if n.condition.value else n.false_value
        if n.true_value is n.false_value:
            return n.true_value
        return n
    if isinstance(n, E.Cast):
        if n.value.dtype == n.dtype:
            return n.value
        if _is_const(n.value):
            v = n.value.value
            if E.is_float_dtype(n.dtype):
                return E.FloatImm(n.dtype, float(v))
            return E.IntImm(n.dtype, bool(v) if n.dtype == "bool" else int(v))
    return n


def _mod_below_divisor(n, ranges):
    """Decide `a < b` / `a <= b` (or `b > a`, `b >= a`) by bounding each `x % y` term of a - b
    with a positive coefficient by y - 1, for a non-negative divisor y (a size variable: y = 0 is
    undefined). The guards of splits over symbolic extents need exactly this:
    `(f % q) * 8 + i < q * 8` for i in [0, 8) and `x % n < n`. Only proves True."""
    a, b, cmp = n.a, n.b, type(n)
    if cmp in (E.GT, E.GE):
        a, b, cmp = b, a, (E.LT if cmp is E.GT else E.LE)
    if cmp not in (E.LT, E.LE):
        return None
    terms, const = linear_form(E.Sub(a, b))
    bounded, changed = [], False
    for term, k in terms.values():
        if k > 0 and isinstance(term, E.FloorMod) and _non_negative(term.b, ranges):
            bounded.append((E.Sub(term.b, E.IntImm(term.dtype, 1)), k))
            changed = True
        else:
            bounded.append((term, k))
    if not changed:
        return None
    upper = E.IntImm(n.a.dtype, const)
    for term, k in bounded:
        upper = E.Add(upper, E.Mul(term, E.IntImm(n.a.dtype, k)))
    _, hi = const_bound(from_linear(*linear_form(upper), n.a.dtype), ranges)
    if hi is None:
        return None
    return True if (hi < 0 if cmp is E.LT else hi <= 0) else None


def _non_negative(e, ranges) -> bool:
    lo, _ = const_bound(e, ranges)
    return lo is not None and lo >= 0


def _decide(cmp, lo, hi):
    """The truth of `d cmp 0` for d in [lo, hi], or None when undecided."""
    if cmp is E.LT:
        return True if hi is not None and hi < 0 else False if lo is not None and lo >= 0 else None
    if cmp is E.LE:
        return True if hi is not None and hi <= 0 else False if lo is not None and lo > 0 else None
    if cmp is E.GT:
        return True if lo is not None and lo > 0 else False if hi is not None and hi <= 0 else None
    if cmp is E.GE:
        return True if lo is not None and lo >= 0 else False if hi is not None and hi < 0 else None
    if lo is not None and lo == hi:
        return (lo == 0) if cmp is E.EQ else (lo != 0)
    if (lo is not None and lo > 0) or (hi is not None and hi < 0):
        return cmp is E.NE
    return None


def simplify_expr(e, ranges=None):
    """Simplify one expression given {id(var): (lo, hi)} ranges."""
    ranges = ranges or {}
    return rewrite(e, lambda n: _simplify_node(n, ranges))


# --- statements ---------------------------------------------------------------------------

def _stmt(s, ranges):
    ex = lambda e: simplify_expr(e, ranges)  # noqa: E731
    if isinstance(s, S.SeqStmt):
        return S.seq(*[_stmt(x, ranges) for x in s.seq])
    if isinstance(s, S.For):
        lo, ext = ex(s.min), ex(s.extent)
        if _is_const(ext) and ext.value <= 0:
            return S.Evaluate(0)
        if _is_const(ext, 1) and s.thread_binding is None:
            return _stmt(substitute(s.body, {s.loop_var: lo}), ranges)
        lo_b, _ = const_bound(lo, ranges)
        lo_hi, ext_hi = const_bound(lo, ranges)[1], const_bound(ext, ranges)[1]
        inner = dict(ranges)
        inner[id(s.loop_var)] = (lo_b, None if lo_hi is None or ext_hi is None
                                 else lo_hi + ext_hi - 1)
        body = _stmt(s.body, inner)
        if S.is_no_op(body):
            return body
        return S.For(s.loop_var, lo, ext, s.kind, body, s.thread_binding, s.annotations)
    if isinstance(s, S.BufferStore):
        return S.BufferStore(s.buffer, ex(s.value), [ex(i) for i in s.indices])
    if isinstance(s, S.IfThenElse):
        cond = ex(s.condition)
        if _is_const(cond):
            chosen = s.then_case if cond.value else s.else_case
            return _stmt(chosen, ranges) if chosen is not None else S.Evaluate(0)
        then = _stmt(s.then_case, ranges)
        other = _stmt(s.else_case, ranges) if s.else_case is not None else None
        if other is not None and S.is_no_op(other):
            other = None
        if S.is_no_op(then) and other is None:
            return then
        return S.IfThenElse(cond, then, other)
    if isinstance(s, S.LetStmt):
        value = ex(s.value)
        inner = dict(ranges)
        inner[id(s.var)] = const_bound(value, ranges) if _is_int(value) else (None, None)
        return S.LetStmt(s.var, value, _stmt(s.body, inner))
    if isinstance(s, S.Allocate):
        return S.Allocate(s.buffer, _stmt(s.body, ranges), s.scope)
    if isinstance(s, S.ThreadAllReduce):
        return S.ThreadAllReduce(s.combiner, [ex(x) for x in s.sources], s.result_vars,
                                 _stmt(s.body, ranges), s.thread_tag)
    if isinstance(s, S.Evaluate):
        return S.Evaluate(ex(s.value))
    return s


def simplify(node, ranges=None):
    """Simplify a PrimExpr, a Stmt or a PrimFunc (shape vars are taken as >= 0)."""
    ranges = dict(ranges or {})
    if isinstance(node, PrimFunc):
        for v in node.shape_vars:
            ranges.setdefault(id(v), (0, None))
        return node.with_body(_stmt(node.body, ranges))
    if isinstance(node, S.Stmt):
        return _stmt(node, ranges)
    return simplify_expr(E.convert(node), ranges)
