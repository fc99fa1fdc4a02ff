"""The indexed forward graph of a Relay region: node patterns, edge patterns, extern_ref."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.analysis.dataflow_graph import create_dataflow_graph
from relay_backend.errors import RelayError
from relay_backend.op.pattern import OpPattern
from relay_backend.transform import InferTypeLocal


def typed_graph(body, externals=()):
    InferTypeLocal(relay.Function(relay.analysis.free_vars(body), body))
    return create_dataflow_graph(body, externals)


def node_of(g, expr):
    return g.graph["index"][expr]


def test_conv_bias_relu_edges_and_patterns():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(8, 4, 3, 3))
    b = relay.var("b", shape=(8,))
    conv = relay.nn.conv2d(x, w, padding=(1, 1))
    biased = relay.nn.bias_add(conv, b)
    out = relay.nn.relu(biased)
    g = typed_graph(out)
    order = g.graph["post_order"]
    assert order[-1] is out and g.graph["root"] == len(order) - 1
    assert [order[i] for i in sorted(g.nodes)] == order
    n = {e: node_of(g, e) for e in (x, w, b, conv, biased, out)}
    assert g.nodes[n[conv]]["pattern"] == OpPattern.OUT_ELEMWISE_FUSABLE
    assert g.nodes[n[biased]]["pattern"] == OpPattern.BROADCAST
    assert g.nodes[n[x]]["pattern"] == OpPattern.OPAQUE and g.nodes[n[x]]["extern_ref"]
    # same shape as the result: the broadcast edge counts as elementwise; the bias really broadcasts
    assert g.edges[n[conv], n[biased]]["pattern"] == OpPattern.ELEMWISE
    assert g.edges[n[b], n[biased]]["pattern"] == OpPattern.BROADCAST
    assert g.edges[n[x], n[conv]]["pattern"] == OpPattern.OUT_ELEMWISE_FUSABLE
    assert g.nodes[n[out]]["extern_ref"] and not g.nodes[n[biased]]["extern_ref"]


@pytest.mark.parametrize("value, dtype, pattern", [
    (1.0, "float32", OpPattern.ELEMWISE), (2, "int64", OpPattern.ELEMWISE),
    (1.0, "float16", OpPattern.OPAQUE), (np.ones(3), "float32", OpPattern.OPAQUE)])
def test_constants(value, dtype, pattern):
    x = relay.var("x", shape=(3,), dtype=dtype)
    c = relay.const(value, dtype)
    g = typed_graph(relay.add(x, c))
    assert g.nodes[node_of(g, c)]["pattern"] == pattern


def test_tuple_and_getitem():
    x = relay.var("x", shape=(4, 2))
    parts = relay.split(x, 2, axis=0)
    first = parts[0]
    cat = relay.concatenate(relay.Tuple([first, relay.exp(first)]), axis=1)
    g = typed_graph(cat)
    tup = cat.args[0]
    assert g.nodes[node_of(g, tup)]["pattern"] == OpPattern.TUPLE
    assert g.edges[node_of(g, first), node_of(g, tup)]["pattern"] == OpPattern.INJECTIVE
    assert g.nodes[node_of(g, first)]["pattern"] == OpPattern.INJECTIVE
    assert g.edges[node_of(g, parts.tuple_value), node_of(g, first)]["pattern"] == OpPattern.INJECTIVE
    assert g.edges[node_of(g, tup), node_of(g, cat)]["pattern"] == OpPattern.INJECTIVE


def test_if_is_a_boundary_and_captured_nodes_stay_materialized():
    x = relay.var("x", shape=(3,))
    y = relay.exp(x)
    only_in_branch = relay.negative(x)
    cond = relay.greater(relay.sum(x), relay.const(0.0))
    ite = relay.If(cond, relay.nn.relu(y), only_in_branch)
    out = relay.add(ite, y)
    g = typed_graph(out)
    index = g.graph["index"]
    assert only_in_branch not in index           # belongs to the branch's own region
    assert cond not in index                     # so does the condition
    assert g.nodes[index[ite]]["pattern"] == OpPattern.OPAQUE
    assert g.nodes[index[y]]["extern_ref"]       # used inside the branch: must stay a value
    assert g.has_edge(index[y], index[ite]) and index[y] < index[ite]


def test_externals_are_opaque_leaves():
    x = relay.var("x", shape=(3,))
    outer = relay.exp(x)
    inner = relay.negative(outer)
    InferTypeLocal(relay.Function([x], inner))
    g = create_dataflow_graph(inner, externals={outer: outer})
    assert x not in g.graph["index"]             # not reached through the external
    node = g.nodes[node_of(g, outer)]
    assert node["pattern"] == OpPattern.OPAQUE and node["extern_ref"]


def test_untyped_expression_is_a_clear_error():
    x = relay.var("x", shape=(3,))
    with pytest.raises(RelayError, match="InferType"):
        create_dataflow_graph(relay.exp(x))


def test_broadcast_edge_over_a_size_variable_and_any_is_typed_without_tir_comparisons():
    """(n, 3) + (?, 3): deciding whether the add broadcasts compares the shapes structurally (a plain
    `==` on a size variable and Any would build a tir comparison and fail); the program runs."""
    from relay_backend import te
    n = te.size_var("n")
    x, y = relay.var("x", shape=(n, 3)), relay.var("y", shape=(relay.Any(), 3))
    out = relay.add(relay.nn.relu(x), y)
    g = typed_graph(out)
    assert g.edges[node_of(g, out.args[1]), node_of(g, out)]["pattern"] == OpPattern.BROADCAST
    mod = relay.IRModule.from_expr(relay.Function([x, y], out))
    a, b = np.ones((2, 3), "float32"), np.full((2, 3), 2.0, "float32")
    np.testing.assert_array_equal(relay.create_executor("vm", mod=mod).evaluate()(a, b).numpy(), a + b)
