"""SimplifyInference: rewrite training-only operators into their inference-time arithmetic.

`nn.batch_norm(...)[0]` becomes `data * scale + shift` with per-channel scale = gamma/sqrt(var+eps)
and shift = beta - mean*scale expanded to broadcast along `axis` (so FoldConstant can fold them
once the statistics are bound); `nn.dropout(x)[0]` becomes `x`; `nn.layer_norm` becomes
mean/variance/subtract/divide/multiply/add (float16 data in float32). The rewrites are rows of
REWRITES, keyed by op name.
The pass needs types (ranks and dtypes); it runs InferType itself when they are missing.
"""
from typing import Callable, NamedTuple, Optional

from .. import op as _op
from ..errors import TypeInferenceError
from ..ir.expr import Call, Function, const
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..ir.types import TensorType, type_to_str
from ..op.accumulation import acc_dtype
from ..op.registry import OpDef, get as _get_op
from .pass_infra import function_pass
from .rewrite import typed_function


class Rewrite(NamedTuple):
    """How to simplify calls to one op: `index` None rewrites the call itself, an int rewrites
    `TupleGetItem(call, index)`; fn(call, data_type) -> Expr gets the (mutated) call and the type
    of the rewritten value."""

    index: Optional[int]
    fn: Callable


def _axis(axis: int, ndim: int, call) -> int:
    if not -ndim <= axis < ndim:
        raise TypeInferenceError(f"{call.op.name}: axis {axis} is out of range for rank {ndim}")
    return axis + ndim if axis < 0 else axis


def expand_bias_to_axis(vec, ndim: int, axis: int):
    """Give a per-channel vector trailing unit dims so it broadcasts along `axis` of a rank-ndim
    tensor (TVM's ExpandBiasToMatchAxis)."""
    trailing = ndim - axis - 1
    return _op.expand_dims(vec, axis=1, num_newaxis=trailing) if trailing > 0 else vec


def _batch_norm(call, ty: TensorType):
    data, gamma, beta, moving_mean, moving_var = call.args
    attrs = call.attrs
    axis = _axis(attrs.axis, ty.ndim, call)
    std = _op.sqrt(_op.add(moving_var, const(attrs.epsilon, ty.dtype)))
    scale = _op.divide(const(1.0, ty.dtype), std)
    if attrs.scale:
        scale = _op.multiply(scale, gamma)
    shift = _op.multiply(_op.negative(moving_mean), scale)
    if attrs.center:
        shift = _op.add(shift, beta)
    return _op.add(_op.multiply(data, expand_bias_to_axis(scale, ty.ndim, axis)),
                   expand_bias_to_axis(shift, ty.ndim, axis))


def _dropout(call, ty):
    return call.args[0]


def _layer_norm(call, ty: TensorType):
    """(data - mean) / sqrt(variance + eps) * gamma + beta, in the accumulation dtype: float16
    data is normalized in float32 (its variance alone overflows float16 once values pass 256)
    and cast back, as the reference computes."""
    data, gamma, beta = call.args
    attrs = call.attrs
    axis = _axis(attrs.axis, ty.ndim, call)
    dtype = acc_dtype(ty.dtype)
    if dtype != ty.dtype:
        data, gamma, beta = (_op.cast(x, dtype) for x in (data, gamma, beta))
    mean = _op.mean(data, axis, keepdims=True)
    variance_op = _get_op("variance")
    var = variance_op(data, mean, attrs=variance_op.attrs_type(axis=axis, keepdims=True))
    out = _op.divide(_op.subtract(data, mean), _op.sqrt(_op.add(var, const(attrs.epsilon, dtype))))
    if attrs.scale:
        out = _op.multiply(out, expand_bias_to_axis(gamma, ty.ndim, axis))
    if attrs.center:
        out = _op.add(out, expand_bias_to_axis(beta, ty.ndim, axis))
    return out if dtype == ty.dtype else _op.cast(out, ty.dtype)


# op name -> Rewrite. A new inference-time simplification is one row here.
REWRITES = {
    "nn.batch_norm": Rewrite(0, _batch_norm),
    "nn.dropout": Rewrite(0, _dropout),
    "nn.layer_norm": Rewrite(None, _layer_norm),
}


def _rewrite_for(call, index):
    if isinstance(call, Call) and isinstance(call.op, OpDef):
        rule = REWRITES.get(call.op.name)
        if rule is not None and rule.index == index:
            return rule.fn
    return None


def _tensor_type(expr, call) -> TensorType:
    """The inferred type of the value being rewritten (a tensor), or a clear error."""
    ty = expr._checked_type_
    if not isinstance(ty, TensorType):
        raise TypeInferenceError(f"SimplifyInference: {call.op.name} needs an inferred tensor type, "
                                 f"got {type_to_str(ty) if ty is not None else 'none'}; run InferType first")
    return ty


class InferenceSimplifier(ExprMutator):
    """Applies REWRITES bottom-up, reading types from the original (typed) expressions."""

    def visit_tuple_getitem(self, tgi):
        new = super().visit_tuple_getitem(tgi)
        rewrite = _rewrite_for(new.tuple_value, new.index)
        if rewrite is None:
            return new
        return rewrite(new.tuple_value, _tensor_type(tgi, tgi.tuple_value))

    def visit_call(self, call):
        new = super().visit_call(call)
        rewrite = _rewrite_for(new, None)
        if rewrite is None:
            return new
        return rewrite(new, _tensor_type(call, call))


def _needs_types(func: Function) -> bool:
    return func.body._checked_type_ is None


def simplify_inference(func: Function, mod: IRModule = None) -> Function:
    """The SimplifyInference rewrite of one function (types inferred if missing)."""
    if _needs_types(func):
        func = typed_function(Function(func.params, func.body, func.ret_type, func.type_params,
                                       func.attrs), mod)
    return InferenceSimplifier().visit(func)


def SimplifyInference():  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 0): batch_norm/dropout/layer_norm -> inference arithmetic."""

    def transform(func, mod, ctx):
        return simplify_inference(func, mod)

    return function_pass(transform, opt_level=0, name="SimplifyInference", required=["InferType"])


__all__ = ["SimplifyInference", "simplify_inference", "REWRITES", "Rewrite"]
