"""Training the MLP with compiled gradients: a few SGD steps on the graph executor and the VM
lower the loss, and the compiled step's gradients equal the interpreter's."""
import numpy as np
import pytest

from relay_backend.testing import mlp
from relay_backend.testing.tolerances import assert_allclose
from relay_backend.testing.training import mlp_training_step, synthetic_batches, train_sgd
from relay_backend import create_executor

SHAPE, HIDDEN, BATCH, CLASSES = (1, 6, 6), (16,), 16, 4


@pytest.fixture(scope="module")
def setup():
    step = mlp_training_step(BATCH, CLASSES, SHAPE, HIDDEN)
    _, params = mlp.get_workload(batch_size=BATCH, num_classes=CLASSES, image_shape=SHAPE, num_hidden=HIDDEN)
    batches = synthetic_batches(12, BATCH, CLASSES, SHAPE)
    return step, params, batches


@pytest.mark.parametrize("executor", ["graph", "vm"])
def test_sgd_lowers_the_loss(setup, executor):
    step, params, batches = setup
    losses, trained = train_sgd(step, params, batches, lr=0.2, executor=executor)
    assert np.mean(losses[-3:]) < 0.7 * np.mean(losses[:3]), losses
    assert set(trained) == set(params) and all(trained[k].shape == params[k].shape for k in params)


def test_compiled_gradients_match_the_interpreter(setup):
    step, params, batches = setup
    data, labels = batches[0]
    args = [data, labels] + [params[n] for n in step.param_names]
    want = create_executor("debug", mod=step.mod).evaluate()(*args)
    got = create_executor("graph", mod=step.mod).evaluate()(*args)
    assert_allclose(got.fields[0].numpy(), want.fields[0].numpy(), what="loss")
    for i, (g, w) in enumerate(zip(got.fields[1].fields, want.fields[1].fields)):
        assert_allclose(g.numpy(), w.numpy(), what=f"gradient {i}")
