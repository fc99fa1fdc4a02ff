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
from relay_backend.vm.bytecode import Opcode
from relay_backend.vm.site_plan import plan_sites
from relay_backend.vm.storage import Storage

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
    internal = {pc for pc, ins in enumerate(code[:-1])
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
