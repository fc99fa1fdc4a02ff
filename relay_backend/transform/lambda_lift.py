"""LambdaLift (tvm.relay.transform.LambdaLift): every nested non-primitive function becomes a
global function of the module. The VM compiler runs it before compiling closures.

A lambda without free variables becomes a plain global `@lifted_name<hash>` and the literal is
replaced by that GlobalVar. A lambda that captures variables `c1..ck` becomes

    @lifted_name<hash>(c1, ..., ck, Closure=1) { fn (params) { body } }

and the literal is replaced by `@lifted_name<hash>(c1, ..., ck)`, which the VM compiles to
AllocClosure. A let-bound lambda that calls itself (`let %f = fn (...) { ... %f(...) ... }`)
has its recursive references rewritten to the lifted global applied to the captured variables,
so no closure ever needs to contain itself. Primitive (fused) functions are left alone.

Rebuilt nodes keep the checked type of the node they replace, so the bytecode compiler can still
read the types of kernel calls without re-running type inference.
"""
from ..ir.expr import Call, Function, GlobalVar, Let, Var
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..ir.structural import structural_hash
from ..ir.vars import free_vars
from .pass_infra import module_pass

CLOSURE_ATTR = "Closure"


def _keep_type(new, old):
    if new is not old and getattr(old, "_checked_type_", None) is not None and \
            getattr(new, "_checked_type_", None) is None:
        new._checked_type_ = old._checked_type_
    return new


def _is_lambda(expr) -> bool:
    return isinstance(expr, Function) and not expr.is_primitive


class _Substitute(ExprMutator):
    """Replace variables by expressions (used for recursive references)."""

    def __init__(self, mapping):
        super().__init__()
        self.mapping = mapping

    def visit_var(self, var):
        return self.mapping.get(var, var)

    def visit_function(self, fn):
        if fn.is_primitive:
            return fn
        return super().visit_function(fn)


for _name in ("visit_call", "visit_tuple", "visit_tuple_getitem", "visit_let", "visit_if", "visit_match"):
    def _wrapped(self, node, _base=getattr(ExprMutator, _name)):
        return _keep_type(_base(self, node), node)
    setattr(_Substitute, _name, _wrapped)


class LambdaLifter(_Substitute):
    """Lifts the lambdas of one global function into `mod` (mutated in place)."""

    def __init__(self, mod: IRModule):
        super().__init__({})
        self.mod = mod

    def _fresh_global(self, fn) -> GlobalVar:
        base = f"lifted_name{structural_hash(fn) & 0xFFFFFFFFFFFF:d}"
        name, i = base, 1
        while name in self.mod:
            name, i = f"{base}_{i}", i + 1
        return GlobalVar(name)

    def _previsit_children(self, expr):
        # a let-bound lambda is lifted by visit_let, which must see it before its free vars
        if isinstance(expr, Let) and _is_lambda(expr.value):
            return [c for c in (expr.body,) if c not in self.memo_map]
        return super()._previsit_children(expr)

    def _lift(self, fn: Function, gv: GlobalVar = None, self_var: Var = None):
        """(global function, replacement expression) for a lambda."""
        gv = gv or self._fresh_global(fn)
        captured = [v for v in free_vars(fn) if v is not self_var]
        replacement = Call(gv, captured) if captured else gv
        if self_var is not None:
            fn = _Substitute({self_var: replacement}).visit(fn)
        body = self.visit(fn.body)
        inner = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs)
        inner._checked_type_ = fn._checked_type_
        if captured:
            lifted = Function(captured, inner, None, fn.type_params, {CLOSURE_ATTR: 1})
        else:
            lifted = inner
        self.mod[gv] = lifted
        return replacement

    def visit_function(self, fn):
        if fn.is_primitive:
            return fn
        return self._lift(fn)

    def visit_let(self, let):
        if _is_lambda(let.value):
            recursive = let.var in free_vars(let.value)
            value = self._lift(let.value, self_var=let.var if recursive else None)
            body = self.visit(let.body)
            return _keep_type(Let(let.var, value, body), let)
        return _keep_type(ExprMutator.visit_let(self, let), let)

    def lift_global(self, fn: Function) -> Function:
        """The global `fn` with its nested lambdas lifted (fn itself stays a global). The body of
        a lifted closure (Closure=1) is that closure's function: only the lambdas inside it are
        lifted, so lifting a lifted module changes nothing."""
        if fn.is_primitive:
            return fn
        if int(fn.attrs.get(CLOSURE_ATTR, 0)) == 1 and _is_lambda(fn.body):
            body = self._rebuilt(fn.body, self.visit(fn.body.body))
        else:
            body = self.visit(fn.body)
        return self._rebuilt(fn, body)

    @staticmethod
    def _rebuilt(fn: Function, body) -> Function:
        if body is fn.body:
            return fn
        new = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs)
        new._checked_type_ = fn._checked_type_
        return new


def lambda_lift(mod: IRModule) -> IRModule:
    """Lift every nested non-primitive function of a module to a global function (the VM
    compiles only global functions); a closure's captured variables become the parameters of
    the global that builds it.

    Parameters
    ----------
    mod : IRModule
        The module whose functions hold nested function literals; it is not changed.

    Returns
    -------
    mod : IRModule
        A module in which no function literal is left inside another function.
    """
    out = mod.copy()
    lifter = LambdaLifter(out)
    for gv, fn in list(mod.functions.items()):
        out[gv] = lifter.lift_global(fn)
    return out


def LambdaLift():  # noqa: N802 - tvm.relay naming
    """Module pass (opt_level 1, as TVM) wrapping lambda_lift."""

    @module_pass(opt_level=1, name="LambdaLift")
    def _pass(mod, ctx):
        return lambda_lift(mod)
    return _pass


__all__ = ["LambdaLift", "lambda_lift", "LambdaLifter", "CLOSURE_ATTR"]
