"""Readable, Python-like text of tir expressions, statements and PrimFuncs.

Loops print as `for i in range(0, 16):` with their kind (`parallel(...)`, `vectorized(...)`,
`unrolled(...)`, `thread("blockIdx.x", ...)`); stores as `B[i, j] = ...`. Expressions are
rendered bottom-up with an explicit stack, so deep expressions print without recursion.
"""
from . import expr as E
from . import stmt as S
from .functor import children

_INDENT = "  "


def _leaf(e):
    if isinstance(e, E.IntImm):
        if e.dtype == "bool":
            return "True" if e.value else "False"
        return str(e.value) if e.dtype == "int32" else f"{e.dtype}({e.value})"
    if isinstance(e, E.FloatImm):
        text = repr(e.value) if e.value == e.value and abs(e.value) != float("inf") else \
            f"float({str(e.value)!r})"
        return text if e.dtype == "float32" else f"{e.dtype}({text})"
    if isinstance(e, E.StringImm):
        return repr(e.value)
    if isinstance(e, E.Var):
        return e.name
    return None


def _combine(e, s):
    """Text of `e` given the texts `s` of its children (in `children` order)."""
    if isinstance(e, (E.Min, E.Max)):
        return f"{e.symbol}({s[0]}, {s[1]})"
    if isinstance(e, E.Mod):
        return f"truncmod({s[0]}, {s[1]})"
    if isinstance(e, E.BinaryOp):
        return f"({s[0]} {e.symbol} {s[1]})"
    if isinstance(e, E.Not):
        return f"not {s[0]}"
    if isinstance(e, E.Select):
        return f"select({s[0]}, {s[1]}, {s[2]})"
    if isinstance(e, E.Cast):
        return f"{e.dtype}({s[0]})"
    if isinstance(e, E.Call):
        return f"{e.op_name}({', '.join(s)})"
    if isinstance(e, E.BufferLoad):
        return f"{e.buffer.name}[{', '.join(s)}]"
    if isinstance(e, E.ProducerLoad):
        return f"{getattr(e.producer, 'name', 'tensor')}[{', '.join(s)}]"
    if isinstance(e, E.Let):
        return f"let({s[0]} = {s[1]} in {s[2]})"
    if isinstance(e, E.Reduce):
        axes = ", ".join(iv.var.name for iv in e.axis)
        src = ", ".join(s[:len(e.source)])
        return f"{e.combiner.name}({src}, axis=[{axes}], where={s[-1]})[{e.value_index}]"
    return f"<{type(e).__name__}>"


def expr_to_str(e) -> str:
    """The text of one expression."""
    memo = {}
    stack = [(e, False)]
    while stack:
        n, ready = stack.pop()
        if id(n) in memo:
            continue
        leaf = _leaf(n)
        if leaf is not None:
            memo[id(n)] = leaf
            continue
        kids = children(n)
        if not ready:
            stack.append((n, True))
            stack.extend((c, False) for c in kids if id(c) not in memo)
            continue
        memo[id(n)] = _combine(n, [memo[id(c)] for c in kids])
    return memo[id(e)]


def _loop_header(f):
    rng = f"{expr_to_str(f.min)}, {expr_to_str(f.extent)}"
    v = f.loop_var.name
    if f.thread_binding:
        return f"for {v} in thread({f.thread_binding!r}, {rng}):"
    if f.kind == "serial":
        return f"for {v} in range({rng}):"
    return f"for {v} in {f.kind}({rng}):"


def _lines(s, depth, out):
    pad = _INDENT * depth
    if isinstance(s, S.SeqStmt):
        for sub in s.seq:
            _lines(sub, depth, out)
    elif isinstance(s, S.For):
        out.append(pad + _loop_header(s))
        _lines(s.body, depth + 1, out)
    elif isinstance(s, S.BufferStore):
        idx = ", ".join(expr_to_str(i) for i in s.indices)
        out.append(f"{pad}{s.buffer.name}[{idx}] = {expr_to_str(s.value)}")
    elif isinstance(s, S.Allocate):
        b = s.buffer
        shape = ", ".join(expr_to_str(d) for d in b.shape)
        out.append(f"{pad}{b.name} = allocate(({shape}), {b.dtype!r}, scope={s.scope!r})")
        _lines(s.body, depth, out)
    elif isinstance(s, S.IfThenElse):
        out.append(f"{pad}if {expr_to_str(s.condition)}:")
        _lines(s.then_case, depth + 1, out)
        if s.else_case is not None:
            out.append(f"{pad}else:")
            _lines(s.else_case, depth + 1, out)
    elif isinstance(s, S.LetStmt):
        out.append(f"{pad}{s.var.name} = {expr_to_str(s.value)}")
        _lines(s.body, depth, out)
    elif isinstance(s, S.ThreadAllReduce):
        names = ", ".join(v.name for v in s.result_vars)
        values = ", ".join(expr_to_str(x) for x in s.sources)
        out.append(f"{pad}{names} = allreduce_{s.combiner.name}({values}) over {s.thread_tag}:")
        _lines(s.body, depth + 1, out)
    elif isinstance(s, S.Evaluate):
        out.append(f"{pad}{'pass' if S.is_no_op(s) else expr_to_str(s.value)}")
    else:
        out.append(f"{pad}<{type(s).__name__}>")


def stmt_to_str(s, depth=0) -> str:
    """The text of a statement, indented `depth` levels."""
    out = []
    _lines(s, depth, out)
    return "\n".join(out)


def func_to_str(f) -> str:
    """The text of a PrimFunc: a signature line, the shape vars, then the body."""
    params = []
    for b in f.params:
        shape = ", ".join(expr_to_str(d) for d in b.shape)
        shape += "," if len(b.shape) == 1 else ""
        params.append(f"{b.name}: Buffer(({shape}), {b.dtype!r})")
    lines = [f"@prim_func\ndef {f.name}({', '.join(params)}):"]
    if f.shape_vars:
        lines.append(_INDENT + "# shape vars: " + ", ".join(v.name for v in f.shape_vars))
    body = stmt_to_str(f.body, 1)
    lines.append(body)
    return "\n".join(lines)
