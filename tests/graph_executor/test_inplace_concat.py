"""In-place concatenation (issue 16): a concatenate whose inputs are each written by a kernel and
read by nothing else, along an axis whose slices are contiguous and aligned, runs no kernel: the
producers write straight into its output (graph JSON: a `__nop` with several inputs, the inputs
at byte offsets in the output's storage). Every other concatenation keeps its copy. Results equal
the debug interpreter's (the numpy oracle) within 1e-5; the graph JSON's storage plan passes the
loader's storage check (parse_graph runs graph_executor.storage_check)."""
import json

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import SerializationError
from relay_backend.graph_executor import debug_executor
from relay_backend.graph_executor.graph import parse_graph
from relay_backend.graph_executor.runtime import GraphModule

RNG = np.random.default_rng(0)
X_SHAPE = (1, 4, 4, 4)       # a 1x1 conv to 16 channels makes 16*4*4 floats = 1024 bytes, aligned


def _conv(data, name, channels=16, in_channels=4):
    return relay.nn.conv2d(data, relay.var(name, shape=(channels, in_channels, 1, 1)), channels=channels,
                           kernel_size=(1, 1))


def _build(body, opt_level=2):
    mod = relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(body), body))
    inputs = {v.name_hint: RNG.standard_normal([int(d) for d in v.type_annotation.shape]).astype("float32")
              for v in mod["main"].params}
    with relay.transform.PassContext(opt_level=opt_level):
        factory = relay.build(mod, target="llvm")
    return mod, factory, inputs


def _check_results(mod, factory, inputs, runs=2):
    """The graph executor equals the interpreter, run after run (storages are reused)."""
    module = factory["default"](relay.cpu())
    for _ in range(runs):
        fresh = {k: RNG.standard_normal(v.shape).astype("float32") for k, v in inputs.items()}
        module.run(**fresh)
        expected = relay.create_executor("debug", mod=mod).evaluate()(**fresh)
        outputs = expected.fields if hasattr(expected, "fields") else [expected]
        for i, value in enumerate(outputs):
            np.testing.assert_allclose(module.get_output(i).numpy(), value.numpy(), rtol=1e-5, atol=1e-5)


def _graph(factory) -> dict:
    return json.loads(factory.get_graph_json())


def _in_place(graph) -> list:
    """Node ids of the in-place concatenations."""
    return [i for i, n in enumerate(graph["nodes"])
            if n.get("attrs", {}).get("func_name") == "__nop" and len(n["inputs"]) > 1]


def _kernels(graph) -> int:
    return sum(1 for n in graph["nodes"] if n["op"] == "tvm_op" and n["attrs"]["func_name"] != "__nop")


def _copies(graph) -> int:
    return sum(1 for n in graph["nodes"] if n["op"] == "tvm_op" and "concatenate" in n["attrs"]["func_name"])


@pytest.mark.parametrize("opt_level", [2, 3])
def test_producers_write_into_the_concatenation(opt_level):
    x = relay.var("x", shape=X_SHAPE)
    body = _conv(relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1), "wc", 4, 32)
    mod, factory, inputs = _build(body, opt_level)
    graph = _graph(factory)
    assert len(_in_place(graph)) == 1 and _copies(graph) == 0
    (nop,) = _in_place(graph)
    row, sids = graph["node_row_ptr"], graph["attrs"]["storage_id"][1]
    offsets = graph["attrs"]["storage_offset"][1]
    slots = [row[src] + k for src, k, _ in graph["nodes"][nop]["inputs"]]
    assert {sids[e] for e in slots} == {sids[row[nop]]}
    assert [offsets[e] for e in slots] == [0, 16 * 4 * 4 * 4]
    parse_graph(graph)                      # the storage check accepts the views
    _check_results(mod, factory, inputs)


def test_the_kernel_count_drops_by_the_concatenations():
    x = relay.var("x", shape=X_SHAPE)
    body = relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1)
    fed = _conv(body, "wc", 4, 32)
    _, factory, _ = _build(fed)
    # two convolutions and the consumer: no concatenate kernel
    assert _kernels(_graph(factory)) == 3


@pytest.mark.parametrize("opt_level, in_place", [(0, 2), (2, 1)])
def test_nested_concatenations_are_in_place(opt_level, in_place):
    """Unfused (opt_level 0) the inner concatenation is a view of the outer one and its inputs
    views of it; fused, one function concatenates twice along one axis: one __nop."""
    x = relay.var("x", shape=X_SHAPE)
    inner = relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1)
    outer = relay.concatenate([inner, _conv(x, "wc")], axis=-3)
    mod, factory, inputs = _build(_conv(outer, "wd", 4, 48), opt_level)
    graph = _graph(factory)
    assert len(_in_place(graph)) == in_place and _copies(graph) == 0
    assert sorted(set(graph["attrs"]["storage_offset"][1]) - {0}) == [1024, 2048]      # from the root
    parse_graph(graph)
    _check_results(mod, factory, inputs)


def test_a_concatenation_that_is_the_graph_output():
    x = relay.var("x", shape=X_SHAPE)
    mod, factory, inputs = _build(relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1))
    assert len(_in_place(_graph(factory))) == 1
    _check_results(mod, factory, inputs)


def _not_in_place(body):
    mod, factory, inputs = _build(body)
    graph = _graph(factory)
    assert _in_place(graph) == [] and _copies(graph) >= 1 and "storage_offset" not in graph["attrs"]
    _check_results(mod, factory, inputs)


def test_inputs_shared_by_two_concatenations_keep_the_copies():
    """DenseNet's pattern: every layer concatenates all earlier features again."""
    x = relay.var("x", shape=X_SHAPE)
    a, b = _conv(x, "wa"), _conv(x, "wb")
    first = relay.concatenate([a, b], axis=1)
    second = relay.concatenate([a, b, _conv(_conv(first, "wc", 16, 32), "wd", 16, 16)], axis=1)
    _not_in_place(relay.Tuple([_conv(second, "we", 4, 48), relay.nn.relu(first)]))


def test_an_input_used_twice_keeps_the_copy():
    x = relay.var("x", shape=X_SHAPE)
    a = _conv(x, "wa")
    _not_in_place(_conv(relay.concatenate([a, a], axis=1), "wc", 4, 32))


def test_a_graph_input_or_a_constant_keeps_the_copy():
    x = relay.var("x", shape=X_SHAPE)
    y = relay.var("y", shape=(1, 16, 4, 4))
    _not_in_place(_conv(relay.concatenate([_conv(x, "wa"), y], axis=1), "wc", 4, 32))
    const = relay.const(RNG.standard_normal((1, 16, 4, 4)).astype("float32"))
    _not_in_place(_conv(relay.concatenate([const, _conv(x, "wa")], axis=1), "wc", 4, 32))


def test_an_input_also_read_elsewhere_keeps_the_copy():
    x = relay.var("x", shape=X_SHAPE)
    a = _conv(x, "wa")
    _not_in_place(relay.Tuple([_conv(relay.concatenate([a, _conv(x, "wb")], axis=1), "wc", 4, 32),
                               _conv(a, "wd", 4, 16)]))


def test_non_contiguous_or_unaligned_slices_keep_the_copy():
    x2 = relay.var("x", shape=(2, 4, 4, 4))                  # batch 2: channel slices interleave
    _not_in_place(_conv(relay.concatenate([_conv(x2, "wa"), _conv(x2, "wb")], axis=1), "wc", 4, 32))
    x3 = relay.var("x", shape=(1, 4, 3, 3))                  # one 3x3 channel: 36 bytes, unaligned
    _not_in_place(_conv(relay.concatenate([_conv(x3, "wa", 1), _conv(x3, "wb", 16)], axis=1), "wc", 4, 17))


def test_the_loader_refuses_offsets_that_overlap_or_misplace_a_slice():
    x = relay.var("x", shape=X_SHAPE)
    _, factory, _ = _build(_conv(relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1), "wc", 4, 32))
    graph = _graph(factory)
    (nop,) = _in_place(graph)
    row = graph["node_row_ptr"]
    second = row[graph["nodes"][nop]["inputs"][1][0]]
    overlapping = json.loads(json.dumps(graph))
    overlapping["attrs"]["storage_offset"][1][second] = 0
    with pytest.raises(SerializationError, match="offset"):
        parse_graph(overlapping)
    stray = json.loads(json.dumps(graph))
    stray["attrs"]["storage_offset"][1][row[nop]] = 64           # the output is no concat input
    with pytest.raises(SerializationError, match="storage_offset"):
        parse_graph(stray)
    GraphModule(json.dumps(graph), factory.get_lib(), relay.cpu())   # the original loads


def test_the_debug_executor_checks_every_kernel_of_an_in_place_graph():
    x = relay.var("x", shape=X_SHAPE)
    _, factory, inputs = _build(_conv(relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1), "wc", 4, 32))
    rows = debug_executor.compare_with_interpreter(factory, inputs)
    assert len(rows) == _kernels(_graph(factory)) == 3 and all(r["ok"] for r in rows)


def test_an_exported_in_place_graph_loads_and_runs(tmp_path):
    x = relay.var("x", shape=X_SHAPE)
    mod, factory, inputs = _build(_conv(relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1), "wc", 4, 32))
    path = tmp_path / "inplace.so"
    factory.export_library(str(path))
    loaded = relay.runtime.load_module(str(path))
    assert len(_in_place(json.loads(loaded.get_graph_json()))) == 1
    _check_results(mod, loaded, inputs, runs=1)
