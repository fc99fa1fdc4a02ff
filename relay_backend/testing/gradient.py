"""check_grad (tvm.relay.testing.check_grad): compare the analytic gradient of a function with
central differences of its value.

The analytic gradients come from transform.gradient (mode "higher_order" by default, or
"first_order"); the numeric one perturbs each input element by +-eps and differences the sum of
the function's outputs: (f(x + eps) - f(x - eps)) / (2 eps). Both run on `executor_kind` for each
(target, device) pair. Random inputs (normal, standard deviation `scale`, default 10 * eps) are
drawn when none are given; use float64 inputs for tight tolerances.
"""
import numpy as np

from ..build_module import create_executor
from ..errors import RelayError
from ..ir.expr import Function
from ..ir.module import IRModule
from ..runtime.device import cpu
from ..transform import InferType
from ..transform.first_order_gradient import first_order_gradient
from ..transform.higher_order_gradient import higher_order_gradient


def _typed(func):
    if not isinstance(func, Function):
        raise RelayError(f"check_grad expects a relay Function, got {type(func).__name__}")
    return InferType()(IRModule.from_expr(func))["main"]


def _random_input(t, scale, mean, rng):
    shape = tuple(int(d) for d in t.shape)
    return np.asarray(mean + scale * rng.standard_normal(shape)).astype(t.dtype)


def _outputs(value) -> list:
    if hasattr(value, "fields"):
        return [a for f in value.fields for a in _outputs(f)]
    if isinstance(value, (list, tuple)):
        return [a for f in value for a in _outputs(f)]
    return [np.asarray(value.numpy() if hasattr(value, "numpy") else value)]


def _total(value) -> float:
    return float(sum(np.sum(a.astype("float64")) for a in _outputs(value)))


def check_grad(func, inputs=None, test_inputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, scale=None,
               mean=0, mode="higher_order", target_devices=None, executor_kind="debug", seed=0):
    """Assert that the analytic gradients of a function match central differences of its value
    (tvm.relay.testing.check_grad); see the module docstring.

    Parameters
    ----------
    func : Function
        The function to differentiate; its outputs are summed into one scalar.
    inputs : list of numpy.ndarray, optional
        The point to check at, one array per parameter; None (the default) draws random
        inputs.
    test_inputs : list of numpy.ndarray, optional
        The inputs (some of `inputs`, by identity) whose gradients are checked; None (the
        default) checks all.
    eps : float, optional
        The step of the central differences. Defaults to 1e-6.
    atol : float, optional
        The absolute tolerance of the comparison. Defaults to 1e-5.
    rtol : float, optional
        The relative tolerance of the comparison. Defaults to 1e-3.
    scale : float, optional
        The standard deviation of random inputs; None (the default) means 10 * eps.
    mean : float, optional
        The mean of random inputs. Defaults to 0.
    mode : str, optional
        "higher_order" (the default) or "first_order": which gradient transform to check.
    target_devices : list of tuple, optional
        (target, device) pairs to check on; None (the default) means [("llvm", cpu(0))].
    executor_kind : str, optional
        The executor both functions run on. Defaults to "debug".
    seed : int, optional
        The seed of random inputs. Defaults to 0.
    """
    fwd = _typed(func)
    bwd = first_order_gradient(fwd) if mode == "first_order" else higher_order_gradient(fwd)
    bwd = _typed(bwd)
    if scale is None:
        scale = 10 * eps
    rng = np.random.default_rng(seed)
    if inputs is None:
        inputs = [_random_input(p.checked_type, scale, mean, rng) for p in fwd.params]
    inputs = [np.array(x) if not isinstance(x, np.ndarray) else x for x in inputs]
    test_inputs = inputs if test_inputs is None else test_inputs
    positions = [next(i for i, x in enumerate(inputs) if x is t) for t in test_inputs]
    if not positions:
        raise RelayError("check_grad: you must test at least one gradient")
    for target, device in target_devices or [("llvm", cpu(0))]:
        run_bwd = create_executor(executor_kind, mod=IRModule.from_expr(bwd), device=device,
                                  target=target).evaluate()
        run_fwd = create_executor(executor_kind, mod=IRModule.from_expr(fwd), device=device,
                                  target=target).evaluate()
        _, grads = run_bwd(*inputs)
        grads = [g.astype("float64") for g in _outputs(grads)]
        for pos in positions:
            x = inputs[pos]
            numeric = np.zeros(x.shape)
            for i in np.ndindex(*x.shape):
                saved = x[i]
                x[i] = saved + eps
                plus = _total(run_fwd(*inputs))
                x[i] = saved - eps
                minus = _total(run_fwd(*inputs))
                x[i] = saved
                numeric[i] = (plus - minus) / (2 * eps)
            np.testing.assert_allclose(grads[pos], numeric, atol=atol, rtol=rtol,
                                       err_msg=f"gradient of input {pos} on {executor_kind}")


__all__ = ["check_grad"]
