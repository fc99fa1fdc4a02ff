"""load_exec's bytecode verifier and the VM's remaining run-time guards, on hand-edited
executables (checksum recomputed) and on hand-written bytecode.

The VM compiler only ever jumps forward, so the verifier rejects any backward (or zero) jump:
with forward jumps only, a function's own code always reaches a ret or fatal, and the only way a
program can run forever is recursion, which Relay programs use on purpose (see
test_unbounded_recursion_stops_at_the_call_depth_limit). The verifier follows every path of every
function and tracks which kind of value (tensor, storage, tuple/ADT, closure, or unset) each
register may hold, rejecting an instruction whose operand is certainly the wrong kind or may be
unset; where the kind is only known at run time (a tuple field, a call's result) the VM checks it.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.errors import AllocationError, ExecutionError, SerializationError
from relay_backend.vm import loop
from relay_backend.vm.bytecode import Opcode, make
from relay_backend.vm.executable import Executable, VMFunction

from ..artifact_edit import edit_vm
from .programs import count_to

pytestmark = pytest.mark.compile

IF, GOTO, ALLOC_TENSOR, ALLOC_STORAGE, INVOKE_PACKED, LOAD_CONSTI, RET = 10, 12, 5, 16, 4, 14, 1


def _if_exe():
    c, x = relay.var("c", shape=(), dtype="bool"), relay.var("x", shape=(2,))
    return rvm.compile(relay.IRModule.from_expr(relay.Function([c, x], relay.If(c, relay.exp(x), x))))


def _add_exe():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    return rvm.compile(relay.IRModule.from_expr(relay.Function([x, y], relay.add(x, y))))


def _dyn_exe():
    x = relay.var("x", shape=(relay.Any(), 3))
    return rvm.compile(relay.IRModule.from_expr(relay.Function([x], relay.concatenate([x, x], 0))))


@pytest.fixture(scope="module")
def exes():
    return {"if": _if_exe().save(), "add": _add_exe().save(), "dyn": _dyn_exe().save(),
            "count": rvm.compile(count_to()).save()}


def _code(meta, func=0):
    return meta["functions"][func]["instructions"]


def _at(meta, opcode, func=0, nth=0):
    return [i for i, ins in enumerate(_code(meta, func)) if ins[0] == opcode][nth]


def _set(opcode, field, value, func=0, nth=0):
    def edit(meta):
        _code(meta, func)[_at(meta, opcode, func, nth)][field] = value
    return edit


def _insert(pc, ins, func=0):
    """Insert an instruction at `pc` of a function without jumps (no offsets to move)."""
    def edit(meta):
        code = _code(meta, func)
        assert not any(old[0] in (IF, GOTO) for old in code)
        code.insert(pc, ins)
    return edit


def _closure_as_if_target(meta):
    code = _code(meta)
    code[0] = [8, 0, [], 2]            # `load_consti $2 1` becomes `alloc_closure $2 main []`


def _drop_move_in_false_branch(meta):
    code = _code(meta)
    pc = max(i for i, ins in enumerate(code) if ins[0] == 0)      # the else-branch `move $3 $1`
    code[pc] = [LOAD_CONSTI, 0, code[pc][1]]                      # write $1 instead of $3


CASES = {
    # name: (program, edit, message pattern)
    "goto backwards": ("if", _set(GOTO, 1, -1), r"main\[\d+\] Goto: pc_offset=-1 jumps backwards"),
    "goto onto itself": ("if", _set(GOTO, 1, 0), r"main\[\d+\] Goto: pc_offset=0 jumps"),
    "if false branch backwards": ("if", _set(IF, 4, -3), r"main\[\d+\] If: false_offset=-3 jumps backwards"),
    "tensor used as a storage": ("add", _set(ALLOC_TENSOR, 1, 0),
                                 r"main\[\d+\] AllocTensor: storage=\$0 .*holds a tensor or tuple or closure, "
                                 r"not a storage"),
    "storage used as a kernel output": ("add", _set(INVOKE_PACKED, 4, [0, 1, 3]),
                                        r"main\[\d+\] InvokePacked: args\[2\]=\$3 .*storage, not a tensor"),
    "register written only later": ("if", _set(IF, 1, 5), r"main\[\d+\] If: test=\$5 may be read while unset"),
    "register written on one path only": ("if", _set(RET, 1, 5),
                                          r"main\[\d+\] Ret: result=\$5 may be read while unset"),
    "closure compared by an if": ("if", _closure_as_if_target,
                                  r"main\[3\] If: target=\$2 holds a closure, not a tensor"),
    "register read after kill": ("dyn", _insert(11, [20, 4]),               # kill $4 before its last use
                                 r"main\[\d+\] AllocTensorReg: shape_register=\$4 .*unset"),
    "merge register unset on one path": ("if", _drop_move_in_false_branch, r"main\[\d+\] Ret: result=\$3 .*unset"),
    "invoke with too few arguments": ("count", _set(2, 2, [0], func=1), r"main\[\d+\] Invoke: .*1 argument.*count takes 2"),
    "invoke into a missing register file": ("count", _set(2, 2, [0, 0, 0], func=1),
                                            r"main\[\d+\] Invoke: .*3 argument.*count takes 2"),
    "constant count too large": ("add", lambda meta: meta.__setitem__("num_constants", 3),
                                 r"constant pool holds 0 constants but num_constants is 3"),
    "parameter dtype a list": ("add", lambda meta: meta["functions"][0]["param_types"][0].__setitem__(
        "dtype", ["float32"]), r"parameter 'x' has a malformed type"),          # was a TypeError
    "constant count not an int": ("add", lambda meta: meta.__setitem__("num_constants", "0"),
                                  r"num_constants"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_edited_executable_is_rejected_on_load(case, exes):
    name, edit, pattern = CASES[case]
    code, lib = exes[name]
    with pytest.raises(SerializationError, match=pattern):
        Executable.load_exec(edit_vm(code, edit), lib)


def test_unedited_programs_pass_the_verifier_and_run(exes):
    results = {}
    for name, (code, lib) in exes.items():
        results[name] = rvm.VirtualMachine(Executable.load_exec(code, lib), relay.cpu())
    x = np.array([0.5, -1.0], "float32")
    np.testing.assert_allclose(results["if"].run(np.array(True), x).numpy(), np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(results["if"].run(np.array(False), x).numpy(), x)
    np.testing.assert_array_equal(results["add"].run(x, x).numpy(), 2 * x)
    data = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(results["dyn"].run(data).numpy(), np.concatenate([data, data]))
    assert int(results["count"].run(np.int32(30)).numpy()) == 30


@pytest.mark.parametrize("size, error", [(1 << 50, AllocationError), (-8, AllocationError)])
def test_a_run_time_storage_size_over_the_limit_raises_allocation_error(exes, size, error):
    code, lib = exes["dyn"]
    exe = Executable.load_exec(edit_vm(code, _set(LOAD_CONSTI, 1, size, nth=2)), lib)   # `load_consti $6 8`
    with pytest.raises(error, match=r"alloc_storage"):
        rvm.VirtualMachine(exe, relay.cpu()).run(np.zeros((2, 3), "float32"))


@pytest.mark.parametrize("shape, pattern", [([1 << 30, 1 << 30], r"main\[\d+\] AllocStorage: shape"),
                                            ([0, 1 << 62], r"main\[\d+\] AllocStorage: shape.*cannot be represented")])
def test_static_sizes_are_checked_on_load_naming_the_instruction(exes, shape, pattern):
    code, lib = exes["add"]
    with pytest.raises(AllocationError, match=pattern):
        Executable.load_exec(edit_vm(code, _set(ALLOC_STORAGE, 5, shape)), lib)


# --------------------------------------------------------------------------- API misuse

@pytest.mark.parametrize("bytecode, pattern", [
    ("RBVMEXE", r"load_exec: bytecode must be bytes .*got str"),
    (None, r"load_exec: bytecode must be bytes .*got NoneType"),
    (7, r"load_exec: bytecode must be bytes .*got int"),
])
def test_load_exec_with_a_wrong_bytecode_type(exes, bytecode, pattern):
    with pytest.raises(SerializationError, match=pattern):
        Executable.load_exec(bytecode, exes["add"][1])


@pytest.mark.parametrize("lib", ["kernels.so", 3, [1]])
def test_load_exec_with_a_wrong_lib_type(exes, lib):
    with pytest.raises(SerializationError, match=r"load_exec: lib must be the kernel Module"):
        Executable.load_exec(exes["add"][0], lib)


def test_load_exec_accepts_bytearray_and_memoryview(exes):
    code, lib = exes["add"]
    for view in (bytearray(code), memoryview(code)):
        exe = Executable.load_exec(view, lib)
        x = np.ones(2, "float32")
        np.testing.assert_array_equal(rvm.VirtualMachine(exe, relay.cpu()).run(x, x).numpy(), [2, 2])


# --------------------------------------------------------------------------- run-time guards

def _hand_written(main_code, registers, extra=(), constants=()):
    """An executable from hand-written bytecode, through save() and load_exec (so it is verified)."""
    ident = VMFunction("ident", ["v"], [None], [make(Opcode.Ret, 0)], 1)
    main = VMFunction("main", ["x"], [None], [make(*ins) for ins in main_code], registers)
    functions = [main, ident, *extra]
    exe = Executable(functions, {f.name: i for i, f in enumerate(functions)}, [], {},
                     [relay.nd.array(c) for c in constants], None)
    code, _ = exe.save()
    return Executable.load_exec(code, None)


def _closure_in_a_tuple(then):
    """main(x): t = (closure ident,); v = t.0 (statically any value, a closure at run time); then."""
    return [(Opcode.AllocClosure, 1, [], 1), (Opcode.AllocADT, 0, [1], 2), (Opcode.GetField, 2, 0, 3)] + then


@pytest.mark.parametrize("then, pattern", [
    ([(Opcode.ShapeOf, 3, 4), (Opcode.Ret, 4)], r"shape_of of a VMClosure"),
    ([(Opcode.LoadConst, 0, 0, 4), (Opcode.ReshapeTensor, 3, 4, 5), (Opcode.Ret, 5)], r"reshape_tensor of a VMClosure"),
    ([(Opcode.DeviceCopy, 3, 0, 0, 4), (Opcode.Ret, 4)], r"device_copy of a VMClosure"),
    ([(Opcode.InvokeClosure, 3, [0, 0], 4), (Opcode.Ret, 4)], r"invoke_closure .*2 arguments.*ident takes 1"),
])
def test_wrong_kinds_known_only_at_run_time_raise_execution_errors(then, pattern):
    exe = _hand_written(_closure_in_a_tuple(then), 6, constants=[np.array([2], "int64")])
    with pytest.raises(ExecutionError, match=pattern):
        rvm.VirtualMachine(exe, relay.cpu()).run(np.zeros(2, "float32"))


@pytest.mark.parametrize("newshape, error, pattern", [
    ([-4], AllocationError, r"VM alloc_tensor_reg.*negative"),
    ([1 << 20], ExecutionError, r"needs 4194304 bytes, the storage has 8"),
])
def test_a_bad_run_time_tensor_shape_raises_a_relay_error(newshape, error, pattern):
    main = [(Opcode.LoadConsti, 8, 1), (Opcode.LoadConsti, 0, 2),
            (Opcode.AllocStorage, 1, 64, "float32", 0, [], 3), (Opcode.LoadConst, 0, 0, 4),
            (Opcode.AllocTensorReg, 3, 2, 4, "float32", 5), (Opcode.Ret, 5)]
    exe = _hand_written(main, 6, constants=[np.array(newshape, "int64")])
    with pytest.raises(error, match=pattern):
        rvm.VirtualMachine(exe, relay.cpu()).run(np.zeros(2, "float32"))


def test_unbounded_recursion_stops_at_the_call_depth_limit(monkeypatch):
    # main(x) = main(x): well-formed (Relay loops are recursion) but never returns; the frame
    # stack is bounded, so the run ends with an ExecutionError instead of exhausting memory
    monkeypatch.setattr(loop, "MAX_CALL_DEPTH", 500)
    exe = _hand_written([(Opcode.Invoke, 0, [0], 1), (Opcode.Ret, 1)], 2)
    with pytest.raises(ExecutionError, match=r"call depth .*500"):
        rvm.VirtualMachine(exe, relay.cpu()).run(np.zeros(2, "float32"))


def test_a_huge_constant_count_is_rejected_without_allocating(exes, tmp_path):
    # before: load_exec built a sorted list of 2**31 strings (tens of GB) before comparing counts;
    # a subprocess with a 4 GB address-space limit turns that into a failure instead of an OOM kill
    code, _ = exes["add"]
    path = tmp_path / "exe.bin"
    path.write_bytes(edit_vm(code, lambda meta: meta.__setitem__("num_constants", 1 << 31)))
    script = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        from relay_backend.errors import SerializationError
        from relay_backend.vm.executable import Executable
        try:
            Executable.load_exec(open({str(path)!r}, 'rb').read(), None)
        except SerializationError as err:
            print('REJECTED', err)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=os.getcwd())
    assert "REJECTED" in done.stdout and "num_constants is 2147483648" in done.stdout, \
        done.stdout + done.stderr[-2000:]


def test_an_empty_tensor_where_a_scalar_is_read_is_an_execution_error(exes):
    # found by the artifact fuzz test: the condition tensor's shape [] edited to [0]
    code, lib = exes["count"]
    exe = Executable.load_exec(edit_vm(code, _set(ALLOC_TENSOR, 3, [0])), lib)
    with pytest.raises(ExecutionError, match=r"expected a scalar tensor in a register, found an empty tensor"):
        rvm.VirtualMachine(exe, relay.cpu()).run(np.int32(3))
