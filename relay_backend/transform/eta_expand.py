"""EtaExpand: a constructor or global function used as a value becomes a function literal that
calls it (tvm.relay.transform.EtaExpand).

    @foldr(Cons, %ys, %xs)   ->   @foldr(fn (%p0, %p1) { Cons(%p0, %p1) }, %ys, %xs)

Code that treats every first-class function as a closure (the VM, which builds closures only
from function literals and globals) can then run programs that pass constructors around, as
the Prelude's concat and rev do. The new parameters are left unannotated: InferType gives them
the types of the place the value is used. Calls (`Cons(%x, %xs)`, `@f(%x)`) are left alone.
"""
from ..ir.adt import Constructor
from ..ir.expr import Call, Function, GlobalVar, Var
from ..ir.functor import ExprMutator
from .infer_type import infer_module_types
from .pass_infra import module_pass, register_pass_factory


class _Expander(ExprMutator):
    def __init__(self, mod, expand_constructor: bool, expand_global_var: bool):
        super().__init__()
        self.mod = mod
        self.expand_constructor = expand_constructor
        self.expand_global_var = expand_global_var

    def visit(self, expr):
        # each use of a constructor or global as a value gets its own literal (fresh parameters),
        # so this is decided before the memo, which would share one literal between uses
        if self.expand_constructor and isinstance(expr, Constructor) and expr.inputs:
            return _literal(expr, len(expr.inputs))
        if (self.expand_global_var and isinstance(expr, GlobalVar) and expr in self.mod
                and isinstance(self.mod[expr], Function)):
            return _literal(expr, len(self.mod[expr].params))
        return super().visit(expr)

    def visit_call(self, call):
        op = call.op
        if not isinstance(op, (Constructor, GlobalVar)):
            return super().visit_call(call)
        args = [self.visit(a) for a in call.args]
        if all(n is o for n, o in zip(args, call.args)):
            return call
        return Call(op, args, call.attrs, call.type_args, span=call.span)


def _literal(callee, arity: int) -> Function:
    params = [Var(f"eta_p{i}") for i in range(arity)]
    return Function(params, Call(callee, params), span=getattr(callee, "span", None))


def eta_expand(mod, expand_constructor: bool = False, expand_global_var: bool = False):
    """A copy of `mod` with the chosen kinds of first-class uses expanded, type-checked."""
    new = mod.copy()
    for gv, func in list(mod.functions.items()):
        if func.attrs.get("Primitive"):
            continue
        new[gv] = _Expander(mod, expand_constructor, expand_global_var).visit(func)
    infer_module_types(new)
    return new


def EtaExpand(expand_constructor: bool = False, expand_global_var: bool = False):
    """The pass (opt_level 0): eta-expand constructors and/or global functions used as values."""
    return module_pass(lambda mod, ctx: eta_expand(mod, expand_constructor, expand_global_var),
                       opt_level=0, name="EtaExpand")


register_pass_factory("EtaExpand", EtaExpand)

__all__ = ["EtaExpand", "eta_expand"]
