"""Gradients of the cross-entropy losses, as Relay's (the two loss ops TVM v0.18 registers one
for): with g the output gradient divided by the batch size,
cross_entropy:             d predictions = -g * targets / predictions, d targets = -g * log(predictions);
cross_entropy_with_logits: d predictions = -g * targets,               d targets = -g * predictions.
"""
from .. import tensor as T
from ..registry import register_gradient
from .helpers import scalar, shape_of, ttype


def _per_batch(orig, grad):
    """The (scalar) output gradient divided by the batch size, in the predictions' dtype."""
    return grad / scalar(shape_of(orig.args[0])[0], ttype(orig.args[0]).dtype)


@register_gradient("nn.cross_entropy")
def cross_entropy_grad(orig, grad):
    p, t = orig.args
    g = _per_batch(orig, grad)
    return [T.negative(g) * t / p, T.negative(g) * T.log(p)]


@register_gradient("nn.cross_entropy_with_logits")
def cross_entropy_with_logits_grad(orig, grad):
    p, t = orig.args
    g = _per_batch(orig, grad)
    return [T.negative(g) * t, T.negative(g) * p]
