"""relay_backend.viz: DOT output parses (pydot) and names every fused kernel; the memory-plan
picture and the text views agree with the graph JSON; SVG is drawn when Graphviz is installed
and skipped with a reason when it is not."""
import json
import sys

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import viz
from relay_backend.errors import InputError
from relay_backend.te_compiler.naming import candidate_name

pydot = pytest.importorskip("pydot")
pytest.importorskip("graphviz")


def _model():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1), kernel_size=(3, 3), channels=4))
    pooled = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    out = relay.Tuple([relay.exp(pooled), relay.nn.batch_flatten(pooled)])
    mod = relay.IRModule.from_expr(relay.Function([x, w], out))
    return mod, {"w": np.ones((4, 3, 3, 3), "float32")}


@pytest.fixture(scope="module")
def built():
    mod, params = _model()
    factory = relay.build(mod, params=params)
    return mod, params, factory, json.loads(factory.get_graph_json())


def _parse(dot):
    graphs = pydot.graph_from_dot_data(dot.source)
    assert graphs and len(graphs) == 1, "DOT did not parse"
    return graphs[0]


def _clusters(graph) -> dict:
    out = {}
    for sub in graph.get_subgraphs():
        if sub.get_name().startswith("cluster_"):
            out[sub.get_name()] = (sub.get_label() or "").strip('"')
    return out


def test_kernel_graph_parses_and_names_every_fused_kernel(built):
    _, _, factory, graph = built
    parsed = _parse(viz.kernel_graph(factory))
    kernels = [n for n in graph["nodes"] if n["op"] == "tvm_op"]
    assert sorted(_clusters(parsed).values()) == sorted(n["attrs"]["func_name"] for n in kernels)
    source = viz.kernel_graph(factory).source
    for node in kernels:
        for op in node["attrs"]["relay_ops"].split(","):
            assert op in source


def test_relay_graph_draws_each_primitive_function_as_a_cluster(built):
    mod, params, _, _ = built
    opt_mod, _ = relay.optimize(mod, params=params)
    prims = [e for e in _primitive_functions(opt_mod["main"])]
    parsed = _parse(viz.relay_graph(opt_mod))
    assert sorted(_clusters(parsed).values()) == sorted(candidate_name(p) for p in prims)
    unfused = _parse(viz.relay_graph(mod))                   # before FuseOps: no clusters, all ops
    assert not _clusters(unfused)
    labels = " ".join((n.get_label() or "") for n in unfused.get_nodes())
    for op in ("nn.conv2d", "nn.relu", "nn.max_pool2d", "exp", "nn.batch_flatten"):
        assert op in labels
    assert "Tensor[(1, 4, 8, 8), float32]" in labels       # shapes and dtypes are shown


def _primitive_functions(func):
    from relay_backend.ir.expr import Call, Function
    from relay_backend.ir.functor import post_order
    return [e.op for e in post_order(func.body) if isinstance(e, Call) and isinstance(e.op, Function)]


def test_memory_plan_picture_and_text_match_the_graph_json(built):
    _, _, factory, graph = built
    sids = graph["attrs"]["storage_id"][1]
    shapes, dtypes = graph["attrs"]["shape"][1], graph["attrs"]["dltype"][1]
    expected = {}
    for sid, shape, dtype in zip(sids, shapes, dtypes):
        expected[sid] = max(expected.get(sid, 0), int(np.prod(shape)) * np.dtype(dtype).itemsize)
    _parse(viz.memory_plan_graph(factory))
    lines = viz.memory_plan_text(factory).splitlines()[1:-1]
    got = {int(line.split()[0]): int(line.split()[1]) for line in lines}
    assert got == expected
    assert f"total {sum(expected.values())} bytes" in viz.memory_plan_text(factory)


def test_text_lists_every_node(built):
    _, _, factory, graph = built
    lines = viz.text(factory).splitlines()
    assert len(lines) == len(graph["nodes"])
    for node, line in zip(graph["nodes"], lines):
        assert (node["attrs"]["func_name"] if node["op"] == "tvm_op" else node["name"]) in line


def test_render_writes_dot_and_draws_or_says_why_not(built, tmp_path, monkeypatch):
    _, _, factory, _ = built
    written = viz.render(viz.kernel_graph(factory), tmp_path / "k", formats=("svg",))
    assert (tmp_path / "k.dot").read_text().startswith("digraph")
    if viz.can_draw():
        assert (tmp_path / "k.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    else:
        assert "not installed" in written["skipped"]
    monkeypatch.setattr("relay_backend.viz.drawing.can_draw", lambda: False)
    written = viz.render(viz.kernel_graph(factory), tmp_path / "again", formats=("png",))
    assert "skipped" in written and not (tmp_path / "again.png").exists()
    with pytest.raises(InputError, match="unknown format"):
        viz.render(viz.kernel_graph(factory), tmp_path / "x", formats=("gif",))


def test_without_the_graphviz_package_the_error_says_what_to_install(built, monkeypatch):
    _, _, factory, _ = built
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(InputError, match=r"relay_backend\[viz\]"):
        viz.kernel_graph(factory)
    assert viz.text(factory)                                  # the text view needs nothing


def test_an_aot_factory_is_refused_with_the_reason(built):
    mod, params, _, _ = built
    aot = relay.build(mod, params=params, executor="aot")
    with pytest.raises(InputError, match='executor="graph"'):
        viz.kernel_graph(aot)
