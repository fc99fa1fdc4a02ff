"""Train the MLP of relay_backend.testing.mlp with SGD, its gradients computed by Relay's
first-order automatic differentiation and compiled by the graph executor (or the VM).

    python examples/train_mlp.py [--executor graph|vm|aot] [--steps 50] [--lr 0.1]

The data is synthetic (one Gaussian blob per class), so the example runs offline; the loss
printed every few steps goes down as the network learns to separate the classes.
"""
import argparse

from relay_backend.testing import mlp
from relay_backend.testing.training import mlp_training_step, synthetic_batches, train_sgd


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executor", default="graph", choices=["graph", "vm", "aot", "debug"])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    image_shape = (1, 28, 28)
    step = mlp_training_step(args.batch_size, image_shape=image_shape)
    _, params = mlp.get_workload(batch_size=args.batch_size, image_shape=image_shape)
    batches = synthetic_batches(args.steps, args.batch_size, image_shape=image_shape)
    losses, _ = train_sgd(step, params, batches, lr=args.lr, executor=args.executor)
    for i in range(0, len(losses), max(1, len(losses) // 10)):
        print(f"step {i:4d}  loss {losses[i]:.4f}")
    print(f"final loss {losses[-1]:.4f} (first {losses[0]:.4f})")


if __name__ == "__main__":
    main()
