"""A loaded executable's straight line calls the kernels whose arguments the bytecode fixes
without the per-call check (vm/static_calls.py), and still checks every other call: hand-edited
allocations (too small, overlapping, misaligned) keep the checked call and raise InputError
instead of writing past a buffer. Crash-prone cases run in a subprocess so a segfault fails."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.errors import InputError
from relay_backend.vm.static_calls import proven_calls
from relay_backend.vm.straight_line import _loaded_constants, _write_counts

from ..artifact_edit import edit_vm
from .programs import batched_kernels

pytestmark = pytest.mark.compile

ALLOC_STORAGE, ALLOC_TENSOR = 16, 5


def _chain(n=8):
    """sigmoid(tanh(exp(x))) as three kernels (opt_level 0):
    pc 4 exp ($0 -> $3), pc 7 tanh ($3 -> $6), pc 11 sigmoid ($6 -> $8)."""
    x = relay.var("x", shape=(n,))
    with relay.transform.PassContext(opt_level=0):
        return rvm.compile(relay.IRModule.from_expr(relay.Function([x], relay.sigmoid(relay.tanh(relay.exp(x))))))


def _reference(x):
    return 1 / (1 + np.exp(-np.tanh(np.exp(x))))


def _proven(machine, func_index=0) -> set:
    body = machine._code[func_index][:-1]
    nparams = len(machine.exe.functions[func_index].params)
    return proven_calls(machine, func_index, body, _loaded_constants(body, nparams), _write_counts(body))


def test_a_loaded_chain_proves_every_call():
    """main's parameter is checked on entry (nothing in the bytecode calls main), so even the
    call reading it is proven; all three kernels run as one native sequence."""
    code, lib = _chain().save()
    machine = rvm.VirtualMachine(rvm.Executable.load_exec(code, lib), relay.cpu())
    assert _proven(machine) == {4, 7, 11}
    x = np.linspace(-2, 2, 8).astype("float32")
    for _ in range(3):
        np.testing.assert_allclose(machine.run(x).numpy(), _reference(x), rtol=1e-5)
    assert batched_kernels(machine) == 3
    with pytest.raises(InputError):
        machine.run(np.ones(7, "float32"))           # the entry check still refuses a wrong shape


def test_a_function_called_from_bytecode_does_not_trust_its_parameters():
    """f(x) = tanh(exp(x)) called by main with any register: the call reading f's parameter is
    checked, the next one (reading exp's allocation) is proven."""
    mod = relay.IRModule()
    f = relay.GlobalVar("f")
    x, y = relay.var("x", shape=(8,)), relay.var("y", shape=(8,))
    mod[f] = relay.Function([x], relay.tanh(relay.exp(x)))
    mod["main"] = relay.Function([y], relay.Call(f, [relay.sigmoid(y)]))
    with relay.transform.PassContext(opt_level=0):
        exe = rvm.compile(mod)
    machine = rvm.VirtualMachine(rvm.Executable.load_exec(*exe.save()), relay.cpu())
    index = machine.exe.global_map["f"]
    body = machine._code[index][:-1]
    kernels = [pc for pc, ins in enumerate(body) if ins[0] == 4]
    names = [machine.exe.primitive_names[body[pc][1]] for pc in kernels]
    assert len(kernels) == 2 and "exp" in names[0] and "tanh" in names[1]
    assert _proven(machine, index) == {kernels[1]}
    data = np.linspace(-2, 2, 8).astype("float32")
    np.testing.assert_allclose(machine.run(data).numpy(), np.tanh(np.exp(1 / (1 + np.exp(-data)))), rtol=1e-5)


def test_a_compiled_executable_needs_no_proof():
    """In-process executables were never checked: their straight line batches all three too."""
    machine = rvm.VirtualMachine(_chain(), relay.cpu())
    x = np.linspace(-2, 2, 8).astype("float32")
    np.testing.assert_allclose(machine.run(x).numpy(), _reference(x), rtol=1e-5)
    assert batched_kernels(machine) == 3


def _edited(edit):
    code, lib = _chain().save()
    return rvm.VirtualMachine(rvm.Executable.load_exec(edit_vm(code, edit), lib), relay.cpu())


def _instructions(meta):
    return meta["functions"][0]["instructions"]


def test_overlapping_carvings_keep_the_checked_call():
    """tanh's output carved from exp's storage at the same offset: its input and output share
    bytes, so the call is not proven and the checked call names the overlap."""
    def edit(meta):
        _instructions(meta)[6][1] = _instructions(meta)[3][1]    # alloc_tensor $6 from $2
    machine = _edited(edit)
    assert 7 not in _proven(machine)
    with pytest.raises(InputError, match="overlaps"):
        machine.run(np.ones(8, "float32"))


def test_a_misaligned_offset_keeps_the_checked_call():
    """tanh's output 4 bytes into a storage grown to hold it there: not ALIGNMENT-aligned."""
    def edit(meta):
        ins = _instructions(meta)
        ins[0][1] = 36                    # load_consti $1: 36 bytes (the storages' size register)
        ins[5][5] = [9]                   # alloc_storage $5: room for 9 floats
        ins.insert(5, [14, 4, 9])         # load_consti $9 4 (a new register)
        ins[7][2] = 9                     # alloc_tensor $6 at offset $9
        meta["functions"][0]["register_file_size"] = 10
    try:
        machine = _edited(edit)
    except relay.errors.RelayError as err:   # refused on load is as good as refused on call
        pytest.skip(f"the loader refuses this edit already: {err}")
    body = machine._code[0][:-1]
    tanh = next(pc for pc, ins in enumerate(body) if ins[0] == 4 and "tanh" in machine.exe.primitive_names[ins[1]])
    assert tanh not in _proven(machine)
    with pytest.raises(relay.errors.RelayError):
        machine.run(np.ones(8, "float32"))


_SUBPROCESS = textwrap.dedent("""
    import sys
    import numpy as np, relay_backend as relay
    from relay_backend import vm as rvm
    from relay_backend.errors import InputError
    sys.path.insert(0, {root!r})
    from tests.artifact_edit import edit_vm
    N = 1 << 22
    x = relay.var("x", shape=(N,))
    with relay.transform.PassContext(opt_level=0):
        exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x], relay.sigmoid(relay.tanh(relay.exp(x))))))
    code, lib = exe.save()

    def edit(meta):
        ins = meta['functions'][0]['instructions']
        ins[5][5] = [1]      # tanh's output storage: one float
        ins[6][3] = [1]      # and its tensor: one float; the static kernel writes N

    machine = rvm.VirtualMachine(rvm.Executable.load_exec(edit_vm(code, edit), lib), relay.cpu())
    try:
        out = machine.run(np.ones(N, 'float32'))
        print("NO ERROR", out.shape)
    except InputError as err:
        print("INPUT ERROR", err)
""")


def test_an_output_shrunk_below_the_kernel_signature_raises_instead_of_crashing():
    """An intermediate (tanh's output, read by sigmoid) shrunk to one float: both calls are
    unproven and the checked call refuses the first, where an unchecked one would write 16 MB
    past a 4-byte buffer."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    res = subprocess.run([sys.executable, "-c", _SUBPROCESS.format(root=root)], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "RB_NO_DISK_CACHE": "1"})
    assert res.returncode == 0, f"exit {res.returncode}: {res.stdout}{res.stderr[-2000:]}"
    assert "INPUT ERROR" in res.stdout and "tanh" in res.stdout, res.stdout


def test_a_reshaped_parameter_is_proven():
    """dense(reshape(x)) (the MLP's flatten): the reshape is a reshape_tensor view of the
    parameter, whose static type the entry check guarantees, so the dense call is proven."""
    x = relay.var("x", shape=(1, 2, 4, 4))
    w = np.random.default_rng(1).standard_normal((5, 32)).astype("float32")
    body = relay.nn.relu(relay.nn.dense(relay.reshape(x, (1, 32)), relay.const(w)))
    exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x], body)))
    machine = rvm.VirtualMachine(rvm.Executable.load_exec(*exe.save()), relay.cpu())
    body_code = machine._code[0][:-1]
    assert any(ins[0] == 18 for ins in body_code)             # a reshape_tensor
    kernels = {pc for pc, ins in enumerate(body_code) if ins[0] == 4}
    assert kernels and _proven(machine) == kernels
    data = np.random.default_rng(2).standard_normal((1, 2, 4, 4)).astype("float32")
    np.testing.assert_allclose(machine.run(data).numpy(), np.maximum(data.reshape(1, 32) @ w.T, 0), rtol=1e-5, atol=1e-6)


def _first(ins, opcode):
    return next(i for i in ins if i[0] == opcode)


@pytest.mark.parametrize("edit_name", ["reshape to a load_consti", "kernel input a load_consti",
                                       "offset a load_const"])
def test_a_constant_of_the_other_kind_is_refused_not_crashed(edit_name):
    """A register of the wrong kind of constant where the straight line binds one at build time
    (a shape from a load_consti's int, a kernel's input from one, an offset from a load_const's
    tensor): the instruction keeps its general step, which reads the register at run time, and
    the run ends in a RelayError, never an AttributeError or a crash."""
    x = relay.var("x", shape=(1, 2, 4, 4))
    body = relay.nn.dense(relay.reshape(x, (1, 32)), relay.const(np.ones((5, 32), "float32")))
    code, lib = rvm.compile(relay.IRModule.from_expr(relay.Function([x], body))).save()

    def edit(meta):
        ins = _instructions(meta)
        consti, const = _first(ins, 14)[-1], _first(ins, 11)[-1]    # their registers
        if edit_name == "reshape to a load_consti":
            _first(ins, 18)[2] = consti
        elif edit_name == "kernel input a load_consti":
            _first(ins, 4)[4][1] = consti                            # the weight
        else:
            _first(ins, 5)[2] = const                                # alloc_tensor's offset
    machine = rvm.VirtualMachine(rvm.Executable.load_exec(edit_vm(code, edit), lib), relay.cpu())
    with pytest.raises(relay.errors.RelayError):
        machine.run(np.ones((1, 2, 4, 4), "float32"))


def _loaded_chain():
    code, lib = _chain().save()
    return rvm.VirtualMachine(rvm.Executable.load_exec(code, lib), relay.cpu())


def _proven_in(machine, body) -> set:
    return proven_calls(machine, 0, body, _loaded_constants(body, 1), _write_counts(body))


def test_a_rewritten_parameter_register_loses_its_entry_check():
    """A move into the parameter's register before exp reads it: the entry check no longer
    describes what the register holds, so exp's call is not proven (decoded body, proof only)."""
    machine = _loaded_chain()
    body = list(machine._code[0][:-1])
    assert 4 in _proven_in(machine, body)
    body.insert(4, (0, 3, 0))                       # move $0 <- $3 (exp's output tensor)
    assert 5 not in _proven_in(machine, body)       # exp, now at pc 5


def test_a_call_claiming_no_outputs_still_has_its_last_argument_checked():
    """tanh's call edited to claim zero outputs and to write into the parameter's register: the
    kernel still writes its last argument, which is not an allocation, so it is not proven."""
    machine = _loaded_chain()
    body = list(machine._code[0][:-1])
    tanh = body[7]
    body[7] = tanh[:3] + (0, (tanh[4][0], 0)) + tanh[5:]
    assert 7 not in _proven_in(machine, body)
