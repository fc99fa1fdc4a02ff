"""Internal sites of a straight line share planned blocks (vm/site_plan.py) and keep every result.

Sites whose tensors are never live at the same time share one block, so a wrong live range
shows as a wrong value: every check is against numpy, on programs where a value is read long
after it was written (diamonds, random DAGs), on multi-output kernels, over repeated runs with
results held."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import config
from relay_backend import vm as rvm
from relay_backend.errors import SerializationError
from relay_backend.vm.bytecode import Opcode
from relay_backend.vm.site_plan import plan_sites
from relay_backend.vm.storage import Storage

from ..artifact_edit import edit_vm, vm_metadata
from .programs import batched_kernels

N = 64


def _vm(fn, opt_level=0):
    """A VM of `fn`; opt_level 0 keeps every op a kernel of its own."""
    with relay.transform.PassContext(opt_level=opt_level):
        exe = rvm.compile(relay.IRModule.from_expr(fn), target="llvm")
    return rvm.VirtualMachine(exe, relay.cpu())


def _blocks_and_sites(machine):
    sites = machine._storage_pool().sites
    blocks = [v for v in sites.values() if isinstance(v, Storage)]
    tensors = [v[1] for v in sites.values() if isinstance(v, tuple) and isinstance(v[1], relay.nd.NDArray)]
    return blocks, tensors


def test_a_value_read_late_keeps_its_block_while_others_reuse_theirs():
    """a = exp(x) is read by the last kernel: the four sites made in between share blocks, but
    never a's."""
    x = relay.var("x", shape=(N,))
    a = relay.exp(x)
    y = a
    for k in range(4):
        y = relay.tanh(relay.add(y, relay.const(float(k + 1))))
    body = relay.multiply(y, a)
    machine = _vm(relay.Function([x], body))
    held = []
    for k in range(6):
        data = np.linspace(-1, 1, N, dtype="float32") * (k + 1) / 4
        held.append((data, machine.run(data)))
    for data, out in held:
        want = np.exp(data)
        y = want
        for k in range(4):
            y = np.tanh(y + k + 1)
        np.testing.assert_allclose(out.numpy(), y * np.exp(data), rtol=1e-5)
    blocks, tensors = _blocks_and_sites(machine)
    assert len(tensors) == 9 and len(blocks) == 3          # a, and the chain in two blocks
    assert sum(t.data_ptr == tensors[0].data_ptr for t in tensors) == 1


def _random_dag(rng, n_nodes):
    """A random DAG of elementwise ops over x; (relay body, numpy function)."""
    unary = [(relay.tanh, np.tanh), (relay.negative, np.negative), (lambda v: relay.multiply(v, relay.const(0.5)),
                                                                   lambda v: v * np.float32(0.5))]
    binary = [(relay.add, np.add), (relay.subtract, np.subtract), (relay.maximum, np.maximum)]
    nodes = [("x",)]
    for _ in range(n_nodes):
        if rng.random() < 0.4:
            nodes.append(("u", int(rng.integers(len(unary))), int(rng.integers(len(nodes)))))
        else:
            nodes.append(("b", int(rng.integers(len(binary))), int(rng.integers(len(nodes))),
                          int(rng.integers(len(nodes)))))
    outs = sorted({len(nodes) - 1, int(rng.integers(1, len(nodes)))})

    def build(values, ops_u, ops_b, tup):
        for node in nodes[1:]:
            if node[0] == "u":
                values.append(ops_u[node[1]](values[node[2]]))
            else:
                values.append(ops_b[node[1]](values[node[2]], values[node[3]]))
        return tup([values[i] for i in outs])
    x = relay.var("x", shape=(N,))
    body = build([x], [u[0] for u in unary], [b[0] for b in binary], relay.Tuple)
    return relay.Function([x], body), lambda v: build([v], [u[1] for u in unary], [b[1] for b in binary], list)


@pytest.mark.parametrize("seed", range(8))
def test_random_dags_match_numpy_over_repeated_runs(seed):
    rng = np.random.default_rng(seed)
    fn, reference = _random_dag(rng, 14)
    machine = _vm(fn)
    held = []
    for _ in range(4):
        data = rng.uniform(-2, 2, N).astype("float32")
        held.append((data, machine.run(data)))
    for data, out in held:
        for got, want in zip(out, reference(data)):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_multi_output_kernel_results_stay_apart():
    """split writes two sites in one kernel: they never share a block with each other or with
    the kernel's input."""
    x = relay.var("x", shape=(2 * N,))
    t = relay.exp(x)
    parts = relay.split(t, indices_or_sections=2, axis=0)
    body = relay.multiply(relay.tanh(parts[0]), relay.add(parts[1], relay.const(1.0)))
    machine = _vm(relay.Function([x], body))
    for k in range(4):
        data = np.linspace(-1, 1, 2 * N, dtype="float32") + k
        e = np.exp(data)
        np.testing.assert_allclose(machine.run(data).numpy(), np.tanh(e[:N]) * (e[N:] + 1), rtol=1e-5)


def test_no_memory_plan_gives_every_site_its_own_block(monkeypatch):
    x = relay.var("x", shape=(N,))
    y = x
    for k in range(5):
        y = relay.tanh(relay.add(y, relay.const(float(k + 1))))
    try:
        monkeypatch.setenv("RB_NO_MEMORY_PLAN", "1")
        config.reload()
        machine = _vm(relay.Function([x], y))
        machine.run(np.zeros(N, "float32"))          # the steps (and the plan) are built here
    finally:
        monkeypatch.delenv("RB_NO_MEMORY_PLAN")
        config.reload()
    data = np.linspace(-1, 1, N, dtype="float32")
    want = data
    for k in range(5):
        want = np.tanh(want + k + 1)
    np.testing.assert_allclose(machine.run(data).numpy(), want, rtol=1e-5)
    blocks, tensors = _blocks_and_sites(machine)
    assert len(blocks) == len(tensors) == 9
    assert len({t.data_ptr for t in tensors}) == 9


def _site_code(machine):
    code = machine._code[machine.exe.global_map["main"]][:-1]
    internal = {pc: 0 for pc, ins in enumerate(code[:-1])
                if ins[0] == Opcode.AllocStorage and code[pc + 1][0] == Opcode.AllocTensor}
    return code, internal


def test_a_site_read_before_its_kernel_writes_it_is_left_out_of_the_plan():
    """A malformed order (a kernel reading a site before the kernel writing it) or a site two
    kernels write keeps a block of its own: only sites with one clear live range are planned."""
    x = relay.var("x", shape=(N,))
    machine = _vm(relay.Function([x], relay.tanh(relay.exp(relay.negative(x)))))
    code, internal = _site_code(machine)
    assert len(plan_sites(code, internal).block) == len(internal)
    kernels = [pc for pc, ins in enumerate(code) if ins[0] == Opcode.InvokePacked]
    # swap the first two kernel calls: the second now reads its input before it is written
    swapped = list(code)
    swapped[kernels[0]], swapped[kernels[1]] = code[kernels[1]], code[kernels[0]]
    plan = plan_sites(swapped, internal)
    first_out = code[kernels[0]][4][-1]
    site = next(pc for pc in internal if code[pc + 1][5] == first_out)
    assert site not in plan.block


# --- in-place concatenation ------------------------------------------------------------------
K = 8


def _weights(rng, n):
    return relay.const(rng.standard_normal((n, K)).astype("float32"))


def _kernel_count(machine) -> tuple:
    """(kernels the straight line runs natively, invoke_packed instructions of main)."""
    code = machine.exe.functions[machine.exe.global_map["main"]].instructions
    return batched_kernels(machine), sum(ins[0] == Opcode.InvokePacked for ins in code)


def _concat_program(widths, batch=1, share_first=False, returned=False, opt_level=3):
    """(VM, numpy reference) of dense(concat([dense(x, W_i)], axis=1), W): dense outputs are
    never fused into the concatenation, which stays a kernel of its own. share_first: the first
    slice also feeds a second dense (so it is read twice); returned: the concatenation is the
    result."""
    rng = np.random.default_rng(len(widths) + batch)
    x = relay.var("x", shape=(batch, K))
    ws = [_weights(rng, w) for w in widths]
    parts = [relay.nn.dense(x, w) for w in ws]
    cat = relay.concatenate(parts, axis=1)
    total = sum(widths)
    w_out = relay.const(rng.standard_normal((4, total)).astype("float32"))
    body = cat if returned else relay.nn.dense(cat, w_out)
    if share_first:
        body = relay.Tuple([body, relay.nn.dense(parts[0], relay.const(np.ones((2, widths[0]), "float32")))])
    with relay.transform.PassContext(opt_level=opt_level):
        exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x], body)), target="llvm")

    def reference(data):
        cat_np = np.concatenate([data @ w.data.numpy().T for w in ws], axis=1)
        out = cat_np if returned else cat_np @ w_out.data.numpy().T
        if share_first:
            return [out, (data @ ws[0].data.numpy().T) @ np.ones((2, widths[0]), "float32").T]
        return [out]
    return rvm.VirtualMachine(exe, relay.cpu()), reference


def _slices_inside_output(machine, width=16, total=32) -> bool:
    """Whether the sites of shape (1, width) lie back to back in the site of shape (1, total)."""
    _, tensors = _blocks_and_sites(machine)
    out = [t.data_ptr for t in tensors if tuple(t.shape) == (1, total)]
    parts = sorted(t.data_ptr for t in tensors if tuple(t.shape) == (1, width))
    return len(out) == 1 and parts == [out[0] + 4 * width * i for i in range(total // width)]


def _check_runs(machine, reference, batch=1, runs=5):
    rng = np.random.default_rng(7)
    held = []
    for _ in range(runs):
        data = rng.standard_normal((batch, K)).astype("float32")
        held.append((data, machine.run(data)))
    for data, out in held:
        got = [out] if isinstance(out, relay.nd.NDArray) else list(out)
        for g, want in zip(got, reference(data)):
            np.testing.assert_allclose(g.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("opt_level", [1, 3])
def test_a_concatenation_of_kernel_outputs_runs_in_place(opt_level):
    """Two dense outputs of 16 floats (64 bytes each: aligned slices) are written straight into
    the concatenation's output, which runs no kernel; the results match numpy."""
    machine, reference = _concat_program([16, 16, 32], opt_level=opt_level)
    _check_runs(machine, reference)
    ran, calls = _kernel_count(machine)
    assert ran == calls - 1
    assert list(machine.exe.concat_kernels.values()) == [(1, 3)]
    machine, reference = _concat_program([16, 16], opt_level=opt_level)
    _check_runs(machine, reference)
    assert _slices_inside_output(machine)


@pytest.mark.parametrize("case", [
    dict(widths=[3, 16]),                       # the second slice starts 12 bytes in: unaligned
    dict(widths=[16, 16], batch=2),             # rows of two slices interleave: not contiguous
    dict(widths=[16, 16], share_first=True),    # a slice another kernel also reads
    dict(widths=[16, 16], returned=True),       # the concatenation is the result (not internal)
])
def test_a_concatenation_that_cannot_run_in_place_still_copies(case):
    machine, reference = _concat_program(**case)
    _check_runs(machine, reference, batch=case.get("batch", 1))
    ran, calls = _kernel_count(machine)
    assert ran == calls


def test_only_pure_concatenations_are_recorded():
    """concatenate fused with an add is a kernel of its own work: never run in place."""
    x = relay.var("x", shape=(1, K))
    rng = np.random.default_rng(3)
    parts = [relay.nn.dense(x, _weights(rng, 16)) for _ in range(2)]
    body = relay.nn.dense(relay.add(relay.concatenate(parts, axis=1), relay.const(1.0)),
                          relay.const(np.ones((2, 32), "float32")))
    with relay.transform.PassContext(opt_level=3):
        exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x], body)), target="llvm")
    assert exe.concat_kernels == {}
    machine = rvm.VirtualMachine(exe, relay.cpu())
    data = np.ones((1, K), "float32")
    want = (np.concatenate([data @ p.args[1].data.numpy().T for p in parts], axis=1) + 1) @ np.ones((2, 32)).T
    np.testing.assert_allclose(machine.run(data).numpy(), want, rtol=1e-4)


def test_a_saved_and_loaded_executable_runs_in_place_and_agrees():
    """concat_kernels is saved: a loaded executable skips the concatenation too, with the same
    results."""
    machine, reference = _concat_program([16, 16])
    code, lib = machine.exe.save()
    loaded = rvm.VirtualMachine(rvm.Executable.load_exec(code, lib), relay.cpu())
    assert loaded.exe.concat_kernels == machine.exe.concat_kernels != {}
    _check_runs(loaded, reference)
    assert _slices_inside_output(loaded)


@pytest.mark.parametrize("table", [[1, 2], {"0": [1]}, {"0": [1, 1]}, {"0": [1.0, 2]},
                                   {"99": [1, 2]}, {"x": [1, 2]}, {"0": "1,2"}])
def test_a_malformed_concat_table_is_refused_on_load(table):
    machine, _ = _concat_program([16, 16])
    code, lib = machine.exe.save()
    with pytest.raises(SerializationError, match="concat_kernels"):
        rvm.Executable.load_exec(edit_vm(code, lambda meta: meta.__setitem__("concat_kernels", table)), lib)


@pytest.mark.parametrize("claim", ["dense", "wrong axis"])
def test_a_false_concat_claim_cannot_reach_outside_the_output(claim):
    """A hand-edited file claiming that a dense kernel only concatenates, or that the
    concatenation joins along axis 0: each claim is checked against the bytecode's allocations
    (shapes, slices inside the output), fails, and the kernel still runs: results stay right."""
    machine, reference = _concat_program([16, 16])
    code, lib = machine.exe.save()
    names = vm_metadata(code)["primitives"]
    if claim == "dense":
        table = {str(next(i for i, n in enumerate(names) if "dense" in n)): [1, 2]}
    else:
        table = {str(i): [0, n] for i, (_, n) in machine.exe.concat_kernels.items()}
    edited = edit_vm(code, lambda meta: meta.__setitem__("concat_kernels", table))
    loaded = rvm.VirtualMachine(rvm.Executable.load_exec(edited, lib), relay.cpu())
    _check_runs(loaded, reference)
    assert not _slices_inside_output(loaded)


def test_dynamic_shapes_beside_an_in_place_concatenation():
    """x of any length (shape functions, run-time allocations) and a static concatenation of y's
    dense outputs in one straight line: both right for changing lengths, results held."""
    rng = np.random.default_rng(5)
    x = relay.var("x", shape=(relay.Any(),))
    y = relay.var("y", shape=(1, K))
    ws = [_weights(rng, 16) for _ in range(2)]
    w_out = relay.const(rng.standard_normal((4, 32)).astype("float32"))
    cat = relay.concatenate([relay.nn.dense(y, w) for w in ws], axis=1)
    body = relay.Tuple([relay.tanh(relay.exp(x)), relay.nn.dense(cat, w_out)])
    with relay.transform.PassContext(opt_level=3):
        exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x, y], body)), target="llvm")
    machine = rvm.VirtualMachine(exe, relay.cpu())
    held = []
    for n in (3, 17, 1, 64, 5):
        xs = rng.standard_normal(n).astype("float32")
        ys = rng.standard_normal((1, K)).astype("float32")
        held.append((xs, ys, machine.run(xs, ys)))
    for xs, ys, out in held:
        np.testing.assert_allclose(out[0].numpy(), np.tanh(np.exp(xs)), rtol=1e-5)
        want = np.concatenate([ys @ w.data.numpy().T for w in ws], axis=1) @ w_out.data.numpy().T
        np.testing.assert_allclose(out[1].numpy(), want, rtol=1e-4, atol=1e-4)
    assert _slices_inside_output(machine)
