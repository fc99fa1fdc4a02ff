"""ScopeBuilder: build nested Let / If expressions imperatively, as tvm.relay.ScopeBuilder does.

    sb = ScopeBuilder()
    t = sb.let("t", relay.add(x, y))
    with sb.if_scope(cond):
        sb.ret(t)
    with sb.else_scope():
        sb.ret(relay.negative(t))
    expr = sb.get()        # let %t = add(%x, %y); if (%cond) { %t } else { negative(%t) }
"""
from contextlib import contextmanager

from ..errors import RelayError
from .expr import Expr, If, Let, Var
from .types import IncompleteType


class ScopeError(RelayError, RuntimeError):
    """A ScopeBuilder was used out of order (tvm raises RuntimeError here, so this is one too)."""


def _make_lets(bindings, ret_value) -> Expr:
    """Wrap ret_value in the scope's lets, innermost last."""
    if ret_value is None:
        raise ScopeError("ScopeBuilder: ret() was not called in this scope; call sb.ret(value) "
                         "before leaving the scope or calling get()")
    if isinstance(ret_value, If) and ret_value.false_branch is None:
        raise ScopeError("ScopeBuilder: an if_scope has no else_scope; add `with sb.else_scope(): "
                         "sb.ret(...)` right after it")
    body = ret_value
    for var, value in reversed(bindings):
        body = Let(var, value, body)
    return body


class ScopeBuilder:
    """Collects `let` bindings and one result per scope; `get()` returns the nested expression."""

    def __init__(self):
        self._bindings = [[]]
        self._ret_values = [None]

    def _enter_scope(self) -> None:
        self._bindings.append([])
        self._ret_values.append(None)

    def _exit_scope(self):
        return self._bindings.pop(), self._ret_values.pop()

    def let(self, var, value) -> Var:
        """Bind a value to a variable in the current scope (a let around what follows).

        Parameters
        ----------
        var : Var or str or tuple
            The variable: a Var, a name, or a (name, type) pair.
        value : Expr
            The value bound.

        Returns
        -------
        var : Var
            The bound variable, to use in later statements.
        """
        if isinstance(var, (tuple, list)):
            if len(var) > 2:
                raise ScopeError(f"ScopeBuilder.let: expected (name, type), got {var!r}")
            var = Var(*var)
        elif isinstance(var, str):
            var = Var(var)
        if not isinstance(var, Var):
            raise ScopeError(f"ScopeBuilder.let: var must be a Var, a name or (name, type), got {var!r}")
        if not isinstance(value, Expr):
            raise ScopeError(f"ScopeBuilder.let: value of %{var.name_hint} must be a relay expression, "
                             f"got {type(value).__name__}")
        self._bindings[-1].append((var, value))
        return var

    @contextmanager
    def if_scope(self, cond: Expr):
        """A `with` block whose statements form the true branch of an If; else_scope must follow.

        Parameters
        ----------
        cond : Expr
            The condition, a boolean scalar.

        Returns
        -------
        scope : context manager
            Enter it with `with`; the If becomes the result of the enclosing scope.
        """
        self._enter_scope()
        try:
            yield
        except BaseException:
            self._exit_scope()  # leave the builder usable after an error in the block
            raise
        bindings, ret_value = self._exit_scope()
        if self._ret_values[-1] is not None:
            raise ScopeError("ScopeBuilder: the enclosing scope already returned a value before "
                             "this if_scope; an if must be the scope's last statement")
        true_branch = _make_lets(bindings, ret_value)
        self._ret_values[-1] = If(cond, true_branch, None)

    @contextmanager
    def else_scope(self):
        """The false branch of the if_scope just closed."""
        self._enter_scope()
        try:
            yield
        except BaseException:
            self._exit_scope()  # leave the builder usable after an error in the block
            raise
        bindings, ret_value = self._exit_scope()
        partial_if = self._ret_values[-1]
        if not isinstance(partial_if, If) or partial_if.false_branch is not None:
            raise ScopeError("ScopeBuilder: else_scope must directly follow an if_scope")
        false_branch = _make_lets(bindings, ret_value)
        self._ret_values[-1] = If(partial_if.cond, partial_if.true_branch, false_branch)

    def type_of(self, expr: Expr):
        """The type of an expression, to annotate a variable with it.

        Parameters
        ----------
        expr : Expr
            The expression. For a Var it is its annotation; for anything else a fresh IncompleteType,
            tied to the expression by a let, that type inference fills in.

        Returns
        -------
        type : Type
            The type.
        """
        if isinstance(expr, Var):
            return expr.type_annotation
        ty = IncompleteType()
        self.let(Var("unify", ty), expr)
        return ty

    def ret(self, value: Expr) -> None:
        """Set the result of the current scope; a scope returns once.

        Parameters
        ----------
        value : Expr
            The result.
        """
        if self._ret_values[-1] is not None:
            raise ScopeError("ScopeBuilder: ret() was already called in this scope")
        self._ret_values[-1] = value

    def get(self) -> Expr:
        """The built expression; only valid at the outermost scope."""
        if len(self._bindings) != 1:
            raise ScopeError("ScopeBuilder: get() can only be called at the outermost scope "
                             "(a with-block is still open)")
        return _make_lets(self._bindings[-1], self._ret_values[-1])


__all__ = ["ScopeBuilder", "ScopeError"]
