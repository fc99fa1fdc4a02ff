"""Statements of the loop-nest IR.

Each class lists its children in `_fields` (statements and expressions, in evaluation
order) for the generic traversals in tir/functor.py.
"""
from ..errors import CompileError
from .expr import PrimExpr, Var, convert

FOR_KINDS = ("serial", "parallel", "vectorized", "unrolled")


class Stmt:
    """Base of statements."""
    __slots__ = ()
    _fields = ()

    def __repr__(self):
        from .printer import stmt_to_str
        return stmt_to_str(self)

    __str__ = __repr__


class For(Stmt):
    """for loop_var in range(min, min + extent): body.

    kind is one of FOR_KINDS. thread_binding, when set, is a GPU thread tag such as
    "blockIdx.x" / "threadIdx.x": the loop is executed by that thread index instead (CPU
    backends and the interpreter run it as a serial loop).
    """
    __slots__ = ("loop_var", "min", "extent", "kind", "body", "thread_binding", "annotations")
    _fields = ("min", "extent", "body")

    def __init__(self, loop_var: Var, min, extent, kind, body, thread_binding=None,
                 annotations=None):
        if kind not in FOR_KINDS:
            raise CompileError(f"For {loop_var.name}: unknown kind {kind!r}; "
                               f"use one of {FOR_KINDS}")
        self.loop_var = loop_var
        self.min = convert(min, loop_var.dtype)
        self.extent = convert(extent, loop_var.dtype)
        self.kind = kind
        self.body = body
        self.thread_binding = thread_binding
        self.annotations = dict(annotations or {})


class BufferStore(Stmt):
    """buffer[indices] = value."""
    __slots__ = ("buffer", "value", "indices")
    _fields = ("value", "indices")

    def __init__(self, buffer, value: PrimExpr, indices):
        value = convert(value, buffer.dtype)
        if value.dtype != buffer.dtype:
            raise CompileError(f"BufferStore into {buffer.name} ({buffer.dtype}) of a "
                               f"{value.dtype} value `{value}`; cast the value")
        self.buffer = buffer
        self.value = value
        self.indices = tuple(convert(i, "int32") for i in indices)


class Allocate(Stmt):
    """Allocate `buffer` (a temporary) for the duration of `body`; scope "global"/"local"."""
    __slots__ = ("buffer", "body", "scope")
    _fields = ("body",)

    def __init__(self, buffer, body, scope=None):
        self.buffer = buffer
        self.body = body
        self.scope = scope if scope is not None else buffer.scope


class IfThenElse(Stmt):
    """if condition: then_case else: else_case (else_case may be None)."""
    __slots__ = ("condition", "then_case", "else_case")
    _fields = ("condition", "then_case", "else_case")

    def __init__(self, condition: PrimExpr, then_case, else_case=None):
        condition = convert(condition, "bool")
        if condition.dtype != "bool":
            raise CompileError(f"IfThenElse: condition `{condition}` has dtype {condition.dtype}, "
                               "expected bool")
        self.condition = condition
        self.then_case = then_case
        self.else_case = else_case


class LetStmt(Stmt):
    """var = value; body."""
    __slots__ = ("var", "value", "body")
    _fields = ("value", "body")

    def __init__(self, var: Var, value: PrimExpr, body):
        self.var = var
        self.value = convert(value, var.dtype)
        self.body = body


class SeqStmt(Stmt):
    """Statements executed in order (`seq`, also readable as `stmts`)."""
    __slots__ = ("seq",)
    _fields = ("seq",)

    def __init__(self, seq):
        self.seq = tuple(seq)

    @property
    def stmts(self):
        return self.seq


class ThreadAllReduce(Stmt):
    """Combine `sources` (one value per thread of the GPU thread dimension `thread_tag`) with
    `combiner` across those threads; then run `body` with `result_vars` bound to the combined
    values (in CUDA by one thread of the dimension, after a shared-memory tree reduction).

    te lowering makes one where a reduction axis is bound to a thread (Stage.bind), so each
    thread accumulated a partial value. Serially (the tir interpreter) there is one thread: the
    results are the sources themselves.
    """
    __slots__ = ("combiner", "sources", "result_vars", "body", "thread_tag")
    _fields = ("sources", "body")

    def __init__(self, combiner, sources, result_vars, body, thread_tag: str):
        sources = tuple(convert(x) for x in sources)
        result_vars = tuple(result_vars)
        if len(sources) != len(combiner.result) or len(result_vars) != len(sources):
            raise CompileError(f"ThreadAllReduce: {len(sources)} sources and {len(result_vars)} "
                               f"results for a {len(combiner.result)}-value reducer")
        for x, v in zip(sources, result_vars):
            if x.dtype != v.dtype:
                raise CompileError(f"ThreadAllReduce: source `{x}` ({x.dtype}) bound to "
                                   f"{v.name} ({v.dtype})")
        self.combiner = combiner
        self.sources = sources
        self.result_vars = result_vars
        self.body = body
        self.thread_tag = thread_tag


class Evaluate(Stmt):
    """Evaluate an expression for its effect (Evaluate(0) is the no-op)."""
    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, value):
        self.value = convert(value, "int32")


def seq(*stmts) -> Stmt:
    """A SeqStmt of the non-no-op statements (flattening nested SeqStmts); one stays itself."""
    flat = []
    stack = list(reversed(stmts))
    while stack:
        s = stack.pop()
        if s is None or is_no_op(s):
            continue
        if isinstance(s, SeqStmt):
            stack.extend(reversed(s.seq))
        else:
            flat.append(s)
    if not flat:
        return Evaluate(0)
    return flat[0] if len(flat) == 1 else SeqStmt(flat)


def is_no_op(s) -> bool:
    from .expr import IntImm
    return isinstance(s, Evaluate) and isinstance(s.value, IntImm)
