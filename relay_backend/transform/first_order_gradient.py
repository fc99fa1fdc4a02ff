"""FirstOrderGradient (tvm.relay.transform.FirstOrderGradient): reverse-mode automatic
differentiation of first-order programs into a plain dataflow program.

Guarantee: each global function f(x1, ..., xn) -> T becomes f'(x1, ..., xn) -> (T, (T1, ..., Tn))
returning f's value and the gradient of the sum of all of f's outputs with respect to every
parameter (zeros for a parameter the result does not depend on). The result has no closures,
references or control flow, so the graph, VM and AOT executors run it. The forward values are
let-bound once and reused by the backward pass; each operator contributes its registered
gradient (FPrimalGradient, op/gradient/), and contributions to a value used several times are
added. Lets in the input are allowed (they are shared, as graph form); If, Match, references,
local functions and calls of functions are not: use gradient(f, mode="higher_order").
"""
import numpy as np

from ..analysis.feature import Feature, detect_feature
from ..errors import OpNotImplemented, RelayError
from ..ir.expr import Call, Constant, Function, Let, Tuple, TupleGetItem, Var
from ..ir.functor import ExprMutator, all_nodes_post_order
from ..ir.types import FuncType, TensorType, TupleType
from ..op.gradient.helpers import filled_of, zeros_of
from ..op.registry import OpDef
from ..op.tensor import add
from .pass_infra import module_pass
from .rewrite import typed_function
from .to_graph_normal_form import to_graph_normal_form

ALLOWED = {Feature.fVar, Feature.fConstant, Feature.fTuple, Feature.fTupleGetItem,
           Feature.fFunction, Feature.fOp, Feature.fCall, Feature.fGraph, Feature.fLet}


def grad_ret_type(func_type: FuncType) -> TupleType:
    """(T, (T1, ..., Tn)) for a function (T1, ..., Tn) -> T (Relay's GradRetType)."""
    return TupleType([func_type.ret_type, TupleType(list(func_type.arg_types))])


def op_gradient(call, grad):
    """The gradient expressions of `call`'s inputs, from the op's FPrimalGradient."""
    fgrad = call.op.get_attr("FPrimalGradient")
    if fgrad is None:
        raise OpNotImplemented(f"the operator {call.op.name} does not have a registered gradient "
                               f"(register one with relay_backend.op.register_gradient)")
    grads = list(fgrad(call, grad))
    if len(grads) != len(call.args):
        raise RelayError(f"arity mismatch for operator {call.op.name} and its registered gradient: "
                         f"expected {len(call.args)} but got {len(grads)} gradients")
    return grads


def is_float(t) -> bool:
    """Whether values of tensor type t carry gradients (integer and bool ones do not)."""
    return isinstance(t, TensorType) and np.dtype(t.dtype).kind == "f"


class Replace(ExprMutator):
    """Replaces one call node by another expression (the forward call by its let variable)."""

    def __init__(self, old, new):
        super().__init__()
        self.old, self.new = old, new

    def visit_call(self, call):
        return self.new if call is self.old else super().visit_call(call)


def ones_of(t, value=None):
    """The seed gradient of an output `value` of type `t`: ones_like(value) for a tensor, a
    tuple of ones for a tuple (Relay's OnesLike / Ones)."""
    return filled_of(t, 1, value)


class _Adjoints:
    """Accumulated gradients: an expression per tensor value, a list of fields per tuple value."""

    def __init__(self, bind):
        self.bind = bind        # bind(expr, type) -> a let-bound variable
        self.acc = {}

    def add(self, node, grad, t):
        if isinstance(t, TensorType) and not is_float(t):
            return
        if isinstance(t, TupleType):
            fields = self.acc.setdefault(node, [None] * len(t.fields))
            for i, ft in enumerate(t.fields):
                part = grad[i] if isinstance(grad, list) else TupleGetItem(grad, i)
                if part is not None:
                    fields[i] = self._sum(fields[i], part, ft)
        else:
            self.acc[node] = self._sum(self.acc.get(node), grad, t)

    def add_field(self, node, index, grad, t):
        if isinstance(t.fields[index], TensorType) and not is_float(t.fields[index]):
            return
        fields = self.acc.setdefault(node, [None] * len(t.fields))
        fields[index] = self._sum(fields[index], grad, t.fields[index])

    @staticmethod
    def _sum(old, new, t):
        if old is None:
            return new
        if isinstance(t, TupleType):
            return Tuple([add(TupleGetItem(old, i), TupleGetItem(new, i)) for i in range(len(t.fields))])
        return add(old, new)

    def get(self, node, t):
        """The gradient of `node` as one let-bound expression (zeros where nothing flowed)."""
        value = self.acc.get(node)
        if value is None:
            return None
        if isinstance(value, list):
            value = Tuple([v if v is not None else zeros_of(ft, TupleGetItem(node, i))
                           for i, (v, ft) in enumerate(zip(value, t.fields))])
        return self.bind(value, t)


def _check_supported(func):
    extra = detect_feature(func) - ALLOWED
    nested = [n for n in all_nodes_post_order(func.body) if isinstance(n, Function)]
    calls = [n for n in all_nodes_post_order(func.body)
             if isinstance(n, Call) and not isinstance(n.op, OpDef)]
    if extra or nested or calls:
        what = sorted(f.name for f in extra) + (["local functions"] if nested else []) + \
            (["calls of functions"] if calls else [])
        raise RelayError(f"first-order gradient does not support {', '.join(what)}; use "
                         f"gradient(func, mode='higher_order')")
    if func.type_params:
        raise RelayError("first-order AD does not support polymorphism yet")


def first_order_gradient(func: Function, mod=None) -> Function:
    """The first-order reverse-mode gradient function of `func` (see the module docstring)."""
    func = typed_function(func, mod)
    _check_supported(func)
    body = to_graph_normal_form(func.body)
    if body is not func.body:
        func = typed_function(Function(func.params, body, func.ret_type), mod)
        body = func.body
    bindings = []

    def bind(expr, t):
        v = Var(f"x{len(bindings)}", t)
        v._checked_type_ = t
        bindings.append((v, expr))
        return v

    fwd, origs = {}, {}
    for node in all_nodes_post_order(body):
        if isinstance(node, (Var, Constant)) or isinstance(node, OpDef):
            fwd[node] = node
            continue
        t = node.checked_type
        if isinstance(node, Call):
            new = Call(node.op, [fwd[a] for a in node.args], node.attrs, node.type_args)
            new._checked_type_ = t
            origs[node] = new
        elif isinstance(node, Tuple):
            new = Tuple([fwd[f] for f in node.fields])
        elif isinstance(node, TupleGetItem):
            new = TupleGetItem(fwd[node.tuple_value], node.index)
        else:
            raise RelayError(f"first-order gradient: unexpected {type(node).__name__}")
        fwd[node] = bind(new, t)

    adj = _Adjoints(bind)
    out_t = body.checked_type
    adj.add(body, ones_of(out_t, fwd[body]), out_t)
    for node in reversed(list(all_nodes_post_order(body))):
        if not isinstance(node, (Call, Tuple, TupleGetItem)):
            continue
        t = node.checked_type
        g = adj.get(node, t)
        if g is None:
            continue
        if isinstance(node, Call):
            call = origs[node]
            grads = [Replace(call, fwd[node]).visit(e) for e in op_gradient(call, g)]
            for arg, d in zip(node.args, grads):
                if not isinstance(arg, Constant):
                    adj.add(arg, d, arg.checked_type)
        elif isinstance(node, Tuple):
            for i, f in enumerate(node.fields):
                if not isinstance(f, Constant):
                    adj.add(f, TupleGetItem(g, i), f.checked_type)
        else:
            adj.add_field(node.tuple_value, node.index, g, node.tuple_value.checked_type)
    grads = []
    for p in func.params:
        pt = p.checked_type
        g = adj.get(p, pt)
        grads.append(g if g is not None else zeros_of(pt, p))
    result = Tuple([fwd[body], Tuple(grads)])
    for v, value in reversed(bindings):
        result = Let(v, value, result)
    return Function(func.params, result, grad_ret_type(func.checked_type), [], func.attrs)


def FirstOrderGradient():  # noqa: N802 - tvm.relay naming
    """Module pass (opt_level 0): every global function replaced by its first-order gradient."""

    def transform(mod, ctx):
        out = mod.copy()
        for gv, fn in mod.functions.items():
            if isinstance(fn, Function) and not fn.is_primitive:
                out[gv] = first_order_gradient(fn, mod)
        return out

    return module_pass(transform, opt_level=0, name="FirstOrderGradient")


__all__ = ["FirstOrderGradient", "first_order_gradient", "grad_ret_type", "op_gradient", "ones_of",
           "is_float", "Replace"]
