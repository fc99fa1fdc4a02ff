"""ONNX's optimizer update ops (domain ai.onnx.preview.training): Adagrad, Adam and Momentum
(standard and Nesterov), as TVM v0.18's frontend converts them: elementwise Relay arithmetic.

Each node takes a learning rate R (scalar), an iteration count T (int64 scalar), then n tensors to
optimize, their n gradients and their n accumulators of each kind (Adagrad: squared gradients;
Momentum: velocities; Adam: velocities then squared gradients), and returns the n updated tensors
followed by the n updated accumulators of each kind. R and T may be run-time inputs; the bias
corrections that depend on T (T > 0) are selected at run time. The arithmetic runs in the dtype of
the optimized tensor.
"""
import numpy as np

from .... import op as _op
from ..common import const
from ._registry import converter

DOMAIN = "ai.onnx.preview.training."


def _groups(ctx, inputs, kinds):
    """(r, t, [tensor groups]) of a node whose tensors come in `kinds` groups of n (X, G, ...)."""
    rest = inputs[2:]
    if len(rest) == 0 or len(rest) % kinds:
        raise ctx.invalid(f"takes R, T and {kinds} groups of equally many tensors, got {len(inputs)} inputs")
    if any(x is None for x in inputs):
        raise ctx.invalid("no input may be omitted")
    n = len(rest) // kinds
    return inputs[0], inputs[1], [rest[k * n:(k + 1) * n] for k in range(kinds)]


def _scalar_as(ctx, expr, like, what):
    if int(np.prod([int(d) for d in ctx.static_shape(expr, what)], dtype=np.int64)) != 1:
        raise ctx.invalid(f"{what} must be a scalar, got shape {ctx.shape(expr)}")
    return _op.cast(_op.reshape(expr, ()), ctx.dtype(like))


def _float_attr(ctx, name, default=None):
    value = ctx.attrs.get(name, default)
    if value is None:
        raise ctx.invalid(f"attribute {name!r} is required")
    return float(value)


def _c(ctx, value, like):
    return const(np.array(value, dtype=ctx.dtype(like)))


def _regularized(ctx, x, g, norm_coefficient):
    """g + norm_coefficient * x: the gradient with the L2 regularization term's."""
    return _op.add(_op.multiply(_c(ctx, norm_coefficient, x), x), g)


@converter(DOMAIN + "Adagrad")
def adagrad(ctx, inputs):
    """h' = h + g^2; x' = x - r / (1 + t * decay_factor) * g / (sqrt(h') + epsilon)."""
    r, t, (xs, gs, hs) = _groups(ctx, inputs, 3)
    decay, epsilon = _float_attr(ctx, "decay_factor", 0.0), _float_attr(ctx, "epsilon", 1e-6)
    norm = _float_attr(ctx, "norm_coefficient", 0.0)
    new_x, new_h = [], []
    for x, g, h in zip(xs, gs, hs):
        rate = _op.divide(_scalar_as(ctx, r, x, "R"),
                          _op.add(_c(ctx, 1, x), _op.multiply(_scalar_as(ctx, t, x, "T"), _c(ctx, decay, x))))
        g = _regularized(ctx, x, g, norm)
        h2 = _op.add(h, _op.multiply(g, g))
        step = _op.divide(_op.multiply(rate, g), _op.add(_op.sqrt(h2), _c(ctx, epsilon, x)))
        new_x.append(_op.subtract(x, step))
        new_h.append(h2)
    return new_x + new_h


@converter(DOMAIN + "Momentum")
def momentum(ctx, inputs):
    """v' = alpha * v + beta' * g (beta' = 1 at T = 0, beta after); standard: x' = x - r * v';
    nesterov: x' = x - r * (g + alpha * v')."""
    r, t, (xs, gs, vs) = _groups(ctx, inputs, 3)
    alpha, beta = _float_attr(ctx, "alpha"), _float_attr(ctx, "beta")
    norm = _float_attr(ctx, "norm_coefficient")
    mode = ctx.attrs.get("mode")
    if mode not in ("standard", "nesterov"):
        raise ctx.invalid(f"mode must be 'standard' or 'nesterov', got {mode!r}")
    new_x, new_v = [], []
    for x, g, v in zip(xs, gs, vs):
        first = _op.less_equal(_scalar_as(ctx, t, x, "T"), _c(ctx, 0, x))
        beta_t = _op.where(first, _c(ctx, 1, x), _c(ctx, beta, x))
        g = _regularized(ctx, x, g, norm)
        v2 = _op.add(_op.multiply(_c(ctx, alpha, x), v), _op.multiply(beta_t, g))
        direction = v2 if mode == "standard" else _op.add(g, _op.multiply(_c(ctx, alpha, x), v2))
        new_x.append(_op.subtract(x, _op.multiply(_scalar_as(ctx, r, x, "R"), direction)))
        new_v.append(v2)
    return new_x + new_v


@converter(DOMAIN + "Adam")
def adam(ctx, inputs):
    """v' = alpha v + (1 - alpha) g; h' = beta h + (1 - beta) g^2; from T > 0 the rate carries
    the bias correction sqrt(1 - beta^T) / (1 - alpha^T); x' = (1 - norm_post) (x - r v' / (sqrt(h') + eps))."""
    r, t, (xs, gs, vs, hs) = _groups(ctx, inputs, 4)
    alpha, beta = _float_attr(ctx, "alpha", 0.9), _float_attr(ctx, "beta", 0.999)
    epsilon, norm = _float_attr(ctx, "epsilon", 1e-6), _float_attr(ctx, "norm_coefficient", 0.0)
    norm_post = _float_attr(ctx, "norm_coefficient_post", 0.0)
    new_x, new_v, new_h = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        one = _c(ctx, 1, x)
        steps, rate = _scalar_as(ctx, t, x, "T"), _scalar_as(ctx, r, x, "R")
        g = _regularized(ctx, x, g, norm)
        v2 = _op.add(_op.multiply(_c(ctx, alpha, x), v), _op.multiply(_c(ctx, 1 - alpha, x), g))
        h2 = _op.add(_op.multiply(_c(ctx, beta, x), h), _op.multiply(_c(ctx, 1 - beta, x), _op.multiply(g, g)))
        corrected = _op.divide(_op.multiply(rate, _op.sqrt(_op.subtract(one, _op.power(_c(ctx, beta, x), steps)))),
                               _op.subtract(one, _op.power(_c(ctx, alpha, x), steps)))
        rate = _op.where(_op.greater(steps, _c(ctx, 0, x)), corrected, rate)
        x2 = _op.subtract(x, _op.multiply(rate, _op.divide(v2, _op.add(_op.sqrt(h2), _c(ctx, epsilon, x)))))
        new_x.append(_op.multiply(_c(ctx, 1 - norm_post, x), x2))
        new_v.append(v2)
        new_h.append(h2)
    return new_x + new_v + new_h
