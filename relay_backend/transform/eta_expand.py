"""EtaExpand (tvm.relay.transform.EtaExpand): wrap constructors and global functions that are
used as values in function literals.

Guarantee: with expand_constructor, a constructor C used other than as a callee becomes
`fn [A...](%x1, ..., %xn) -> T[A...] { C(%x1, ..., %xn) }` over fresh type variables; with
expand_global_var, a global function @g used other than as a callee becomes
`fn (%p1, ..., %pn) -> R { @g(%p1, ..., %pn) }`. (Relay also wraps a global that is being called,
which changes nothing but the size of the program; here called globals stay as they are.)
The VM pipeline expands constructors so they can be passed around as closures. Meaning is
unchanged.
"""
from ..errors import RelayError
from ..ir.adt import Constructor
from ..ir.expr import Call, Function, GlobalVar, Var
from ..ir.functor import ExprMutator
from ..ir.types import TypeCall, TypeVar
from .pass_infra import module_pass
from .type_solver import substitute


class EtaExpander(ExprMutator):
    def __init__(self, mod, expand_constructor: bool, expand_global_var: bool):
        super().__init__()
        self.mod = mod
        self.expand_constructor = expand_constructor
        self.expand_global_var = expand_global_var

    def visit_call(self, call):
        if isinstance(call.op, (Constructor, GlobalVar)):   # already applied: leave the callee
            args = [self.visit(a) for a in call.args]
            if all(n is o for n, o in zip(args, call.args)):
                return call
            return Call(call.op, args, call.attrs, call.type_args)
        return super().visit_call(call)

    def visit_constructor(self, ctor):
        if not self.expand_constructor:
            return ctor
        data = self.mod.type_definitions.get(ctor.belong_to)
        if data is None:
            raise RelayError(f"EtaExpand: constructor {ctor.name_hint}'s ADT "
                             f"{ctor.belong_to.name_hint} is not defined in the module")
        fresh = {tv: TypeVar("A") for tv in data.type_vars}
        params = [Var("eta_expand_param", substitute(t, fresh)) for t in ctor.inputs]
        ret = TypeCall(ctor.belong_to, [fresh[tv] for tv in data.type_vars])
        return Function(params, Call(ctor, params), ret, [fresh[tv] for tv in data.type_vars])

    def visit_global_var(self, gv):
        if not self.expand_global_var or gv not in self.mod.functions:
            return gv
        fn = self.mod[gv]
        params = [Var("eta_expand_param", p.type_annotation) for p in fn.params]
        return Function(params, Call(gv, params), fn.ret_type, fn.type_params)


def EtaExpand(expand_constructor: bool = False, expand_global_var: bool = False):  # noqa: N802
    """Module pass (opt_level 1): wrap constructors and/or global functions used as values in
    functions that call them (`Cons` becomes `fn (x, xs) { Cons(x, xs) }`).

    Parameters
    ----------
    expand_constructor : bool, optional
        Whether to expand constructors. Defaults to False.
    expand_global_var : bool, optional
        Whether to expand global functions. Defaults to False. At least one of the two must
        be True.

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """
    if not (expand_constructor or expand_global_var):
        raise RelayError("EtaExpand: must expand at least one language feature "
                         "(expand_constructor=True and/or expand_global_var=True)")

    def transform(mod, ctx):
        out = mod.copy()
        for gv, fn in mod.functions.items():
            out[gv] = EtaExpander(mod, expand_constructor, expand_global_var).visit(fn)
        return out

    return module_pass(transform, opt_level=1, name="EtaExpand")


__all__ = ["EtaExpand", "EtaExpander"]
