"""Loss operators, as TVM v0.18: nn.cross_entropy (-sum(log(p) * t) / batch),
nn.cross_entropy_with_logits (-sum(p * t) / batch), both OPAQUE with a scalar result, and
nn.nll_loss (negative log-likelihood with per-class weights, ignore_index and reduction
none / sum / mean; OUT_ELEMWISE_FUSABLE).

nll_loss: for predictions (N, C, d...) and integer targets (N, d...), each element's loss is
-predictions[n, t, d...] * weights[t] (0 where t == ignore_index); "mean" divides the sum by the
summed weights of the counted targets (NaN if none counts, as TVM's 0 / 0). A target outside
[0, C) is an InputError on the debug executor; compiled kernels clamp the class index so they
never read outside the predictions (TVM leaves that case undefined).
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import InputError
from ...ir.attrs import Attrs, check_choice
from ...ir.shape_math import dims_differ
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from ..constructor_docs import documented


# --- cross entropy -------------------------------------------------------------------------------
def _make_ce_rel(op):
    def rel(arg_types, attrs=None) -> TensorType:
        """predictions and targets of one 2-D (batch, classes) shape -> a scalar."""
        pred = C.tensor_arg(op, arg_types[0], "predictions")
        target = C.tensor_arg(op, arg_types[1], "targets")
        types = dict(predictions=pred, targets=target)
        C.same_dtype(op, **types)
        C.expect_rank(op, pred, 2, "predictions (batch, classes)", **types)
        if target.ndim != 2 or any(dims_differ(a, b) for a, b in zip(pred.shape, target.shape)):
            raise C.rel_error(op, "targets must have the predictions' shape", **types)
        return TensorType((), pred.dtype)
    return rel


def _ce_ref(logits: bool):
    def ref(p, t, attrs=None):
        p64, t64 = p.astype("float64"), t.astype("float64")
        terms = p64 * t64 if logits else np.log(p64) * t64
        return np.asarray(-terms.sum() / p.shape[0]).astype(p.dtype)
    return ref


def _ce_compute(logits: bool, tag_of):
    def compute(attrs, inputs, out_type):
        """-sum over (batch, class) of log(p) * t (or p * t), / batch; float16 sums in float32."""
        p, t = inputs
        n, c = T.dims(p)
        acc = T.acc_dtype(p.dtype)
        rb, rc = te.reduce_axis((0, n), "ce_b"), te.reduce_axis((0, c), "ce_c")
        term = (lambda i, j: p[i, j].astype(acc) * t[i, j].astype(acc)) if logits else \
            (lambda i, j: te.log(p[i, j].astype(acc)) * t[i, j].astype(acc))
        total = te.compute((), lambda: te.sum(term(rb.var, rc.var), axis=[rb, rc]), name="ce_sum", tag=tag_of().tag)
        batch = T.const(1, acc) * n
        return [te.compute((), lambda: (-total[()] / batch).astype(p.dtype), name="cross_entropy", tag=tag_of().tag)]
    return compute


def _ce_samples(logits: bool):
    def gen(rng):
        low = -2.0 if logits else 0.05
        return [Sample([S.rand(rng, (3, 5), low=low, high=1.0), S.rand(rng, (3, 5), low=0, high=1)]),
                Sample([S.rand(rng, (4, 2), "float64", low, 1.0), S.rand(rng, (4, 2), "float64", 0, 1)]),
                Sample([S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS // 2), "float16", max(low, 0.5), 1.0),
                        S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS // 2), "float16", 0.5, 1.0)], None,
                       "float16, a long sum")]
    return gen


def _declare_ce(name, logits, doc):
    holder = []
    op = defop(name, inputs=("predictions", "targets"), rel=_make_ce_rel(name), pattern=OpPattern.OPAQUE,
               ref=_ce_ref(logits), compute=_ce_compute(logits, lambda: holder[0]), samples=_ce_samples(logits),
               level=10, doc=doc)
    holder.append(op)
    return op


CROSS_ENTROPY = _declare_ce("nn.cross_entropy", False, "-sum(log(predictions) * targets) / batch")
CROSS_ENTROPY_WITH_LOGITS = _declare_ce("nn.cross_entropy_with_logits", True, "-sum(predictions * targets) / batch")


# The parameters the losses share (constructor_docs completes their docstrings)
LOSS_PARAMETERS = {
    "predictions": ("relay.Expr", "The predicted distribution, (batch, classes)."),
    "targets": ("relay.Expr", "The target distribution, of the shape of `predictions`."),
}
LOSS = ("result", "relay.Expr", "The loss, a scalar.")


@documented(LOSS_PARAMETERS, LOSS)
def cross_entropy(predictions, targets):
    """relay.nn.cross_entropy: -sum(log(predictions) * targets) / batch size."""
    return CROSS_ENTROPY(predictions, targets)


@documented(LOSS_PARAMETERS, LOSS)
def cross_entropy_with_logits(predictions, targets):
    """relay.nn.cross_entropy_with_logits: -sum(predictions * targets) / batch size (predictions
    are log-probabilities).

    Parameters
    ----------
    predictions : relay.Expr
        The predicted log-probabilities, (batch, classes).
    """
    return CROSS_ENTROPY_WITH_LOGITS(predictions, targets)


# --- nll_loss ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class NLLLossAttrs(Attrs):
    reduction: str = "mean"
    ignore_index: int = -100

    def __post_init__(self):
        check_choice("reduction", self.reduction, ("mean", "sum", "none"))
        object.__setattr__(self, "ignore_index", int(self.ignore_index))


def _nll_rel(arg_types, attrs) -> TensorType:
    """predictions (N, C, d...) or (C,), integer targets (N, d...) or (), weights (C,) ->
    the targets' shape ("none") or a scalar."""
    op = "nn.nll_loss"
    pred = C.tensor_arg(op, arg_types[0], "predictions")
    target = C.tensor_arg(op, arg_types[1], "targets")
    weights = C.tensor_arg(op, arg_types[2], "weights")
    types = dict(predictions=pred, targets=target, weights=weights)
    C.same_dtype(op, predictions=pred, weights=weights)
    if np.dtype(target.dtype).kind not in "iu":
        raise C.rel_error(op, f"targets must be an integer tensor of class indices, got {target.dtype}", **types)
    if pred.ndim == 0:
        raise C.rel_error(op, "predictions must have a class axis", **types)
    class_axis = 0 if pred.ndim == 1 else 1
    want = pred.shape[:class_axis] + pred.shape[class_axis + 1:]
    if target.ndim != len(want) or any(dims_differ(a, b) for a, b in zip(target.shape, want)):
        raise C.rel_error(op, "targets must have the predictions' shape without the class axis", **types)
    C.channel_vector(op, weights, pred.shape[class_axis], "weights", **types)
    return TensorType(target.shape if attrs.reduction == "none" else (), pred.dtype)


def _nll_ref(pred, target, weights, attrs):
    class_axis = 0 if pred.ndim == 1 else 1
    classes = pred.shape[class_axis]
    counted = target != attrs.ignore_index
    bad = counted & ((target < 0) | (target >= classes))
    if bad.any():
        raise InputError(f"nn.nll_loss: target {int(target[bad].reshape(-1)[0])} is outside the {classes} classes "
                         f"(and is not ignore_index={attrs.ignore_index})")
    safe = np.where(counted, target, 0).astype(np.int64)
    picked = np.take_along_axis(pred.astype("float64"), np.expand_dims(safe, class_axis), class_axis)
    w = np.where(counted, weights.astype("float64")[safe], 0.0)
    losses = -np.squeeze(picked, class_axis) * w
    if attrs.reduction == "none":
        return losses.astype(pred.dtype)
    if attrs.reduction == "sum":
        return np.asarray(losses.sum()).astype(pred.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(losses.sum() / w.sum()).astype(pred.dtype)


def _nll_compute(attrs, inputs, out_type):
    """Per-element losses (class index clamped into range), then the sum (and the summed
    weights for "mean"); float16 sums in float32."""
    pred, target, weights = inputs
    tag = NLL_LOSS.tag
    classes = T.dims(pred)[0 if len(pred.shape) == 1 else 1]
    acc = T.acc_dtype(pred.dtype)
    ignore = tir.const(attrs.ignore_index, target.dtype)
    zero = T.const(0, acc)

    def cls(i):
        return tir.max(tir.min(target[i].astype("int32"), classes - 1), 0)

    def loss(*i):
        c = cls(i)
        index = (c,) if len(pred.shape) == 1 else (i[0], c) + tuple(i[1:])
        return te.if_then_else(target[i] != ignore, -pred[index].astype(acc) * weights[c].astype(acc), zero)

    def weight(*i):
        return te.if_then_else(target[i] != ignore, weights[cls(i)].astype(acc), zero)
    shape = T.dims(target)
    if attrs.reduction == "none":
        return [te.compute(shape, lambda *i: loss(*i).astype(pred.dtype), name="nll_loss", tag=tag)]

    def total(body, name):
        axes = [te.reduce_axis((0, d), f"{name}_{k}") for k, d in enumerate(shape)]
        return te.compute((), lambda: te.sum(body(*[a.var for a in axes]), axis=axes) if axes else body(),
                          name=name, tag=tag)
    losses = total(loss, "nll_sum")
    if attrs.reduction == "sum":
        return [te.compute((), lambda: losses[()].astype(pred.dtype), name="nll_loss", tag=tag)]
    weights_sum = total(weight, "nll_weights")
    return [te.compute((), lambda: (losses[()] / weights_sum[()]).astype(pred.dtype), name="nll_loss", tag=tag)]


def _nll_samples(rng):
    A = NLLLossAttrs

    def targets(shape, classes, ignore=None):
        t = rng.integers(0, classes, size=shape).astype("int32")
        if ignore is not None:
            t.reshape(-1)[::3] = ignore
        return t
    n16 = S.FLOAT16_REDUCTION_TERMS
    return [Sample([S.rand(rng, (4, 3)), targets((4,), 3), S.rand(rng, (3,), low=0.5, high=1.5)], A()),
            Sample([S.rand(rng, (2, 4, 3, 2), "float64"), targets((2, 3, 2), 4, ignore=1),
                    S.rand(rng, (4,), "float64")],
                   A("none", 1), "spatial loss, ignore_index"),
            Sample([S.rand(rng, (3, 5)), targets((3,), 5, ignore=-1), S.rand(rng, (5,))], A("sum", -1)),
            Sample([S.rand(rng, (5,)), np.array(2, "int64"), S.rand(rng, (5,), low=0.5, high=1.5)], A(),
                   "no batch axis"),
            Sample([S.rand(rng, (n16, 2), "float16", 100, 101), targets((n16,), 2),
                    S.rand(rng, (2,), "float16", 0.5, 1.5)], A(), "float16, a long sum")]


NLL_LOSS = defop("nn.nll_loss", inputs=("predictions", "targets", "weights"), attrs=NLLLossAttrs, rel=_nll_rel,
                 pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_nll_ref, compute=_nll_compute, samples=_nll_samples,
                 level=10, doc="loss[n, d] = -predictions[n, targets[n, d], d] * weights[targets[n, d]], reduced")


@documented(LOSS_PARAMETERS, ("result", "relay.Expr", "The loss: a scalar, or the shape of `targets` "
                                                                "for reduction \"none\"."))
def nll_loss(predictions, targets, weights, reduction="mean", ignore_index=-100):
    """relay.nn.nll_loss: negative log-likelihood (reduction mean, sum or none).

    Parameters
    ----------
    predictions : relay.Expr
        The log-probabilities, (N, C, d...) or (C,), with the classes on axis 1 (axis 0 for 1-D).
    targets : relay.Expr
        The integer class of each element, (N, d...) (a scalar for 1-D predictions).
    weights : relay.Expr
        The weight of each class, (C,).
    reduction : str, optional
        "mean" (the weighted sum divided by the summed weights of the counted targets), "sum",
        or "none" (one loss per target). Defaults to "mean".
    ignore_index : int, optional
        A target class that contributes nothing, neither loss nor weight. Defaults to -100.
    """
    return NLL_LOSS(predictions, targets, weights, attrs=NLLLossAttrs(reduction, ignore_index))


__all__ = ["cross_entropy", "cross_entropy_with_logits", "nll_loss", "NLLLossAttrs"]
