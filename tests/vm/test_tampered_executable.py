"""Hand-edited executables with a recomputed checksum: load_exec validates every field (jumps, dtypes,
registers, shapes, immediates, parameter types, shape-function nodes) and names the function,
instruction and field; what validation cannot see (an allocation smaller than the kernel's
signature, a parameter type loosened to Any) is caught by the checked kernel call that loaded
executables use for every call the bytecode does not fix (tests/vm/test_static_calls.py).
Crash-prone cases run in a subprocess so a segfault fails the test."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.errors import AllocationError, SerializationError
from relay_backend.vm.executable import Executable

from ..artifact_edit import edit_vm

pytestmark = pytest.mark.compile

rewrite = edit_vm      # `code` with its metadata edited and the checksum recomputed


def _instructions(meta, func=0):
    return meta["functions"][func]["instructions"]


def _find(meta, opcode, func=0):
    return next(i for i, ins in enumerate(_instructions(meta, func)) if ins[0] == opcode)


def _add_exe(n=2):
    x, y = relay.var("x", shape=(n,)), relay.var("y", shape=(n,))
    return rvm.compile(relay.IRModule.from_expr(relay.Function([x, y], relay.add(x, y))))


def _if_exe():
    c, x = relay.var("c", shape=(), dtype="bool"), relay.var("x", shape=(2,))
    return rvm.compile(relay.IRModule.from_expr(relay.Function([c, x], relay.If(c, relay.exp(x), x))))


def test_rewrite_helper_round_trips():
    code, lib = _add_exe().save()
    assert rewrite(code, lambda meta: None) == code
    Executable.load_exec(rewrite(code, lambda meta: None), lib)


def _set(index_of, field, value):
    def edit(meta):
        ins = _instructions(meta)
        ins[index_of(meta)][field] = value
    return edit


def _goto_past_end(meta):
    ins = _instructions(meta)
    pc = _find(meta, 12)                              # goto
    ins[pc][1] = len(ins) - pc


def _if_onto_itself(meta):
    _instructions(meta)[_find(meta, 10)][3] = 0       # if's true_offset


def _drop_ret(meta):
    _instructions(meta).pop()


def _huge_register_file(meta):
    meta["functions"][0]["register_file_size"] = 1 << 40


def _bad_param_type(meta):
    meta["functions"][0]["param_types"][0] = {"shape": [2], "dtype": "object"}


def _arity(meta):
    _instructions(meta)[_find(meta, 4)][2] = 7        # invoke_packed arity


CASES = {
    # name: (program, edit, message pattern)
    "goto past the end": (_if_exe, _goto_past_end, r"main\[\d+\] Goto: pc_offset=\d+ jumps to"),
    "if onto itself": (_if_exe, _if_onto_itself, r"main\[\d+\] If: true_offset=0 jumps"),
    "object dtype": (_add_exe, _set(lambda m: _find(m, 5), 4, "object"),
                     r"main\[\d+\] AllocTensor: dtype='object' is not one of the supported dtypes"),
    "string dtype in storage": (_add_exe, _set(lambda m: _find(m, 16), 3, "<U8"),
                                r"main\[\d+\] AllocStorage: dtype_hint='<U8'"),
    "negative dim": (_add_exe, _set(lambda m: _find(m, 5), 3, [-2]), r"main\[\d+\] AllocTensor: shape has the dim -2"),
    "register out of range": (_add_exe, _set(lambda m: _find(m, 5), 5, 99), r"main\[\d+\] AllocTensor: dst=99 is out of range"),
    "negative immediate": (_add_exe, _set(lambda m: _find(m, 4), 3, -1), r"main\[\d+\] InvokePacked: output_size=-1"),
    "arity mismatch": (_add_exe, _arity, r"main\[\d+\] InvokePacked: arity=7"),
    "no ret": (_add_exe, _drop_ret, r"falls off the end"),
    "huge register file": (_add_exe, _huge_register_file, r"function main: register_file_size="),
    "bad parameter type": (_add_exe, _bad_param_type, r"parameter 'x' has a malformed type"),
}


def test_enormous_static_dims_are_an_allocation_error_naming_the_instruction():
    code, lib = _add_exe().save()
    with pytest.raises(AllocationError, match=r"main\[\d+\] AllocStorage: shape=\[1073741824, 1073741824\]"):
        Executable.load_exec(rewrite(code, _set(lambda m: _find(m, 16), 5, [1 << 30, 1 << 30])), lib)


@pytest.mark.parametrize("case", sorted(CASES))
def test_tampered_executable_is_rejected_on_load(case):
    make_exe, edit, pattern = CASES[case]
    code, lib = make_exe().save()
    with pytest.raises(SerializationError, match=pattern):
        Executable.load_exec(rewrite(code, edit), lib)


def _dyn_exe():
    x = relay.var("x", shape=(relay.Any(), 3))
    return rvm.compile(relay.IRModule.from_expr(relay.Function([x], relay.concatenate([x, x], 0))))


def _shape_func_edit(change):
    def edit(meta):
        prog = next(iter(meta["shape_funcs"].values()))
        change(prog)
    return edit


def _forward_reference(prog):
    call = next(n for n in prog["nodes"] if n[0] == "call")
    call[3] = [len(prog["nodes"])]


def _bad_input_index(prog):
    prog["nodes"][0][1] = 5


@pytest.mark.parametrize("change, pattern", [
    (_forward_reference, "does not precede it"),
    (_bad_input_index, "input index 5 out of range"),
    (lambda prog: prog.__setitem__("input_dtypes", ["object"]), "dtype 'object'"),
    (lambda prog: prog["nodes"].append(["exec", "print(1)"]), "not a known node kind"),
])
def test_tampered_shape_function_is_rejected_on_load(change, pattern):
    code, lib = _dyn_exe().save()
    with pytest.raises(SerializationError, match=pattern):
        Executable.load_exec(rewrite(code, _shape_func_edit(change)), lib)


_SUBPROCESS = textwrap.dedent("""
    import hashlib, json, struct, sys
    import numpy as np, relay_backend as relay
    from relay_backend import vm as rvm
    from relay_backend.errors import InputError, RelayError
    sys.path.insert(0, {root!r})
    from tests.artifact_edit import edit_vm as rewrite
    N = 1 << 22
    x, y = relay.var("x", shape=(N,)), relay.var("y", shape=(N,))
    code, lib = rvm.compile(relay.IRModule.from_expr(relay.Function([x, y], relay.add(x, y)))).save()

    {edit}

    exe = rvm.Executable.load_exec(rewrite(code, edit), lib)
    machine = rvm.VirtualMachine(exe, relay.cpu())
    try:
        out = machine.run(*{args})
        print("NO ERROR", out.shape)
    except InputError as err:
        print("INPUT ERROR", err)
""")


def _run_tampered(edit: str, args: str):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = _SUBPROCESS.format(root=root, edit=textwrap.dedent(edit), args=args)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "RB_NO_DISK_CACHE": "1"})
    assert res.returncode == 0, f"exit {res.returncode}: {res.stdout}{res.stderr[-2000:]}"
    return res.stdout


def test_output_allocation_shrunk_below_the_kernel_signature_raises_instead_of_crashing():
    # the storage and the tensor both say 1 float, the static kernel writes 4M: before, the
    # unchecked fast path wrote 16 MB past a 4-byte buffer
    edit = """
        def edit(meta):
            for i in meta['functions'][0]['instructions']:
                if i[0] == 16: i[5] = [1]                   # alloc_storage shape
                if i[0] == 5: i[3] = [1]                    # alloc_tensor shape
                if i[0] == 14 and i[1] == 4 * N: i[1] = 4   # load_consti size
    """
    out = _run_tampered(edit, "[np.ones(N, 'float32'), np.ones(N, 'float32')]")
    assert "INPUT ERROR" in out and "vm_mod_fused_add" in out, out


def test_parameter_type_loosened_to_any_raises_instead_of_reading_out_of_bounds():
    # the entry check now accepts a 1-element x; the static kernel would read 4M floats from it
    edit = """
        def edit(meta):
            meta['functions'][0]['param_types'][0]['shape'] = [None]
    """
    out = _run_tampered(edit, "[np.ones(1, 'float32'), np.ones(N, 'float32')]")
    assert "INPUT ERROR" in out and "vm_mod_fused_add" in out, out


def test_loaded_executable_still_runs_correctly():
    code, lib = _add_exe(4).save()
    exe = Executable.load_exec(code, lib)
    assert exe.checked_calls
    out = rvm.VirtualMachine(exe, relay.cpu()).run(np.arange(4, dtype="float32"), np.ones(4, "float32"))
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3, 4])
