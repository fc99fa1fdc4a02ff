"""Well-formedness: every variable is bound at most once and used only inside its scope.

Rules (as tvm.relay.analysis.well_formed): a Var bound twice (two params, two lets, a param and a
pattern, ...) is ill-formed; a bound Var used outside its binder's scope is ill-formed; a Var
that is never bound is free, which is allowed only outside functions (a top-level expression's
inputs), not inside a function body; a Var may not be both free and bound. A let var is in
scope in its own value (recursive functions). The walk uses an explicit stack (10,000-op chains
are fine); a node shared in a DAG is checked once, so a shared Function does not count as binding
its params twice.
"""
from ..errors import RelayError
from .adt import Match, pattern_vars
from .expr import (Call, Expr, Function, If, Let, Op, RefCreate, RefRead, RefWrite, Tuple,
                   TupleGetItem, Var)
from .module import IRModule


class WellFormedError(RelayError):
    """A program binds a variable twice or uses one outside its scope."""


def _excerpt(expr) -> str:
    """The first line of expr's text, for error messages."""
    text = expr.astext().split("\n")
    line = text[1] if len(text) > 1 else text[0]
    return line if len(line) <= 100 else line[:100] + " ..."


class _Checker:
    def __init__(self):
        self.bound_at = {}    # Var -> the expression that binds it
        self.in_scope = set()
        self.free_used = {}   # Var -> True for vars used before/without any binding
        self.fn_depth = 0
        self.visited = set()

    def bind(self, var: Var, binder) -> None:
        if var in self.bound_at:
            raise WellFormedError(
                f"variable %{var.name_hint} is bound twice: first by `{_excerpt(self.bound_at[var])}`, "
                f"again by `{_excerpt(binder)}`; use a fresh relay.var for each binding")
        if var in self.free_used:
            raise WellFormedError(
                f"variable %{var.name_hint} is used outside any binding and also bound by "
                f"`{_excerpt(binder)}`; a variable must be either free or bound, not both")
        self.bound_at[var] = binder
        self.in_scope.add(var)

    def use(self, var: Var) -> None:
        if var in self.in_scope:
            return
        if var in self.bound_at:
            raise WellFormedError(
                f"variable %{var.name_hint} is used outside the scope of its binding "
                f"`{_excerpt(self.bound_at[var])}`")
        if self.fn_depth > 0:
            raise WellFormedError(
                f"variable %{var.name_hint} is used inside a function but bound nowhere; make it a "
                "parameter of the function (free variables are only allowed outside functions)")
        self.free_used[var] = True

    def run(self, root: Expr) -> None:
        stack = [("visit", root)]
        while stack:
            action, item = stack.pop()
            if action == "exit":
                variables, leaves_function = item
                self.in_scope.difference_update(variables)
                self.fn_depth -= leaves_function
                continue
            if action == "clause":
                variables = pattern_vars(item.lhs)
                for v in variables:
                    self.bind(v, item.rhs)
                stack.append(("exit", (variables, 0)))
                stack.append(("visit", item.rhs))
                continue
            e = item
            if isinstance(e, Var):
                self.use(e)
                continue
            if e in self.visited:
                continue
            self.visited.add(e)
            self.expand(e, stack)

    def expand(self, e, stack) -> None:
        """Bind what e binds and push its children (reversed, so they run left to right)."""
        if isinstance(e, Function):
            for p in e.params:
                self.bind(p, e)
            self.fn_depth += 1
            stack.append(("exit", (e.params, 1)))
            stack.append(("visit", e.body))
            return
        if isinstance(e, Let):
            self.bind(e.var, e)
            stack.append(("exit", ((e.var,), 0)))
            stack.append(("visit", e.body))
            stack.append(("visit", e.value))
            return
        if isinstance(e, Match):
            stack.extend(("clause", c) for c in reversed(e.clauses))
            stack.append(("visit", e.data))
            return
        if isinstance(e, Call):
            kids = e.args if isinstance(e.op, Op) else (e.op, *e.args)
        elif isinstance(e, Tuple):
            kids = e.fields
        elif isinstance(e, TupleGetItem):
            kids = (e.tuple_value,)
        elif isinstance(e, If):
            kids = (e.cond, e.true_branch, e.false_branch)
        elif isinstance(e, RefCreate):
            kids = (e.value,)
        elif isinstance(e, RefRead):
            kids = (e.ref,)
        elif isinstance(e, RefWrite):
            kids = (e.ref, e.value)
        else:  # Constant, GlobalVar, Op, Constructor
            kids = ()
        stack.extend(("visit", k) for k in reversed(kids))


def check_well_formed(expr) -> None:
    """Raise WellFormedError (a RelayError) naming the first problem found: a variable bound more
    than once, or used outside the scope that binds it.

    Parameters
    ----------
    expr : Expr or IRModule
        The program to check (each function of a module in turn).
    """
    if isinstance(expr, IRModule):
        for gv in sorted(expr.functions, key=lambda g: g.name_hint):
            try:
                _Checker().run(expr.functions[gv])
            except WellFormedError as err:
                raise WellFormedError(f"in @{gv.name_hint}: {err}") from None
        return
    if not isinstance(expr, Expr):
        raise WellFormedError(f"well_formed expects a relay expression or IRModule, got {type(expr).__name__}")
    _Checker().run(expr)


def well_formed(expr) -> bool:
    """Whether every variable is bound at most once and used only inside its scope.

    Parameters
    ----------
    expr : Expr or IRModule
        The program to check.

    Returns
    -------
    ok : bool
        True when well formed; check_well_formed says what is wrong otherwise.
    """
    try:
        check_well_formed(expr)
    except WellFormedError:
        return False
    return True


__all__ = ["well_formed", "check_well_formed", "WellFormedError"]
