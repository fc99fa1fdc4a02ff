"""Helpers shared by the normal-form tests: run a pass on an expression as TVM's run_opt_pass,
and evaluate an expression on the debug interpreter."""
import numpy as np

import relay_backend as relay
from relay_backend import transform


def run_opt_pass(expr, passes, mod=None):
    """Apply `passes` (one or a list) to `expr` inside a module, at opt_level 3; the transformed
    main (or its body when `expr` is not a Function)."""
    passes = passes if isinstance(passes, list) else [passes]
    module = relay.IRModule.from_expr(expr) if mod is None else mod
    with transform.PassContext(opt_level=3):
        module = transform.Sequential(passes)(module)
    entry = module["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def evaluate(expr, mod=None, *args):
    """The numpy value of `expr` (called with `args` when it is a function) on the interpreter."""
    value = relay.create_executor("debug", mod=mod).evaluate(expr)
    if args or callable(value) and not hasattr(value, "numpy"):
        value = value(*args)
    return value.numpy() if hasattr(value, "numpy") else value


def check_eval(expr, expected, mod=None, rtol=1e-7):
    np.testing.assert_allclose(evaluate(expr, mod), expected, rtol=rtol)
