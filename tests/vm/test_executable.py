"""The Executable: bytecode listing, save/load (also in a new process), corrupt files, input checks,
and the less common instructions (reshape_tensor, kill, device_copy) on hand-checked programs."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.errors import InputError, SerializationError
from relay_backend.runtime import load_module
from relay_backend.testing import seed_cnn
from relay_backend.vm.bytecode import Opcode, make
from relay_backend.vm.executable import Executable, VMFunction

pytestmark = pytest.mark.compile


def _add_mod():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    return relay.IRModule.from_expr(relay.Function([x, y], relay.add(x, y)))


def test_bytecode_listing_of_a_small_function():
    exe = rvm.compile(_add_mod())
    lines = [line.split(":", 1)[1].strip() for line in exe.bytecode.splitlines() if line[:3].strip().isdigit()]
    assert lines == [
        "load_consti $2 8",
        "load_consti $5 0",
        "alloc_storage $3 $2 64 float32 dev0 [2]",
        "alloc_tensor $4 $3 $5 [2] float32",
        "invoke_packed vm_mod_fused_add (in: $0, $1, out: $4)",
        "ret $4",
    ]
    assert exe.bytecode.startswith("VM Function[0]: main(x, y)")
    assert exe.primitive_ops == ["vm_mod_fused_add"]
    assert exe.get_function_arity("main") == 2 and exe.get_function_param_name("main", 1) == "y"


def test_save_load_round_trip_in_this_process(tmp_path, rng):
    mod, params = seed_cnn.get_workload()
    exe = rvm.compile(mod, params=params)
    code, lib = exe.save()
    assert code[:8] == b"RBVMEXE\x00"
    path = tmp_path / "lib.so"
    lib.export_library(str(path))
    exe2 = Executable.load_exec(code, load_module(str(path)))
    assert exe2.bytecode == exe.bytecode
    data = rng.standard_normal((1, 3, 32, 32)).astype("float32")
    a = rvm.VirtualMachine(exe, relay.cpu()).run(data).numpy()
    b = rvm.VirtualMachine(exe2, relay.cpu()).run(data).numpy()
    np.testing.assert_array_equal(a, b)


def test_save_load_round_trip_in_a_new_process(tmp_path):
    # a dynamic-shape program with control flow: bytecode, constants and shape functions all travel
    x = relay.var("x", shape=(relay.Any(), 3))
    c = relay.var("c", shape=(), dtype="bool")
    w = relay.const(np.arange(3, dtype="float32"))
    body = relay.If(c, relay.add(x, w), relay.concatenate((x, x), axis=0))
    exe = rvm.compile(relay.IRModule.from_expr(relay.Function([c, x], body)))
    code, lib = exe.save()
    (tmp_path / "exe.bin").write_bytes(code)
    lib.export_library(str(tmp_path / "exe.so"))
    script = textwrap.dedent(f"""
        import numpy as np, relay_backend as relay
        from relay_backend import vm
        code = open({str(tmp_path / 'exe.bin')!r}, 'rb').read()
        exe = vm.Executable.load_exec(code, relay.runtime.load_module({str(tmp_path / 'exe.so')!r}))
        m = vm.VirtualMachine(exe, relay.cpu())
        x = np.arange(6, dtype='float32').reshape(2, 3)
        a = m.run(np.array(True), x).numpy(); b = m.run(np.array(False), x).numpy()
        assert np.array_equal(a, x + np.arange(3)), a
        assert np.array_equal(b, np.concatenate([x, x])), b
        print('OK', b.shape)
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "RB_NO_DISK_CACHE": "1"})
    assert res.returncode == 0, res.stderr
    assert "OK (4, 3)" in res.stdout


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "empty"])
def test_corrupt_or_truncated_executable_raises(damage):
    code, lib = rvm.compile(_add_mod()).save()
    data = bytearray(code)
    if damage == "flip":
        data[len(data) // 2] ^= 0x40
    elif damage == "truncate":
        data = data[:len(data) - 17]
    elif damage == "magic":
        data[:8] = b"NOTANEXE"
    else:
        data = bytearray()
    with pytest.raises(SerializationError):
        Executable.load_exec(bytes(data), lib)


def test_loading_with_the_wrong_lib_raises():
    code, _ = rvm.compile(_add_mod()).save()
    x = relay.var("x", shape=(2,))
    _, other = rvm.compile(relay.IRModule.from_expr(relay.Function([x], relay.exp(x)))).save()
    with pytest.raises(SerializationError, match="vm_mod_fused_add"):
        Executable.load_exec(code, other)


def test_wrong_inputs_raise_input_error():
    machine = rvm.VirtualMachine(rvm.compile(_add_mod()), relay.cpu())
    ok = np.ones(2, "float32")
    with pytest.raises(InputError, match="number of provided parameters"):
        machine.run(ok)
    with pytest.raises(InputError, match="parameter 'y'.*shape"):
        machine.run(ok, np.ones(3, "float32"))
    with pytest.raises(InputError, match="parameter 'x'.*dtype int32"):
        machine.run(np.ones(2, "int32"), ok)
    with pytest.raises(InputError, match=r"1 positional and 0 named.*\['z'\] are not parameters"):
        machine.set_input("main", ok, z=ok)          # as TVM: unknown names are ignored
    with pytest.raises(InputError, match="no function"):
        machine.invoke("nope", ok, ok)


def test_set_input_invoke_stateful_get_outputs():
    machine = rvm.VirtualMachine(rvm.compile(_add_mod()), relay.cpu())
    machine.set_input("main", np.ones(2, "float32"), y=np.full(2, 3.0, "float32"))
    machine.invoke_stateful("main")
    assert machine.get_num_outputs() == 1
    np.testing.assert_array_equal(machine.get_output(0).numpy(), [4.0, 4.0])
    np.testing.assert_array_equal(machine.invoke("main").numpy(), [4.0, 4.0])
    result = machine.benchmark(relay.cpu(), repeat=2, number=3)
    assert len(result.results) == 2 and result.median > 0


def test_reshape_only_primitive_becomes_reshape_tensor():
    p = relay.var("p0", shape=(2, 3))
    prim = relay.Function([p], relay.reshape(p, newshape=(3, 2))).with_attr("Primitive", 1)
    prim = prim.with_attr("relay.reshape_only", 1)
    x = relay.var("x", shape=(2, 3))
    exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x], relay.Call(prim, [x]))))
    assert "reshape_tensor" in exe.bytecode and not exe.primitive_ops
    data = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(rvm.VirtualMachine(exe).run(data).numpy(), data.reshape(3, 2))


def test_hand_written_bytecode_with_kill_and_device_copy():
    # main(x) { $1 = device_copy $0; $2 = (x, $1); kill $1; $3 = $2[1]; ret $3 }
    code = [make(Opcode.DeviceCopy, 0, 0, 0, 1), make(Opcode.AllocADT, 0, [0, 1], 2),
            make(Opcode.KillRegister, 1), make(Opcode.GetField, 2, 1, 3), make(Opcode.Ret, 3)]
    exe = Executable([VMFunction("main", ["x"], [None], code, 4)], {"main": 0}, [], {}, [], None)
    saved, _ = exe.save()
    exe = Executable.load_exec(saved, None)
    data = np.arange(3, dtype="float32")
    arg = relay.nd.array(data)
    out = rvm.VirtualMachine(exe, relay.cpu()).run(arg)
    np.testing.assert_array_equal(out.numpy(), data)
    assert out.view_numpy() is not arg.view_numpy()       # device_copy copies


def test_out_of_range_register_in_a_file_is_rejected():
    code = [make(Opcode.Ret, 7)]
    saved, _ = Executable([VMFunction("main", [], [], code, 1)], {"main": 0}, [], {}, [], None).save()
    with pytest.raises(SerializationError, match="out of range"):
        Executable.load_exec(saved, None)
