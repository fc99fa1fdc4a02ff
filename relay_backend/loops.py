"""Relay loops (tvm.relay.loops): `while_loop` builds a loop as a recursive function.

    i, s = relay.var("i", shape=(), dtype="int32"), relay.var("s", shape=(), dtype="int32")
    loop = relay.loops.while_loop(lambda i, s: relay.less(i, n),       # condition
                                  [i, s],                               # loop variables
                                  lambda i, s: [i + one, s + i])        # next values
    result = relay.Call(loop, [zero, zero])                             # the final (i, s)

As in Relay, the loop is `let %while_loop = fn (vars...) { if (cond) { %while_loop(body...) }
else { (vars...) } }; %while_loop`: a let-bound recursive closure (the condition and body may
use variables from outside), which the debug interpreter runs directly and the VM lifts into a
global function. Calling it with the initial values returns the tuple of final values.
"""
from .ir.expr import Function, Let, Tuple, Var
from .ir.scope_builder import ScopeBuilder


def while_loop(cond, loop_vars, loop_bodies):
    """A loop expression: a function of the loop variables that calls itself with
    `loop_bodies(*vars)` while `cond(*vars)` holds and returns the tuple of the variables when
    it does not (tvm.relay.loops.while_loop)."""
    sb = ScopeBuilder()
    loop = Var("while_loop")
    fresh_vars = []
    for i, loop_var in enumerate(loop_vars):
        name = loop_var.name_hint if isinstance(loop_var, Var) else f"arg{i}"
        fresh_vars.append(Var(name, sb.type_of(loop_var)))
    with sb.if_scope(cond(*fresh_vars)):
        sb.ret(loop(*loop_bodies(*fresh_vars)))
    with sb.else_scope():
        sb.ret(Tuple(fresh_vars))
    func = Function(fresh_vars, sb.get())
    return Let(loop, func, loop)


__all__ = ["while_loop"]
