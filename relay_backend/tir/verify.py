"""The PrimFunc verifier: every used variable and buffer is bound, every access has one index
per buffer dimension, and dtypes are consistent (int indices, bool conditions, stores of
the buffer's dtype). Run after lowering and in tests; `verify` raises CompileError listing
every problem, `verify_errors` returns them.
"""
from ..errors import CompileError
from . import expr as E
from . import stmt as S
from .functor import walk


def verify_errors(func):
    """A list of problems (strings) found in `func`; empty when well formed."""
    errors = []
    scope = {id(b.data) for b in func.params}
    scope |= {id(v) for v in func.shape_vars}
    buffers = {id(b.data) for b in func.params}
    names = [b.name for b in func.params]
    if len(set(names)) != len(names):
        errors.append(f"duplicate parameter names {names}")
    _check_stmt(func.body, scope, buffers, errors)
    return errors


def verify(func):
    """Raise CompileError if `func` is not well formed; return it otherwise."""
    errors = verify_errors(func)
    if errors:
        shown = "\n  ".join(errors[:20])
        more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
        raise CompileError(f"PrimFunc {func.name} is ill-formed:\n  {shown}{more}")
    return func


def _check_access(buffer, indices, buffers, where, errors):
    if id(buffer.data) not in buffers:
        errors.append(f"{where}: buffer {buffer.name} is neither a parameter nor allocated here")
    if len(indices) != buffer.ndim:
        errors.append(f"{where}: buffer {buffer.name} has rank {buffer.ndim} but is accessed "
                      f"with {len(indices)} indices")
    for i in indices:
        if not E.is_int_dtype(i.dtype):
            errors.append(f"{where}: index `{i}` of {buffer.name} has dtype {i.dtype}")


def _check_expr(e, scope, buffers, where, errors):
    let_bound = {id(n.var) for n in walk(e) if isinstance(n, E.Let)}
    for n in walk(e):
        if isinstance(n, E.Var):
            if id(n) not in scope and id(n) not in let_bound:
                errors.append(f"{where}: variable {n.name} is used but not bound "
                              "(bind it with a loop, a LetStmt or a shape dimension)")
        elif isinstance(n, E.BufferLoad):
            _check_access(n.buffer, n.indices, buffers, where, errors)
        elif isinstance(n, (E.ProducerLoad, E.Reduce)):
            errors.append(f"{where}: te-level node {type(n).__name__} `{n}` survived lowering")
        elif isinstance(n, (E.And, E.Or)):
            if n.a.dtype != "bool" or n.b.dtype != "bool":
                errors.append(f"{where}: {type(n).__name__} of non-bool operands in `{n}`")
        elif isinstance(n, E.BinaryOp):
            if n.a.dtype != n.b.dtype:
                errors.append(f"{where}: operand dtypes differ ({n.a.dtype} vs {n.b.dtype}) "
                              f"in `{n}`")
        elif isinstance(n, E.Select):
            if n.condition.dtype != "bool":
                errors.append(f"{where}: Select condition `{n.condition}` is not bool")


def _check_stmt(s, scope, buffers, errors):
    stack = [(s, scope, buffers)]
    while stack:
        s, scope, buffers = stack.pop()
        if isinstance(s, S.SeqStmt):
            stack.extend((x, scope, buffers) for x in reversed(s.seq))
        elif isinstance(s, S.For):
            where = f"for {s.loop_var.name}"
            for e in (s.min, s.extent):
                _check_expr(e, scope, buffers, where, errors)
                if not E.is_int_dtype(e.dtype):
                    errors.append(f"{where}: bound `{e}` has dtype {e.dtype}")
            if id(s.loop_var) in scope:
                errors.append(f"{where}: loop variable {s.loop_var.name} is already bound")
            stack.append((s.body, scope | {id(s.loop_var)}, buffers))
        elif isinstance(s, S.BufferStore):
            where = f"store to {s.buffer.name}"
            _check_expr(s.value, scope, buffers, where, errors)
            for i in s.indices:
                _check_expr(i, scope, buffers, where, errors)
            _check_access(s.buffer, s.indices, buffers, where, errors)
            if s.value.dtype != s.buffer.dtype:
                errors.append(f"{where}: value `{s.value}` has dtype {s.value.dtype}, buffer "
                              f"has {s.buffer.dtype}")
        elif isinstance(s, S.IfThenElse):
            _check_expr(s.condition, scope, buffers, "if", errors)
            if s.condition.dtype != "bool":
                errors.append(f"if: condition `{s.condition}` has dtype {s.condition.dtype}")
            stack.append((s.then_case, scope, buffers))
            if s.else_case is not None:
                stack.append((s.else_case, scope, buffers))
        elif isinstance(s, S.LetStmt):
            _check_expr(s.value, scope, buffers, f"let {s.var.name}", errors)
            stack.append((s.body, scope | {id(s.var)}, buffers))
        elif isinstance(s, S.Allocate):
            for d in s.buffer.shape:
                _check_expr(d, scope, buffers, f"allocate {s.buffer.name}", errors)
            stack.append((s.body, scope | {id(s.buffer.data)}, buffers | {id(s.buffer.data)}))
        elif isinstance(s, S.ThreadAllReduce):
            for x in s.sources:
                _check_expr(x, scope, buffers, f"allreduce over {s.thread_tag}", errors)
            stack.append((s.body, scope | {id(v) for v in s.result_vars}, buffers))
        elif isinstance(s, S.Evaluate):
            _check_expr(s.value, scope, buffers, "evaluate", errors)
        else:
            errors.append(f"unknown statement {type(s).__name__}")
