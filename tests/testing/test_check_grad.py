"""check_grad on every operator with a registered gradient, at two shapes each (grad_cases.py):
the analytic gradient (higher-order AD on the debug interpreter, float64) matches central
differences. A representative set also runs first-order AD compiled on graph, vm and aot; the
full sweep on those executors is marked slow."""
import pytest

from relay_backend.op.gradient import NOT_DIFFERENTIABLE, differentiable_ops
from relay_backend.op.registry import list_ops
from relay_backend.testing import check_grad

from .grad_cases import CASES, NO_INPUTS, cases_by_op

IDS = [f"{c.op}-{i}" for i, c in enumerate(CASES)]


def test_every_differentiable_op_has_two_cases():
    by_op = cases_by_op()
    missing = [name for name in differentiable_ops() if name not in NO_INPUTS and len(by_op.get(name, [])) < 2]
    assert not missing, f"ops with a gradient but fewer than two check_grad cases: {missing}"
    without = sorted(op.name for op in list_ops() if op.name not in differentiable_ops())
    assert without == sorted(NOT_DIFFERENTIABLE)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_check_grad_higher_order_debug(case):
    func, inputs, checked = case.make()
    check_grad(func, inputs=inputs, test_inputs=checked, eps=case.eps, atol=1e-6, rtol=1e-5)


REPRESENTATIVE = {"nn.dense", "nn.conv2d", "nn.max_pool2d", "nn.softmax", "nn.batch_norm", "take",
                  "concatenate", "where", "sum", "multiply", "nn.avg_pool2d", "nn.log_softmax"}


def _first_order(case, kind):
    func, inputs, checked = case.make()
    check_grad(func, inputs=inputs, test_inputs=checked, eps=case.eps, atol=1e-6, rtol=1e-5,
               mode="first_order", executor_kind=kind)


@pytest.mark.parametrize("kind", ["debug", "graph", "vm", "aot"])
@pytest.mark.parametrize("case", [c for c in CASES if c.op in REPRESENTATIVE][::2],
                         ids=lambda c: c.op)
def test_check_grad_first_order_compiled(case, kind):
    _first_order(case, kind)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["graph", "vm", "aot"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_check_grad_first_order_every_op_every_executor(case, kind):
    _first_order(case, kind)
