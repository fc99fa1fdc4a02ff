"""AlterOpLayout's tuple rules (concatenate) on tuples no rewritten op made: a tuple-typed
parameter's fields are in their original layout, and the build matches numpy."""
import numpy as np

import relay_backend as relay
from relay_backend import vm as rvm


def test_concatenate_of_a_tuple_parameter_builds_at_opt_level_3():
    n = 16
    t = relay.var("t", type_annotation=relay.TupleType([relay.TensorType((n,), "float32")] * 2))
    c = np.arange(2 * n, dtype="float32")
    body = relay.add(relay.concatenate(t, axis=0), relay.const(c))
    with relay.transform.PassContext(opt_level=3):
        exe = rvm.compile(relay.IRModule.from_expr(relay.Function([t], body)), target="llvm")
    machine = rvm.VirtualMachine(exe, relay.cpu())
    a, b = np.full(n, 2.0, "float32"), np.linspace(-1, 1, n).astype("float32")
    np.testing.assert_array_equal(machine.run((a, b)).numpy(), np.concatenate([a, b]) + c)
