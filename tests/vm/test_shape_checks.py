"""Kernels whose inputs have `Any` dims but whose output is static: the VM checks the run-time input
shapes (the ops' type relations on the real shapes) before the kernel runs, so a mismatch raises
InputError naming the op and the shapes, as the debug interpreter raises, instead of a wrong
answer, an out-of-bounds read or a crash."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.errors import InputError, RelayError

from .conftest import assert_same

pytestmark = pytest.mark.compile


def _both_raise(func, args, match):
    """The debug interpreter rejects `args`; the VM raises InputError whose message matches."""
    mod = relay.IRModule.from_expr(func)
    with pytest.raises(RelayError):
        relay.create_executor("debug", mod=mod).evaluate()(*args)
    with pytest.raises(InputError, match=match):
        relay.create_executor("vm", mod=mod).evaluate()(*args)


def _both_agree(func, args):
    mod = relay.IRModule.from_expr(func)
    vm_out = relay.create_executor("vm", mod=mod).evaluate()(*args)
    ref = relay.create_executor("debug", mod=mod).evaluate()(*args)
    assert_same(vm_out, ref)


def _add_any_static():
    x, y = relay.var("x", shape=(relay.Any(),)), relay.var("y", shape=(3,))
    return relay.Function([x, y], relay.add(x, y))


def test_static_output_with_dynamic_input_gets_a_shape_check():
    exe = rvm.compile(relay.IRModule.from_expr(_add_any_static()))
    assert "vm_mod_shape_check_add (in: $0, $1, out: )" in exe.bytecode
    # and a fully static call does not
    x = relay.var("x", shape=(3,))
    exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))))
    assert "shape_check" not in exe.bytecode


@pytest.mark.parametrize("n", [5, 2])
def test_broadcast_add_with_mismatched_any_dim_raises(n):
    _both_raise(_add_any_static(), [np.ones(n, "float32"), np.ones(3, "float32")],
                rf"add rejects the run-time input shapes \({n},\), \(3,\)")


@pytest.mark.parametrize("n", [3, 1])
def test_broadcast_add_with_matching_any_dim_still_runs(n):
    _both_agree(_add_any_static(), [np.arange(n, dtype="float32"), np.arange(3, dtype="float32")])


def test_reshape_after_exp_rejects_a_wrong_element_count():
    x = relay.var("x", shape=(relay.Any(), 4))
    func = relay.Function([x], relay.reshape(relay.exp(x), (2, 8)))
    _both_raise(func, [np.ones((3, 4), "float32")], r"reshape rejects the run-time input shapes \(3, 4\)")
    _both_agree(func, [np.ones((4, 4), "float32")])


def test_reshape_only_primitive_rejects_a_wrong_element_count():
    x = relay.var("x", shape=(relay.Any(), 4))
    func = relay.Function([x], relay.reshape(x, (2, 8)))
    _both_raise(func, [np.ones((3, 4), "float32")], r"reshape rejects the run-time input shapes \(3, 4\)")
    _both_agree(func, [np.arange(16, dtype="float32").reshape(4, 4)])


def test_conv2d_with_any_channels_rejects_the_wrong_channel_count():
    x, w = relay.var("x", shape=(1, relay.Any(), 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    func = relay.Function([x, w], relay.nn.conv2d(x, w))
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    _both_raise(func, [np.ones((1, 2, 8, 8), "float32"), weight],
                r"nn.conv2d rejects the run-time input shapes \(1, 2, 8, 8\), \(4, 3, 3, 3\)")
    _both_agree(func, [rng.standard_normal((1, 3, 8, 8)).astype("float32"), weight])


def test_concatenate_times_a_constant_rejects_the_wrong_row_count():
    x, y = relay.var("x", shape=(relay.Any(), 3)), relay.var("y", shape=(4, 3))
    c = relay.const(np.arange(18, dtype="float32").reshape(6, 3))
    func = relay.Function([x, y], relay.multiply(relay.concatenate([x, y], 0), c))
    _both_raise(func, [np.ones((3, 3), "float32"), np.ones((4, 3), "float32")],
                r"multiply rejects the run-time input shapes \(3, 3\), \(4, 3\)")
    _both_agree(func, [np.ones((2, 3), "float32"), np.full((4, 3), 2.0, "float32")])


def test_dynamic_output_mismatch_is_an_input_error_too():
    x, y = relay.var("x", shape=(relay.Any(),)), relay.var("y", shape=(relay.Any(),))
    _both_raise(relay.Function([x, y], relay.add(x, y)), [np.ones(2, "float32"), np.ones(3, "float32")],
                r"add rejects the run-time input shapes \(2,\), \(3,\)")


def test_shape_check_travels_with_a_saved_executable():
    exe = rvm.compile(relay.IRModule.from_expr(_add_any_static()))
    code, lib = exe.save()
    loaded = rvm.Executable.load_exec(code, lib)
    machine = rvm.VirtualMachine(loaded, relay.cpu())
    with pytest.raises(InputError, match="add rejects"):
        machine.run(np.ones(2, "float32"), np.ones(3, "float32"))
    np.testing.assert_array_equal(machine.run(np.ones(1, "float32"), np.ones(3, "float32")).numpy(), [2, 2, 2])


def test_huge_static_input_with_a_short_any_input_does_not_crash():
    # before the check, the kernel read 16M floats from a 2-element input: a segfault
    script = textwrap.dedent("""
        import numpy as np, relay_backend as relay
        from relay_backend.errors import InputError
        x, y = relay.var("x", shape=(relay.Any(),)), relay.var("y", shape=(1 << 24,))
        mod = relay.IRModule.from_expr(relay.Function([x, y], relay.add(x, y)))
        run = relay.create_executor("vm", mod=mod).evaluate()
        try:
            out = run(np.ones(2, "float32"), np.ones(1 << 24, "float32"))
            print("NO ERROR", out.shape)
        except InputError as err:
            print("INPUT ERROR", err)
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "RB_NO_DISK_CACHE": "1"})
    assert res.returncode == 0, f"exit {res.returncode}: {res.stdout}{res.stderr[-2000:]}"
    assert "INPUT ERROR" in res.stdout and "(2,), (16777216,)" in res.stdout, res.stdout
