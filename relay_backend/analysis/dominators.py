"""Post-dominators of a dataflow graph, and the path queries FuseOps asks of them.

A node's immediate post-dominator is the first node every path from it to the region's outputs
passes through; FuseOps may only fuse a node into its post-dominator. The tree comes from
networkx (`immediate_dominators` on the reversed graph, from a virtual sink that every
`extern_ref` node and every node without consumers feeds). A node whose only post-dominator is
the virtual sink has none (None): its value leaves the region, or its consumers only meet there.

Graphs are networkx.DiGraphs with an optional `extern_ref` node attribute and a `pattern` edge
attribute (OpPattern), as analysis.dataflow_graph builds them.
"""
import networkx as nx

from ..op.pattern import OpPattern

VIRTUAL_SINK = ("virtual-sink",)  # a key no dataflow graph uses for a real node


def post_dominator_tree(graph: nx.DiGraph) -> dict:
    """The immediate post-dominator of every node of a dataflow graph (the node every path from
    it to the graph's outputs passes through first).

    Parameters
    ----------
    graph : networkx.DiGraph
        A graph from create_dataflow_graph.

    Returns
    -------
    tree : dict
        {node: its immediate post-dominator, or None for a node whose uses leave the region}.
    """
    rev = nx.DiGraph()
    rev.add_node(VIRTUAL_SINK)
    rev.add_nodes_from(graph.nodes)
    rev.add_edges_from((v, u) for u, v in graph.edges)
    for n, data in graph.nodes(data=True):
        if data.get("extern_ref", False) or graph.out_degree(n) == 0:
            rev.add_edge(VIRTUAL_SINK, n)
    idom = nx.immediate_dominators(rev, VIRTUAL_SINK)
    # Newer networkx leaves the start out of the dict; never read that entry.
    out = {}
    for n in graph.nodes:
        parent = idom.get(n, VIRTUAL_SINK)
        out[n] = None if parent == VIRTUAL_SINK or parent == n else parent
    return out


def tree_depths(ipdom: dict) -> dict:
    """Depth of each node in the post-dominator tree (1 for a node without a post-dominator)."""
    depth = {}
    for start in ipdom:
        chain, n = [], start
        while n is not None and n not in depth:
            chain.append(n)
            n = ipdom[n]
        d = 0 if n is None else depth[n]
        for m in reversed(chain):
            d += 1
            depth[m] = d
    return depth


def tree_lca(ipdom: dict, depth: dict, a, b):
    """Least common ancestor of a and b in the post-dominator tree, or None when there is none."""
    while a is not None and b is not None and a != b:
        if depth[a] > depth[b]:
            a = ipdom[a]
        elif depth[b] > depth[a]:
            b = ipdom[b]
        else:
            a, b = ipdom[a], ipdom[b]
    return a if a is not None and a == b else None


def lca_of_consumers(graph: nx.DiGraph, ipdom: dict, node, depth: dict = None):
    """Relay's way to find a node's post-dominator: the tree LCA of all its consumers.

    None for an extern_ref node or a node without consumers. Equal to ipdom[node] otherwise,
    which the tests check against networkx.
    """
    if graph.nodes[node].get("extern_ref", False):
        return None
    depth = tree_depths(ipdom) if depth is None else depth
    result, first = None, True
    for consumer in graph.successors(node):
        result = consumer if first else tree_lca(ipdom, depth, result, consumer)
        first = False
        if result is None:
            return None
    return result


def dominator_patterns(graph: nx.DiGraph, ipdom: dict) -> dict:
    """{node: max edge pattern over every path from node to its post-dominator} (None if none).

    Computed as Relay does, consumers first: a node's own out-edges, plus the (already known)
    pattern of every tree node stepped over while climbing from a consumer to the post-dominator.
    """
    patterns = {}
    for n in reversed(list(nx.topological_sort(graph))):
        parent = ipdom[n]
        if parent is None:
            patterns[n] = None
            continue
        kind = OpPattern.ELEMWISE
        for _, consumer, data in graph.out_edges(n, data=True):
            kind = max(kind, data.get("pattern", OpPattern.OPAQUE))
            while consumer != parent:
                kind = max(kind, patterns[consumer])
                consumer = ipdom[consumer]
        patterns[n] = OpPattern(kind)
    return patterns


def nodes_between(graph: nx.DiGraph, src, sink) -> list:
    """Nodes on the paths from src to sink: src included, sink excluded (DFS order)."""
    seen, stack, out = {src}, [src], []
    while stack:
        n = stack.pop()
        out.append(n)
        for m in graph.successors(n):
            if m != sink and m not in seen:
                seen.add(m)
                stack.append(m)
    return out


def check_path(graph: nx.DiGraph, src, sink, fcond) -> bool:
    """Relay's CheckPath: every node after src on the paths src -> sink, sink included,
    satisfies fcond(node, is_sink). src itself is not checked."""
    seen, stack = set(), list(graph.successors(src))
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if not fcond(n, n == sink):
            return False
        if n != sink:
            stack.extend(graph.successors(n))
    return True


__all__ = ["post_dominator_tree", "tree_depths", "tree_lca", "lca_of_consumers",
           "dominator_patterns", "nodes_between", "check_path", "VIRTUAL_SINK"]
