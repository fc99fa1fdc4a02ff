"""The higher-order reverse-mode AD behind gradient(func, mode="higher_order") (Relay's
ReverseAD in higher_order_gradient.cc).

Every tensor value v becomes a pair (v, ref(dv)) whose reference accumulates v's gradient; a
reference `bp` holds the backpropagator, a closure that runs the pending backward steps. Each
operator call computes its value, makes the pair, and replaces bp by a closure that adds the
op's gradients (FPrimalGradient) into its inputs' references and then calls the previous bp.
Functions, closures, If, Let, tuples and recursive global functions are supported: a function
takes the current bp as an extra last argument (a called global f gets a differentiated copy
@f_grad). The driver pairs the parameters with zero gradients, runs the function, seeds the
output gradient with ones, calls bp, and returns (value, (parameter gradients)).

The input is converted to A-normal form first, so no value is shared between two places (Relay
requires the caller to ensure that). The result uses references and closures, which the debug
interpreter runs; use mode="first_order" for a program the graph/VM/AOT executors compile.
"""
from ..analysis.feature import Feature, detect_feature
from ..errors import RelayError
from ..ir.adt import Constructor
from ..ir.expr import (Call, Constant, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                       RefWrite, Tuple, TupleGetItem, Var)
from ..ir.functor import ExprMutator, all_nodes_post_order
from ..ir.types import FuncType, RefType, TensorType, TupleType
from ..op.registry import OpDef
from ..op.tensor import add, zeros_like
from .first_order_gradient import Replace, grad_ret_type, is_float, ones_of, op_gradient
from .rewrite import typed_function
from .to_a_normal_form import to_a_normal_form

BP_TYPE = RefType(FuncType([], TupleType([])))


def reverse_type(t):
    """A tensor T becomes (T, ref T); functions take the backpropagator as an extra argument."""
    if isinstance(t, TensorType):
        return TupleType([t, RefType(t)])
    if isinstance(t, TupleType):
        return TupleType([reverse_type(f) for f in t.fields])
    if isinstance(t, RefType):
        return RefType(reverse_type(t.value))
    if isinstance(t, FuncType):
        return FuncType([reverse_type(a) for a in t.arg_types] + [BP_TYPE],
                        reverse_type(t.ret_type), t.type_params)
    return t


class LetList:
    """Collects let bindings and wraps a body with them."""

    def __init__(self):
        self.bindings = []

    def push(self, expr, ty=None, var=None):
        if isinstance(expr, (Var, Constant, GlobalVar, Op)) and var is None:
            return expr
        v = var if var is not None else Var(f"x{len(self.bindings)}", ty)
        self.bindings.append((v, expr))
        return v

    def get(self, body):
        for v, value in reversed(self.bindings):
            body = Let(v, value, body)
        return body


def _lift(t, expr, ll, tensor_fn):
    """Apply tensor_fn to every tensor in a (nested tuple) value of type t."""
    if isinstance(t, TensorType):
        return ll.push(tensor_fn(expr))
    if isinstance(t, TupleType):
        return ll.push(Tuple([_lift(ft, ll.push(TupleGetItem(expr, i)), ll, tensor_fn)
                              for i, ft in enumerate(t.fields)]))
    raise RelayError(f"higher-order gradient: unsupported value type {t}")


def get_rev(t, expr, ll):
    return _lift(t, expr, ll, lambda e: Tuple([e, RefCreate(zeros_like(e))]))


def get_value(t, expr, ll):
    return _lift(t, expr, ll, lambda e: TupleGetItem(e, 0))


def get_grad(t, expr, ll):
    return _lift(t, expr, ll, lambda e: RefRead(TupleGetItem(e, 1)))


def update_grad(t, arg, grad, ll):
    """arg's gradient reference(s) += grad (integer and bool values have none)."""
    if isinstance(t, TensorType):
        if not is_float(t):
            return
        ref = TupleGetItem(arg, 1)
        ll.push(RefWrite(ref, add(RefRead(ref), grad)))
    elif isinstance(t, TupleType):
        for i, ft in enumerate(t.fields):
            update_grad(ft, ll.push(TupleGetItem(arg, i)), ll.push(TupleGetItem(grad, i)), ll)
    else:
        raise RelayError(f"higher-order gradient: unsupported argument type {t}")


def _type(expr):
    return getattr(expr, "_checked_type_", None) or getattr(expr, "type_annotation", None)


class ReverseAD(ExprMutator):
    """Rewrites one function body in the reverse-mode form, with `bp` the current
    backpropagator reference; ad_vars / ad_gvars are shared across nested functions."""

    def __init__(self, mod, bp, ad_vars, ad_gvars):
        super().__init__()
        self.mod, self.bp, self.ad_vars, self.ad_gvars = mod, bp, ad_vars, ad_gvars

    def visit_var(self, var):
        new = self.ad_vars.get(var)
        if new is None:
            t = _type(var)
            new = self.ad_vars[var] = Var(var.name_hint, reverse_type(t) if t is not None else None)
        return new

    def visit_constant(self, c):
        ll = LetList()
        e = ll.push(c)
        return ll.get(Tuple([e, RefCreate(zeros_like(e))]))

    def visit_op(self, op):
        raise RelayError(f"higher-order gradient: operator {op.name} used outside a call")

    def visit_if(self, ite):
        return If(TupleGetItem(self.visit(ite.cond), 0), self.visit(ite.true_branch),
                  self.visit(ite.false_branch))

    def visit_function(self, fn):
        params = [self.visit(p) for p in fn.params]
        new_bp = Var("bp", BP_TYPE)
        body = ReverseAD(self.mod, new_bp, self.ad_vars, self.ad_gvars).visit(fn.body)
        ret = reverse_type(fn.ret_type) if fn.ret_type is not None else None
        return Function(params + [new_bp], body, ret, fn.type_params, fn.attrs)

    def visit_global_var(self, gv):
        if self.mod is None or gv not in self.mod.functions:
            raise RelayError(f"higher-order gradient: @{gv.name_hint} is not in the module; pass mod=")
        new = self.ad_gvars.get(gv)
        if new is None:
            new = self.ad_gvars[gv] = GlobalVar(gv.name_hint + "_grad")
            from .substitute import dedup
            orig = dedup(self.mod[gv])
            bp = Var("bp", BP_TYPE)
            inner = ReverseAD(self.mod, bp, self.ad_vars, self.ad_gvars)
            params = [inner.visit(p) for p in orig.params] + [bp]
            ret = reverse_type(orig.ret_type) if orig.ret_type is not None else None
            self.mod[new] = Function(params, inner.visit(orig.body), ret, orig.type_params, orig.attrs)
        return new

    def visit_call(self, call):
        if isinstance(call.op, OpDef):
            return self._op_call(call)
        if isinstance(call.op, Constructor):
            return super().visit_call(call)
        args = [self.visit(a) for a in call.args] + [self.bp]
        return Call(self.visit(call.op), args)

    def _op_call(self, call):
        ll = LetList()
        args = [ll.push(self.visit(a)) for a in call.args]
        values = [get_value(_type(a), x, ll) for a, x in zip(call.args, args)]
        out_t = call.checked_type
        orig = Call(call.op, values, call.attrs, call.type_args)
        orig._checked_type_ = out_t
        for v, a in zip(values, call.args):
            if isinstance(v, Var) and v._checked_type_ is None:
                v._checked_type_ = _type(a)
        orig_var = ll.push(orig, out_t)
        orig_var._checked_type_ = out_t
        ret = get_rev(out_t, orig_var, ll)
        previous = ll.push(RefRead(self.bp))
        back = LetList()
        grads = op_gradient(orig, get_grad(out_t, ret, back))
        for a, x, g in zip(call.args, args, grads):
            update_grad(_type(a), x, back.push(Replace(orig, orig_var).visit(g)), back)
        ll.push(RefWrite(self.bp, Function([], back.get(Call(previous, [])), TupleType([]))))
        return ll.get(ret)


def _check(func):
    if func.type_params:
        raise RelayError("higher-order gradient: no polymorphism supported for now")
    for p in func.params:
        if not isinstance(_type(p), TensorType):
            raise RelayError(f"higher-order gradient: parameter %{p.name_hint} must be a tensor, got "
                             f"{_type(p)}")
    missing = sorted({n.name for n in all_nodes_post_order(func) if isinstance(n, OpDef)
                      and not n.has_attr("FPrimalGradient")})
    if missing:
        raise RelayError(f"higher-order gradient: operators without a registered gradient: {missing}")
    if Feature.fMatch in detect_feature(func):
        raise RelayError("higher-order gradient does not support match expressions")


def _seed(t, value, ll):
    """Write ones into the gradient reference(s) of the output value (every tensor of it)."""
    if isinstance(t, TensorType):
        ll.push(RefWrite(TupleGetItem(value, 1), ones_of(t, TupleGetItem(value, 0))))
    elif isinstance(t, TupleType):
        for i, ft in enumerate(t.fields):
            _seed(ft, ll.push(TupleGetItem(value, i)), ll)


def _final(t, value, ll):
    if isinstance(t, TensorType):
        return TupleGetItem(value, 0)
    return Tuple([_final(ft, ll.push(TupleGetItem(value, i)), ll) for i, ft in enumerate(t.fields)])


def higher_order_gradient(func, mod=None) -> Function:
    """gradient(func, mod, mode="higher_order") (see the module docstring)."""
    if isinstance(func, GlobalVar):
        if mod is None:
            raise RelayError("gradient: a GlobalVar needs the module holding it (mod=)")
        func = mod[func]
    if not isinstance(func, Function):
        raise RelayError(f"gradient expects a relay Function, got {type(func).__name__}")
    func = typed_function(func, mod)
    _check(func)
    func_t = func.checked_type
    anf = to_a_normal_form(func)
    ll = LetList()
    bp = ll.push(RefCreate(Function([], Tuple([]), TupleType([]))), BP_TYPE)
    rev = ReverseAD(mod, bp, {}, {}).visit(anf)
    pairs = [ll.push(Tuple([p, RefCreate(zeros_like(p))])) for p in func.params]
    result = ll.push(Call(rev, pairs + [bp]))
    out_t = func_t.ret_type
    _seed(out_t, result, ll)
    ll.push(Call(RefRead(bp), []))
    grads = Tuple([RefRead(TupleGetItem(x, 1)) for x in pairs])
    body = ll.get(Tuple([_final(out_t, result, ll), grads]))
    return Function(func.params, body, grad_ret_type(func_t), [], func.attrs)


__all__ = ["higher_order_gradient", "reverse_type", "ReverseAD", "BP_TYPE"]
