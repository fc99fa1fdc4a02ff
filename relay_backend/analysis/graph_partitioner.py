"""Relay's GraphPartitioner: which nodes of a dataflow graph fuse into one kernel.

Groups are a union-find over the graph's nodes. Each node starts alone, with its pattern; a
group that absorbs an OUT_ELEMWISE_FUSABLE node (conv2d, dense) takes it as its *anchor* and
becomes OUT_ELEMWISE_FUSABLE itself. Nodes are visited in post-order three times, and a node
may only fuse into its immediate post-dominator (merging everything on the paths between):

  phase 0  OUT_ELEMWISE_FUSABLE groups absorb elementwise consumers (the post-dominator relation
           must be exactly ELEMWISE and every node on the way <= BROADCAST); ELEMWISE/BROADCAST
           nodes fuse forward through <= INJECTIVE nodes into a sink that is <= INJECTIVE,
           COMM_REDUCE or OUT_ELEMWISE_FUSABLE;
  phase 1  the same for ELEMWISE/BROADCAST, plus INJECTIVE and TUPLE nodes when everything on
           the way, sink included, is <= INJECTIVE;
  phase 2  injective tuple fields join a tuple that phase 1 fused into a following injective op.

COMM_REDUCE never absorbs its consumers, nothing fuses *into* a tuple in phases 0-1, and a fusion
that would make a group larger than `max_depth` nodes is refused.
"""
from ..errors import RelayError
from ..op.pattern import OpPattern
from .dominators import check_path, dominator_patterns, nodes_between, post_dominator_tree

DEFAULT_MAX_DEPTH = 256

E, B, I = OpPattern.ELEMWISE, OpPattern.BROADCAST, OpPattern.INJECTIVE
REDUCE, OUT_EW = OpPattern.COMM_REDUCE, OpPattern.OUT_ELEMWISE_FUSABLE
TUPLE, OPAQUE = OpPattern.TUPLE, OpPattern.OPAQUE


def _injective_only(kind, is_sink):
    return kind <= I


def _broadcast_only(kind, is_sink):
    return kind <= B


def _elemwise_path(kind, is_sink):
    """Injective ops may sit on parallel branches; the sink may already hold an anchor."""
    if not is_sink:
        return kind <= I
    return kind <= I or kind in (REDUCE, OUT_EW)


class GraphPartitioner:
    """Relay's fusion rules over a dataflow graph: partition() returns, for each node, the root
    of the group it fuses into (see the module docstring).

    Parameters
    ----------
    graph : networkx.DiGraph
        A graph from create_dataflow_graph.
    opt_level : int, optional
        The fusion level: 0 fuses nothing (every node is its own group); above 0 all three
        phases run. Defaults to 2.
    max_depth : int, optional
        The largest number of nodes one group may hold. Defaults to 256.
    """

    def __init__(self, graph, opt_level: int = 2, max_depth: int = DEFAULT_MAX_DEPTH):
        self.graph = graph
        self.opt_level = opt_level
        self.max_depth = max_depth
        nodes = sorted(graph.nodes)
        self.parent = {n: n for n in nodes}
        self.pattern = {n: OpPattern(graph.nodes[n]["pattern"]) for n in nodes}
        self.num_nodes = {n: 1 for n in nodes}
        self.anchor = {n: self.pattern[n] == OUT_EW for n in nodes}
        self.order = nodes

    # --- union-find --------------------------------------------------------------------------
    def find(self, n):
        """The root of the group a node belongs to (union-find, compressing the path walked).

        Parameters
        ----------
        n : object
            A node of the graph.

        Returns
        -------
        root : object
            The group's root node.
        """
        root = n
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[n] != root:  # path compression
            self.parent[n], n = root, self.parent[n]
        return root

    def _merge(self, child, parent):
        child, parent = self.find(child), self.find(parent)
        if child == parent:
            return
        self.num_nodes[parent] += self.num_nodes[child]
        self.parent[child] = parent
        if self.anchor[child]:
            if self.anchor[parent]:
                raise RelayError(
                    f"FuseOps internal error: two anchor ops ({self._describe(child)} and "
                    f"{self._describe(parent)}) ended up in one fused group; please report this")
            self.anchor[parent] = True
            self.pattern[parent] = max(self.pattern[child], self.pattern[parent])

    def _describe(self, n) -> str:
        expr = self.graph.nodes[n]["expr"]
        op = getattr(expr, "op", None)
        return getattr(op, "name", type(expr).__name__)

    # --- path operations ---------------------------------------------------------------------
    def _check_path(self, src, sink, fcond) -> bool:
        return check_path(self.graph, src, sink,
                          lambda n, is_sink: fcond(self.pattern[self.find(n)], is_sink))

    def _commit_fuse(self, src, sink):
        """Merge every node on the paths src -> sink (sink excluded) into sink's group."""
        for n in nodes_between(self.graph, src, sink):
            self._merge(n, sink)

    def _count_with_new_child(self, child, dom_parent) -> int:
        """Nodes in dom_parent's group after fusing child's paths into it (Relay's count: each
        path node contributes the size recorded on its own group entry)."""
        return self.num_nodes[self.find(dom_parent)] + sum(
            self.num_nodes[n] for n in nodes_between(self.graph, child, dom_parent))

    # --- the three phases --------------------------------------------------------------------
    def partition(self) -> dict:
        """{node: root node of its group}; the root is the group's last node in post-order."""
        if self.opt_level > 0 and len(self.order) > 1:
            self.ipdom = post_dominator_tree(self.graph)
            self.dom_pattern = dominator_patterns(self.graph, self.ipdom)
            for phase in (0, 1, 2):
                self._run_fuse(phase)
        return {n: self.find(n) for n in self.order}

    def _run_fuse(self, phase: int):
        for n in self.order:
            kind = self.pattern[n]   # the pattern on this node's own group entry, as Relay
            parent = self.ipdom[n]
            if kind == OPAQUE or parent is None:
                continue
            if self._count_with_new_child(n, parent) > self.max_depth:
                continue
            if phase == 2:
                self._fuse_into_tuple(n, parent, kind)
                continue
            if self.find(n) == self.find(parent):
                continue
            if self.pattern[parent] == TUPLE:
                continue  # do not fuse into a tuple (yet)
            dom_kind = self.dom_pattern[n]
            if kind == OUT_EW:
                if phase == 0 and dom_kind == E and self._check_path(n, parent, _broadcast_only):
                    self._commit_fuse(n, parent)
            elif kind <= B:
                if (dom_kind <= I or dom_kind == REDUCE) and self._check_path(n, parent, _elemwise_path):
                    self._commit_fuse(n, parent)
            elif kind in (I, TUPLE):
                if phase == 1 and self._check_path(n, parent, _injective_only):
                    self._commit_fuse(n, parent)
            # COMM_REDUCE: never fuses into its consumers.

    def _fuse_into_tuple(self, n, parent, kind):
        """Phase 2: an injective field joins its tuple once the tuple sits in an injective group."""
        if kind > I:
            return
        root_kind = self.pattern[self.find(parent)]
        if root_kind == TUPLE:
            return
        if self.pattern[parent] == TUPLE and root_kind <= I:
            if self._check_path(n, parent, _injective_only):
                self._commit_fuse(n, parent)


__all__ = ["GraphPartitioner", "DEFAULT_MAX_DEPTH"]
