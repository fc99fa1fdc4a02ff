"""ToMixedPrecision (tvm.relay.transform.ToMixedPrecision): run as much of a float32 program as
is safe in a lower float type (float16 by default).

Each operator call is categorised by its FTVMMixedPrecisionConversionType rule
(op/mixed_precision.py): ALWAYS ops run in the mixed type, NEVER ops in float32, FOLLOW ops in
the mixed type only when every float argument already is (variables and constants can always be
cast). The float arguments are cast accordingly (each value cast once per dtype); ops with an
accumulation attribute (out_dtype of conv2d/dense/batch_matmul/matmul, dtype of zeros/ones/full;
not cast's dtype, which is the program's own choice)
get the accumulation dtype, and a cast to the output dtype follows when they differ. An op whose
attributes do not fit the mixed type (a clip bound beyond float16's range) stays in float32.
Functions keep their signatures: the arguments of a call of a function (global, closure or
literal) are cast back to their original types, and the result of a nested function and of
every global function but main is cast back to its original type (Relay rejects calls of
globals and let-bound closures here). Let-bound values and If results are cast back to their
original types too (so variables keep theirs). Parameters keep their types; main's result is in
the mixed type unless PassContext config "relay.ToMixedPrecision.keep_orig_output_dtype" is
True. missing_op_mode: 0 error, 1 warn, 2 silently treat ops without
a rule as FOLLOW. Opt_level 0. The result differs from the input by float16 rounding only.
"""
import dataclasses
import warnings

import numpy as np

from ..errors import RelayError
from ..ir.expr import Call, Constant, Function, If, Let, Tuple, TupleGetItem, Var
from ..ir.functor import ExprMutator
from ..ir.types import TensorType, TupleType
from ..op.mixed_precision import (MIXED_PRECISION_ALWAYS, MIXED_PRECISION_FOLLOW,
                                  MIXED_PRECISION_NEVER)
from ..op.creation import InitOpAttrs
from ..op.registry import OpDef
from ..op.tensor import cast
from .pass_infra import function_pass_skips, module_pass
from .rewrite import type_locally, typed_function
from .to_a_normal_form import keep_type

KEEP_OUTPUT_KEY = "relay.ToMixedPrecision.keep_orig_output_dtype"


def _is_float(dtype: str) -> bool:
    return np.dtype(dtype).kind == "f"


class MixedPrecisionRewriter(ExprMutator):
    def __init__(self, mixed_type: str, missing_op_mode: int):
        super().__init__()
        self.mixed = mixed_type
        self.missing_op_mode = missing_op_mode
        self.missing = {}
        self.casts = {}          # (expr, dtype) -> cast expr

    def cast_to(self, expr, dtype):
        """expr (tensor or tuple) with its float tensors cast to dtype, each cast made once."""
        t = type_locally(expr).checked_type
        if isinstance(t, TupleType):
            fields = [self.cast_to(TupleGetItem(expr, i), dtype) for i in range(len(t.fields))]
            return Tuple(fields)
        if not isinstance(t, TensorType) or not _is_float(t.dtype) or t.dtype == dtype:
            return expr
        key = (expr, dtype)
        if key not in self.casts:
            self.casts[key] = type_locally(cast(expr, dtype))
            self.casts[(self.casts[key], t.dtype)] = expr
        return self.casts[key]

    def _mixed_compatible(self, arg) -> bool:
        if isinstance(arg, (Var, Constant)):
            return True
        t = type_locally(arg).checked_type
        types = t.fields if isinstance(t, TupleType) else [t]
        return all(not (isinstance(f, TensorType) and _is_float(f.dtype)) or f.dtype == self.mixed
                   for f in types)

    def _descriptor(self, call):
        rule = call.op.get_attr("FTVMMixedPrecisionConversionType")
        if rule is not None:
            category, acc, out = rule(call, self.mixed)
            return int(category), str(acc), str(out)
        if self.missing_op_mode == 0:
            raise RelayError(f"ToMixedPrecision: operator {call.op.name} has no mixed precision rule; "
                             f"register one with register_mixed_precision_conversion or use "
                             f"missing_op_mode=1")
        self.missing[call.op.name] = self.missing.get(call.op.name, 0) + 1
        return MIXED_PRECISION_FOLLOW, self.mixed, self.mixed

    def _attrs_fit(self, attrs) -> bool:
        bound = float(np.finfo(self.mixed).max)
        if hasattr(attrs, "a_min") and hasattr(attrs, "a_max"):
            return -bound <= attrs.a_min and attrs.a_max <= bound
        return True

    def visit_call(self, call):
        args = [self.visit(a) for a in call.args]
        if not isinstance(call.op, OpDef):      # functions keep their signatures
            new_args = [self._as_original(n, o) for n, o in zip(args, call.args)]
            return keep_type(Call(self.visit(call.op), new_args, call.attrs, call.type_args), call)
        category, acc, out = self._descriptor(call)
        if category == MIXED_PRECISION_FOLLOW:
            category = MIXED_PRECISION_ALWAYS if all(self._mixed_compatible(a) for a in args) \
                else MIXED_PRECISION_NEVER
        if category == MIXED_PRECISION_ALWAYS and self._attrs_fit(call.attrs):
            new = Call(call.op, [self.cast_to(a, self.mixed) for a in args], self._accumulate(call.attrs, acc),
                       call.type_args)
            return self.cast_to(new, out) if acc != out else type_locally(new)
        return type_locally(Call(call.op, [self.cast_to(a, "float32") for a in args], call.attrs,
                                 call.type_args))

    @staticmethod
    def _accumulate(attrs, acc):
        """attrs with the accumulation dtype: out_dtype (conv2d, dense, batch_matmul, matmul)
        and the dtype of zeros/ones/full, as Relay; cast's dtype is the program's own choice."""
        if attrs is None or not dataclasses.is_dataclass(attrs):
            return attrs
        fields = ("out_dtype", "dtype") if isinstance(attrs, InitOpAttrs) else ("out_dtype",)
        changes = {}
        for name in fields:
            value = getattr(attrs, name, None)
            if isinstance(value, str) and (value == "" or _is_float(value)):
                changes[name] = acc
        return dataclasses.replace(attrs, **changes) if changes else attrs

    def visit_function(self, fn):
        """A nested function keeps its type: its result is cast back to its original types."""
        if fn.is_primitive:
            return fn
        body = self._as_original(self.visit(fn.body), fn.body)
        return keep_type(Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs), fn)

    def _as_original(self, new, old):
        """`new` cast back to `old`'s float types (let variables and If results keep theirs)."""
        return _cast_like(self, new, old.checked_type)

    def visit_let(self, let):
        value = self._as_original(self.visit(let.value), let.value)
        body = self._as_original(self.visit(let.body), let.body)
        return keep_type(Let(let.var, value, body), let)

    def visit_if(self, ite):
        new = If(self.visit(ite.cond), self._as_original(self.visit(ite.true_branch), ite.true_branch),
                 self._as_original(self.visit(ite.false_branch), ite.false_branch))
        return keep_type(new, ite)


def to_mixed_precision(func: Function, mixed_precision_type="float16", missing_op_mode=1,
                       keep_orig_output_dtype=False, mod=None) -> Function:
    """`func` rewritten (see the module docstring)."""
    if missing_op_mode not in (0, 1, 2):
        raise RelayError("Missing op mode is either 0, 1, or 2")
    if not _is_float(mixed_precision_type):
        raise RelayError(f"ToMixedPrecision: mixed_precision_type must be a float type, got "
                         f"{mixed_precision_type!r}")
    func = typed_function(func, mod)
    rewriter = MixedPrecisionRewriter(str(np.dtype(mixed_precision_type)), missing_op_mode)
    body = rewriter.visit(func.body)
    if keep_orig_output_dtype:
        body = _cast_like(rewriter, body, func.body.checked_type)
    if rewriter.missing and missing_op_mode == 1:
        warnings.warn(f"ToMixedPrecision: ops without a mixed precision rule were treated as FOLLOW: "
                      f"{dict(sorted(rewriter.missing.items()))}", stacklevel=2)
    return Function(func.params, body, None, func.type_params, func.attrs)


def _cast_like(rewriter, expr, t):
    if isinstance(t, TupleType):
        return Tuple([_cast_like(rewriter, TupleGetItem(expr, i), f) for i, f in enumerate(t.fields)])
    return rewriter.cast_to(expr, t.dtype) if isinstance(t, TensorType) else expr


def ToMixedPrecision(mixed_precision_type="float16", missing_op_mode=1):  # noqa: N802
    """Pass (opt_level 0): run as much of the program as is safe in a lower-precision float
    type, with casts around the ops that must stay in float32.

    Only the entry function ("main") may change its result type (unless PassContext config
    "relay.ToMixedPrecision.keep_orig_output_dtype" is True); other functions keep their
    signatures.

    Parameters
    ----------
    mixed_precision_type : str, optional
        The lower-precision dtype. Defaults to "float16".
    missing_op_mode : int, optional
        What to do with an op that has no conversion rule: 0 raise an error, 1 (the default)
        warn, 2 say nothing; in modes 1 and 2 such ops follow their inputs' type.

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """
    if missing_op_mode not in (0, 1, 2):
        raise RelayError("Missing op mode is either 0, 1, or 2")

    def transform(mod, ctx):
        keep = bool(ctx.config.get(KEEP_OUTPUT_KEY, False))
        out = mod.copy()
        for gv, func in mod.functions.items():
            if isinstance(func, Function) and not function_pass_skips(func):
                out[gv] = to_mixed_precision(func, mixed_precision_type, missing_op_mode,
                                             keep or gv.name_hint != "main", mod)
        return out

    return module_pass(transform, opt_level=0, name="ToMixedPrecision")


__all__ = ["ToMixedPrecision", "to_mixed_precision", "MixedPrecisionRewriter", "KEEP_OUTPUT_KEY"]
