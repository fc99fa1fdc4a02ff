"""Post-dominator tree and path helpers, against hand-computed trees and a brute-force definition.

Brute force: p post-dominates n when deleting p disconnects n from the virtual sink; the
immediate post-dominator is the one every other post-dominator of n post-dominates.
"""
import itertools

import networkx as nx
import numpy as np
import pytest

from relay_backend.analysis.dominators import (VIRTUAL_SINK, check_path, dominator_patterns,
                                               lca_of_consumers, nodes_between,
                                               post_dominator_tree, tree_depths, tree_lca)
from relay_backend.op.pattern import OpPattern

E, B, I, R, O = (OpPattern.ELEMWISE, OpPattern.BROADCAST, OpPattern.INJECTIVE,
                 OpPattern.COMM_REDUCE, OpPattern.OPAQUE)


def graph(edges, extern=(), n=None):
    """A DiGraph on nodes 0..n-1; edges are (u, v) or (u, v, pattern)."""
    g = nx.DiGraph()
    n = n if n is not None else 1 + max(max(e[0], e[1]) for e in edges)
    for i in range(n):
        g.add_node(i, extern_ref=i in extern)
    for e in edges:
        g.add_edge(e[0], e[1], pattern=e[2] if len(e) > 2 else E)
    return g


def brute_ipdom(g):
    sinked = g.copy()
    sinked.add_node(VIRTUAL_SINK)
    for n, d in g.nodes(data=True):
        if d["extern_ref"] or g.out_degree(n) == 0:
            sinked.add_edge(n, VIRTUAL_SINK)
    pdoms = {}
    for n in g.nodes:
        pdoms[n] = set()
        for p in g.nodes:
            if p == n:
                continue
            cut = sinked.copy()
            cut.remove_node(p)
            if not nx.has_path(cut, n, VIRTUAL_SINK):
                pdoms[n].add(p)
    out = {}
    for n in g.nodes:
        cands = [p for p in pdoms[n] if pdoms[n] - {p} <= pdoms[p]]
        assert len(cands) <= 1
        out[n] = cands[0] if cands else None
    return out


def brute_pattern(g, n, p):
    if p is None:
        return None
    kinds = [g.edges[u, v]["pattern"] for u in nodes_between(g, n, p) for v in g.successors(u)]
    return max([E] + kinds)


def test_diamond():
    g = graph([(0, 1, E), (0, 2, I), (1, 3, B), (2, 3, E)], extern={3})
    ipdom = post_dominator_tree(g)
    assert ipdom == {0: 3, 1: 3, 2: 3, 3: None}
    pats = dominator_patterns(g, ipdom)
    assert pats == {0: I, 1: B, 2: E, 3: None}
    assert lca_of_consumers(g, ipdom, 0) == 3


def test_consumers_that_only_meet_at_the_output_have_no_post_dominator():
    # 0 feeds 1 -> 2 (an output) and 3 (another output): the paths only meet at the sink.
    g = graph([(0, 1), (1, 2), (0, 3)], extern={2, 3})
    ipdom = post_dominator_tree(g)
    assert ipdom == {0: None, 1: 2, 2: None, 3: None}
    assert lca_of_consumers(g, ipdom, 0) is None
    assert dominator_patterns(g, ipdom)[0] is None


def test_extern_node_has_no_post_dominator_even_with_one_consumer():
    g = graph([(0, 1), (1, 2)], extern={1, 2})
    ipdom = post_dominator_tree(g)
    assert ipdom == {0: 1, 1: None, 2: None}
    assert lca_of_consumers(g, ipdom, 1) is None


def test_nested_diamonds_hand_computed():
    #      0
    #    /   \
    #   1     2        1 -> 3, 2 -> 3, 3 -> 4, 3 -> 5, 4 -> 6, 5 -> 6, and a skip 0 -> 6
    #    \   /
    #      3
    #    /   \
    #   4     5
    #    \   /
    #      6
    g = graph([(0, 1), (0, 2), (1, 3, R), (2, 3), (3, 4), (3, 5), (4, 6), (5, 6, B), (0, 6, I)],
              extern={6})
    ipdom = post_dominator_tree(g)
    assert ipdom == {0: 6, 1: 3, 2: 3, 3: 6, 4: 6, 5: 6, 6: None}
    depth = tree_depths(ipdom)
    assert depth == {6: 1, 0: 2, 3: 2, 4: 2, 5: 2, 1: 3, 2: 3}
    assert tree_lca(ipdom, depth, 1, 2) == 3 and tree_lca(ipdom, depth, 1, 5) == 6
    pats = dominator_patterns(g, ipdom)
    assert pats[1] == R and pats[2] == E and pats[3] == B and pats[0] == R


@pytest.mark.parametrize("seed", range(25))
def test_random_dags_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    kinds = [E, B, I, R, O]
    edges = [(u, v, kinds[int(rng.integers(len(kinds)))])
             for u, v in itertools.combinations(range(n), 2) if rng.random() < 0.3]
    extern = {n - 1} | {i for i in range(n) if rng.random() < 0.15}
    g = graph(edges, extern=extern, n=n)
    ipdom = post_dominator_tree(g)
    assert ipdom == brute_ipdom(g)
    pats = dominator_patterns(g, ipdom)
    for v in g.nodes:
        assert pats[v] == brute_pattern(g, v, ipdom[v])
        if not g.nodes[v]["extern_ref"] and g.out_degree(v):
            assert lca_of_consumers(g, ipdom, v) == ipdom[v]


def test_check_path_and_nodes_between():
    g = graph([(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)], extern={4})
    assert sorted(nodes_between(g, 0, 3)) == [0, 1, 2]
    seen = []
    assert check_path(g, 0, 3, lambda n, is_sink: seen.append((n, is_sink)) or True)
    assert sorted(seen) == [(1, False), (2, False), (3, True)]  # src unchecked, sink flagged
    assert not check_path(g, 0, 3, lambda n, is_sink: n != 2)
    assert check_path(g, 0, 3, lambda n, is_sink: n != 4)  # nothing past the sink is visited


def test_long_chain_is_not_recursive():
    n = 10_000
    g = graph([(i, i + 1) for i in range(n - 1)], extern={n - 1})
    ipdom = post_dominator_tree(g)
    assert ipdom[0] == 1 and ipdom[n - 2] == n - 1 and ipdom[n - 1] is None
    assert tree_depths(ipdom)[0] == n
    assert dominator_patterns(g, ipdom)[0] == E
