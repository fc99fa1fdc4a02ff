"""Fuzzing every saved artifact a user can load: params blobs, graph JSON, VM executables and
exported library trailers. A few hundred seeded mutations per kind (bit flips, truncations,
byte insertions; JSON fields set to huge, negative or wrongly typed values, lists shortened or
padded, keys dropped), with checksums recomputed so edits reach validation. Every mutation must
either load cleanly and then run with the original inputs to a result or a RelayError, or fail
to load with a RelayError. Any other exception, a hang (a per-mutation alarm) or a crash fails
the test and names the mutation. Allocations are capped with RB_MAX_TENSOR_BYTES and recursion
with the VM's call-depth limit, so a mutation can only cost a bounded amount of memory and time.
"""
import copy
import json
import random
import signal
from contextlib import contextmanager

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import config, graph_executor
from relay_backend import vm as rvm
from relay_backend.errors import RelayError
from relay_backend.runtime import load_module, nd
from relay_backend.runtime.params import load_param_dict, save_param_dict
from relay_backend.transform import PassContext
from relay_backend.vm import loop
from relay_backend.vm.executable import Executable

from ..artifact_edit import edit_library, edit_vm, library_metadata
from ..runtime.kernels import add3_and_scale
from ..vm.programs import count_to

pytestmark = pytest.mark.compile

SECONDS_PER_MUTATION = 10
MUTATIONS = {"params": 1000, "graph": 600, "vm": 600, "library": 400}
ODD_VALUES = [0, 1, -1, 2, 7, 255, 1 << 31, (1 << 31) - 1, 1 << 40, 1 << 62, (1 << 63) - 1, 1 << 63,
              -(1 << 63), 1 << 64, 10 ** 30, 0.5, -2.5, 1e308, float("inf"), float("nan"), "", "x",
              "float32", "object", "__copy", "__nop", "tvm_op", "null", "rb_add3", None, True, False,
              [], [0], [1, 2], [-1], [[0, 0, 0]], {}, {"a": 1}, "0" * 300]


class FuzzTimeout(Exception):
    """A mutation ran past SECONDS_PER_MUTATION."""


@contextmanager
def _deadline(seconds):
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum, frame):
        raise FuzzTimeout(f"no result within {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _expect_clean(description, attempt):
    """Run `attempt()`; a RelayError is a clean rejection, anything else fails naming the mutation."""
    try:
        with _deadline(SECONDS_PER_MUTATION):
            attempt()
    except RelayError:
        return
    except BaseException as err:      # noqa: BLE001 - the point of the test
        raise AssertionError(f"{description}: {type(err).__name__}: {str(err)[:300]}") from err


@pytest.fixture(autouse=True)
def bounded_resources(monkeypatch):
    """Small stated limits so a mutated size or a mutated recursion ends quickly."""
    monkeypatch.setenv("RB_MAX_TENSOR_BYTES", str(64 << 20))
    config.reload()
    monkeypatch.setattr(loop, "MAX_CALL_DEPTH", 200)
    yield
    monkeypatch.undo()
    config.reload()


# ------------------------------------------------------------------------ mutation engines

def mutate_bytes(data: bytes, rng) -> tuple:
    """(mutated bytes, description): a bit flip, a truncation, an insertion or an overwrite."""
    kind = rng.randrange(4)
    at = rng.randrange(len(data))
    if kind == 0:
        bit = rng.randrange(8)
        out = bytearray(data)
        out[at] ^= 1 << bit
        return bytes(out), f"flip bit {bit} of byte {at}"
    if kind == 1:
        return data[:at], f"truncate to {at} bytes"
    if kind == 2:
        junk = rng.randbytes(rng.randrange(1, 9))
        return data[:at] + junk + data[at:], f"insert {junk!r} at {at}"
    word = rng.choice([0, 1, 0xFF, (1 << 63) - 1, 1 << 62, (1 << 64) - 1])
    at -= at % 8
    out = bytearray(data)
    out[at:at + 8] = word.to_bytes(8, "little")[:len(out) - at]
    return bytes(out), f"overwrite bytes {at}..{at + 8} with {word}"


def _paths(obj, prefix=()):
    """Every (path, value) inside a JSON value, containers included."""
    yield prefix, obj
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from _paths(value, prefix + (i,))


def mutate_json(obj, rng) -> tuple:
    """(mutated copy, description): one field of `obj` replaced, tweaked, shortened or dropped."""
    obj = copy.deepcopy(obj)
    paths = [p for p, _ in _paths(obj) if p]
    path = rng.choice(paths)
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    last, value = path[-1], parent[path[-1]]
    choice = rng.randrange(6)
    if choice == 0 and isinstance(value, list) and value:
        del value[rng.randrange(len(value))]
        return obj, f"{list(path)}: dropped one of {len(value) + 1} items"
    if choice == 1 and isinstance(value, list):
        value.append(copy.deepcopy(value[-1]) if value else 0)
        return obj, f"{list(path)}: duplicated the last item"
    if choice == 2 and isinstance(value, int) and not isinstance(value, bool):
        new = rng.choice([value + 1, value - 1, -value, value * 2 + 1, value + (1 << 32)])
        parent[last] = new
        return obj, f"{list(path)}: {value} -> {new}"
    if choice == 3 and isinstance(parent, dict):
        del parent[last]
        return obj, f"{list(path)}: key removed"
    new = copy.deepcopy(rng.choice(ODD_VALUES))
    parent[last] = new
    return obj, f"{list(path)}: {str(value)[:40]} -> {str(new)[:40]}"


# ------------------------------------------------------------------------ params blobs

def test_mutated_params_blobs_load_or_raise_relay_errors():
    rng = random.Random(11)
    blob = save_param_dict({"w": np.linspace(-2, 2, 12, dtype="float32").reshape(3, 4),
                            "empty": np.zeros((0, 5), "int64"), "flag": np.array(True),
                            "half": np.arange(6, dtype="float16").reshape(2, 3), "u": np.arange(3, dtype="uint8")})
    for i in range(MUTATIONS["params"]):
        data, what = mutate_bytes(blob, rng)

        def attempt():
            for value in load_param_dict(data).values():
                value.numpy().tobytes()
        _expect_clean(f"params mutation {i} ({what})", attempt)


# ------------------------------------------------------------------------ graph JSON

@pytest.fixture(scope="module")
def graph_build():
    """Three kernels, a param, a tuple output and a reshape __nop (at opt_level 3)."""
    x = relay.var("x", shape=(2, 6))
    w = relay.const(np.linspace(-1, 1, 12, dtype="float32").reshape(2, 6))
    y = relay.exp(relay.add(x, w))
    z = relay.reshape(relay.negative(y), (3, 4))
    with PassContext(opt_level=0):
        lib = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.Tuple([z, relay.sum(y, axis=1)]))))
    return lib


def test_mutated_graph_json_loads_and_runs_or_raises_relay_errors(graph_build):
    rng = random.Random(12)
    text = graph_build.get_graph_json()
    graph = json.loads(text)
    data = np.linspace(-1, 1, 12, dtype="float32").reshape(2, 6)
    params = graph_build.get_params()
    for i in range(MUTATIONS["graph"]):
        if i % 4 == 0:
            mutated, what = mutate_bytes(text.encode(), rng)
            mutated = mutated.decode("utf-8", "replace")
        else:
            edited, what = mutate_json(graph, rng)
            mutated = json.dumps(edited)

        def attempt():
            gmod = graph_executor.create(mutated, graph_build.get_lib(), relay.cpu())
            gmod._set_params(params)
            gmod.set_input("x", data)
            gmod.run()
            for k in range(gmod.get_num_outputs()):
                gmod.get_output(k).numpy()
        _expect_clean(f"graph mutation {i} ({what})", attempt)


# ------------------------------------------------------------------------ VM executables

def _vm_programs():
    """(name, executable, list of argument tuples) for control flow, tuples, dynamic shapes and recursion."""
    c, x = relay.var("c", shape=(), dtype="bool"), relay.var("x", shape=(2,))
    branchy = relay.Function([c, x], relay.Tuple([relay.If(c, relay.exp(x), relay.negative(x)), x]))
    d = relay.var("d", shape=(relay.Any(), 3))
    dynamic = relay.Function([d], relay.concatenate([d, d], 0))
    vec = np.array([0.5, -1.0], "float32")
    return [("branchy", rvm.compile(relay.IRModule.from_expr(branchy)),
             [(np.array(True), vec), (np.array(False), vec)]),
            ("dynamic", rvm.compile(relay.IRModule.from_expr(dynamic)), [(np.ones((2, 3), "float32"),)]),
            ("recursive", rvm.compile(count_to()), [(np.int32(5),)])]


@pytest.fixture(scope="module")
def vm_programs():
    return [(name, exe.save(), args) for name, exe, args in _vm_programs()]


def test_mutated_vm_executables_load_and_run_or_raise_relay_errors(vm_programs):
    rng = random.Random(13)
    metas = {name: json.loads(_vm_meta_text(code)) for name, (code, _), _ in vm_programs}
    for i in range(MUTATIONS["vm"]):
        name, (code, lib), runs = vm_programs[i % len(vm_programs)]
        if i % 5 == 0:
            mutated, what = mutate_bytes(code, rng)
        else:
            edited, what = mutate_json(metas[name], rng)
            mutated = edit_vm(code, lambda meta, edited=edited: (meta.clear(), meta.update(edited)))

        def attempt():
            machine = rvm.VirtualMachine(Executable.load_exec(mutated, lib), relay.cpu())
            for args in runs:
                _touch(machine.run(*args))
        _expect_clean(f"vm mutation {i} of {name} ({what})", attempt)


def _vm_meta_text(code: bytes) -> bytes:
    (n,) = np.frombuffer(code[12:20], "<u8")
    return code[20:20 + int(n)]


def _touch(value):
    """Read every tensor of a VM result (tuples recursively)."""
    if isinstance(value, nd.NDArray):
        value.numpy().tobytes()
    elif hasattr(value, "fields"):
        for field in value.fields:
            _touch(field)


# ------------------------------------------------------------------------ library trailers

@pytest.fixture(scope="module")
def libraries(tmp_path_factory, graph_build):
    folder = tmp_path_factory.mktemp("fuzzlib")
    add3_and_scale().export_library(str(folder / "kernels.so"))
    graph_build.export_library(str(folder / "graph.so"))
    return [(folder / "kernels.so").read_bytes(), (folder / "graph.so").read_bytes()]


_CALLS = {   # the original signatures' arguments: what a user of the library passes
    "add3": lambda: (nd.array(np.ones((3, 4), "float32")), nd.array(np.ones((3, 4), "float32")),
                     nd.empty((3, 4), "float32")),
    "scale": lambda: (nd.array(np.arange(5, dtype="int32")), nd.empty((5,), "int32")),
}


def _use(loaded):
    """Call a loaded Module's functions (or run a loaded graph factory) with the original inputs."""
    if isinstance(loaded, graph_executor.GraphExecutorFactoryModule):
        gmod = loaded["default"](relay.cpu())
        gmod.set_input("x", np.zeros((2, 6), "float32"))
        gmod.run()
        for k in range(gmod.get_num_outputs()):
            gmod.get_output(k).numpy()
        return
    for name in loaded.function_names:
        if name in _CALLS:
            loaded[name](*_CALLS[name]())


def test_mutated_library_trailers_load_and_run_or_raise_relay_errors(libraries, tmp_path):
    rng = random.Random(14)
    metas = [library_metadata(data) for data in libraries]
    for i in range(MUTATIONS["library"]):
        which = i % len(libraries)
        data = libraries[which]
        if i % 8 == 0:
            mutated, what = mutate_bytes(data[-600:], rng)
            mutated = data[:-600] + mutated
        else:
            edited, what = mutate_json(metas[which], rng)
            mutated = edit_library(data, lambda meta, edited=edited: (meta.clear(), meta.update(edited)))
        path = tmp_path / f"mutated_{i}.so"
        path.write_bytes(mutated)
        _expect_clean(f"library mutation {i} of {['kernels', 'graph'][which]} ({what})",
                      lambda: _use(load_module(str(path))))
        path.unlink()
