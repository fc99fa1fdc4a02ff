"""Random programs with functions: the hypothesis strategy `programs_with_functions()`.

`programs()` builds one dataflow `main`; the passes that work on functions (Inline, LambdaLift,
EtaExpand, RemoveUnusedFunctions, the normal forms, CPS) need global functions, closures and
functions passed as values to have anything to do. This strategy draws a program from
`programs()` and then outlines some of its operator calls into functions, each in one of these
forms (the call `op(a, b)` with free variables a, b):

    global      def @f(%a, %b) { op(%a, %b) }            ... @f(a, b)
    inline      the same with attribute Inline=1          (Inline replaces the call by the body)
    value       let %g = @f; %g(a, b)                     (a global used as a value: EtaExpand)
    closure     let %g = fn (%a) { op(%a, b) }; %g(a)    (captures b: LambdaLift lifts it)
    direct      (fn (%a, %b) { op(%a, %b) })(a, b)

A call inside an outlined call is outlined first, so functions call functions. Sometimes an
unused global function is added too (RemoveUnusedFunctions drops it). The outlined program
computes exactly what the original does, so the debug interpreter gives the same outputs, and
the module still type-checks.
"""
from hypothesis import strategies as st

from .. import ir
from ..ir.expr import Call, Function, GlobalVar, Let, Var
from ..ir.functor import ExprMutator, all_nodes_post_order
from ..ir.well_formed import check_well_formed
from ..op.registry import OpDef
from ..transform import InferType
from ..transform.substitute import bind, dedup
from .program_gen import Program, build_program

FORMS = ("global", "inline", "value", "closure", "direct")


class Outliner(ExprMutator):
    """Replaces each planned call (by identity) with a call of a function holding it."""

    def __init__(self, plan: dict, captured: dict, mod):
        super().__init__()
        self.plan = plan            # id(call) -> form
        self.captured = captured    # id(call) -> how many free variables a closure captures
        self.mod = mod
        self.functions = []         # (GlobalVar, Function) added to the module

    def visit_call(self, call):
        new = super().visit_call(call)
        form = self.plan.get(id(call))
        if form is None:
            return new
        free = ir.free_vars(new)
        n_captured = min(self.captured.get(id(call), 0), len(free)) if form == "closure" else 0
        args = free[n_captured:]
        params = [Var(f"{v.name_hint}_p", v.checked_type) for v in args]
        fn = dedup(Function(params, bind(new, dict(zip(args, params)))))   # fresh binders inside
        index = len(self.functions) + sum(1 for _ in self.mod.functions)
        if form in ("global", "inline", "value"):
            gv = GlobalVar(f"f{index}")
            self.functions.append((gv, fn.with_attr("Inline", 1) if form == "inline" else fn))
            if form != "value":
                return Call(gv, args)
            callee = Var(f"g{index}")
            return Let(callee, gv, Call(callee, args))
        if form == "closure":
            callee = Var(f"g{index}")
            return Let(callee, fn, Call(callee, args))
        return Call(fn, args)


def outline(mod, plan: dict, captured: dict, unused: bool):
    """A new module whose main has the planned calls outlined (see the module docstring)."""
    main = mod["main"]
    outliner = Outliner(plan, captured, mod)
    body = outliner.visit(main.body)
    out = mod.copy()
    for gv, fn in outliner.functions:
        out[gv] = fn
    if unused and outliner.functions:
        out[GlobalVar("unused")] = dedup(outliner.functions[0][1])
    out["main"] = Function(main.params, body, None, main.type_params, main.attrs)
    out = InferType()(out)
    for fn in out.functions.values():
        check_well_formed(fn)
    return out


def _op_calls(expr) -> list:
    return [n for n in all_nodes_post_order(expr) if isinstance(n, Call) and isinstance(n.op, OpDef)]


@st.composite
def programs_with_functions(draw, max_calls: int = 20, control_flow: bool = True,
                            max_functions: int = 4) -> Program:
    """Hypothesis strategy: a `programs()` program with up to `max_functions` calls outlined."""
    program = build_program(draw, max_calls=max_calls, control_flow=control_flow)
    calls = _op_calls(program.mod["main"].body)
    picks = draw(st.lists(st.integers(0, len(calls) - 1), min_size=1,
                          max_size=min(max_functions, len(calls)), unique=True))
    plan = {id(calls[i]): draw(st.sampled_from(FORMS)) for i in picks}
    captured = {id(calls[i]): draw(st.integers(0, 2)) for i in picks}
    unused = draw(st.booleans())
    mod = outline(program.mod, plan, captured, unused)
    forms = sorted(plan.values())
    return Program(mod, program.inputs, program.num_calls, program.has_control_flow,
                   notes=[f"outlined: {forms}" + (", plus an unused function" if unused else "")])


__all__ = ["programs_with_functions", "outline", "FORMS"]
