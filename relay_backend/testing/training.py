"""Training the MLP with Relay's automatic differentiation: the loss function, its first-order
gradient compiled by an executor, and plain SGD on top (examples/train_mlp.py drives it).

    step = mlp_training_step(batch_size=32, image_shape=(1, 8, 8), num_hidden=(32,))
    losses, params = train_sgd(step, params, batches, lr=0.1, executor="graph")

The loss is the mean softmax cross-entropy, -sum(labels * log_softmax(logits)) / batch, with
one-hot labels. `synthetic_batches` makes a seeded, learnable data set (one Gaussian blob per
class) so examples and tests need no downloads.
"""
from typing import NamedTuple

import numpy as np

from .. import ir
from ..build_module import create_executor
from ..op import nn
from ..op.reduce import sum as _sum
from ..op.tensor import divide, negative
from ..transform import InferType
from ..transform.first_order_gradient import first_order_gradient
from . import mlp


class TrainingStep(NamedTuple):
    """main(data, labels, *params) -> (loss, (gradients...)) and the params' names in order."""

    mod: ir.IRModule
    param_names: list


def mlp_loss(batch_size: int, num_classes: int = 10, image_shape=(1, 28, 28),
             num_hidden=mlp.DEFAULT_HIDDEN, dtype: str = "float32") -> ir.Function:
    """fn(data, labels, fc1_weight, fc1_bias, ...) -> mean cross-entropy of the MLP's logits."""
    net = mlp.get_net(batch_size, num_classes, image_shape, dtype, num_hidden)
    logits = net.body.args[0]          # the network computes softmax(logits)
    labels = ir.var("labels", shape=(batch_size, num_classes), dtype=dtype)
    total = _sum(labels * nn.log_softmax(logits))
    loss = divide(negative(total), ir.const(float(batch_size), dtype))
    return ir.Function([net.params[0], labels] + list(net.params[1:]), loss)


def mlp_training_step(batch_size: int, num_classes: int = 10, image_shape=(1, 28, 28),
                      num_hidden=mlp.DEFAULT_HIDDEN, dtype: str = "float32") -> TrainingStep:
    """The loss with its first-order gradient: a dataflow program every executor compiles."""
    loss = InferType()(ir.IRModule.from_expr(
        mlp_loss(batch_size, num_classes, image_shape, num_hidden, dtype)))["main"]
    grad = first_order_gradient(loss)
    return TrainingStep(InferType()(ir.IRModule.from_expr(grad)), [p.name_hint for p in loss.params[2:]])


def synthetic_batches(num_batches: int, batch_size: int, num_classes: int = 10,
                      image_shape=(1, 28, 28), dtype: str = "float32", seed: int = 0) -> list:
    """[(data, one-hot labels)]: class k's images are noise around a fixed random pattern."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0.0, 1.0, size=(num_classes,) + tuple(image_shape))
    batches = []
    for _ in range(num_batches):
        classes = rng.integers(0, num_classes, size=batch_size)
        data = centers[classes] + rng.normal(0.0, 0.5, size=(batch_size,) + tuple(image_shape))
        labels = np.eye(num_classes)[classes]
        batches.append((data.astype(dtype), labels.astype(dtype)))
    return batches


def train_sgd(step: TrainingStep, params: dict, batches, lr: float = 0.1, epochs: int = 1,
              executor: str = "graph", target: str = "llvm"):
    """Plain SGD: for each batch, compute (loss, gradients) with the compiled step and move each
    param against its gradient. Returns (the loss of every step, the trained params)."""
    run = create_executor(executor, mod=step.mod, target=target).evaluate()
    params = {k: np.array(v) for k, v in params.items()}
    losses = []
    for _ in range(epochs):
        for data, labels in batches:
            loss, grads = run(data, labels, *[params[n] for n in step.param_names])
            losses.append(float(loss.numpy()))
            for name, g in zip(step.param_names, list(grads.fields)[2:]):
                params[name] -= lr * g.numpy()
    return losses, params


__all__ = ["TrainingStep", "mlp_loss", "mlp_training_step", "synthetic_batches", "train_sgd"]
