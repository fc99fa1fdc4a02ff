"""The indexed forward dataflow graph of one dataflow region (Relay's IndexedForwardGraph).

FuseOps partitions this graph. A *region* is what an expression computes without entering
control flow: starting at a root (a function body, a let value, an if branch), it follows call
arguments, tuple fields and tuple projections. `Let`, `If`, `Match`, references and function
literals are *boundaries*: they are opaque nodes of the region, and the regions inside them are
fused on their own. Nodes computed by an enclosing region (`externals`) are opaque leaves.

The graph is a networkx.DiGraph whose nodes are post-order indices 0..n-1 (producers before
consumers), with node attributes
    expr        the Relay expression
    pattern     OpPattern of the node: an op call's `op.pattern`; TUPLE for Tuple; INJECTIVE for a
                TupleGetItem of an all-tensor tuple; ELEMWISE for a 0-d int32/int64/float32/
                float64/bool Constant (fused into kernels as a constant); OPAQUE otherwise
    extern_ref  True when the value is used outside the region's fusible dataflow (the region
                root, vars, externals, callees, non-tensor tuple fields, nodes referenced from
                inside a boundary): such a node has no post-dominator and never fuses forward
and edge attribute `pattern`: the consumer op's pattern, except that a BROADCAST edge whose
argument shape equals the call's result shape counts as ELEMWISE (what lets conv2d + bias add
fuse). `graph.graph` holds `post_order` (the expressions by index), `index` (expr -> index) and
`root` (the root's index).
"""
import networkx as nx

from ..errors import RelayError
from ..ir.adt import Constructor, Match
from ..ir.expr import (Call, Constant, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                       RefWrite, Tuple, TupleGetItem, Var)
from ..ir.functor import all_nodes_post_order, post_order
from ..ir.dims import shape_key
from ..ir.types import TensorType, TupleType
from ..op.pattern import OpPattern

BOUNDARY_TYPES = (Let, If, Function, Match, RefCreate, RefRead, RefWrite)
LEAF_TYPES = (Var, GlobalVar, Constant, Op, Constructor)
# Scalar constants of these dtypes are compiled into kernels; others are kernel parameters.
_SIMPLE_CONST_DTYPES = frozenset({"int32", "int64", "float32", "float64", "bool"})


def is_boundary(expr) -> bool:
    """True for the control-flow and scope nodes fusion does not cross."""
    return isinstance(expr, BOUNDARY_TYPES)


def is_op_call(expr) -> bool:
    """A call to a registered operator (as opposed to a function, closure or constructor)."""
    return isinstance(expr, Call) and isinstance(expr.op, Op)


def region_children(expr, externals=()) -> tuple:
    """The inputs of `expr` inside its region (none for leaves, boundaries and externals)."""
    if expr in externals:
        return ()
    if isinstance(expr, Call):
        return expr.args if isinstance(expr.op, Op) else (expr.op, *expr.args)
    if isinstance(expr, Tuple):
        return expr.fields
    if isinstance(expr, TupleGetItem):
        return (expr.tuple_value,)
    return ()


def region_nodes(root, externals=()):
    """(order, captures): the region of `root` in a topological post-order (inputs first, each
    node once), and {boundary: region nodes its inner code refers to}.

    Those captured nodes must be computed before the boundary and stay materialized, so they
    are ordered before it and treated as its inputs.
    """
    def children(e):
        return region_children(e, externals)

    order = list(post_order(root, children=children))
    members = set(order)
    captures = {}
    for node in order:
        if is_boundary(node):
            caps = [n for n in all_nodes_post_order(node) if n is not node and n in members]
            if caps:
                captures[node] = tuple(caps)
    if not captures:
        return order, captures

    def children_with_captures(e):
        return captures.get(e, ()) if is_boundary(e) else region_children(e, externals)

    return list(post_order(root, children=children_with_captures)), captures


def _type(expr):
    t = expr._checked_type_
    if t is None:
        from ..ir.excerpt import excerpt
        raise RelayError(f"dataflow graph: `{excerpt(expr)}` has no type; run "
                         f"transform.InferType() on the module first")
    return t


def constant_pattern(const: Constant) -> OpPattern:
    """ELEMWISE for a scalar of a simple dtype (fused as a constant), else OPAQUE (a parameter)."""
    data = const.data
    if len(data.shape) == 0 and str(data.dtype) in _SIMPLE_CONST_DTYPES:
        return OpPattern.ELEMWISE
    return OpPattern.OPAQUE


def call_pattern(call: Call) -> OpPattern:
    """The op's pattern; OPAQUE for non-op callees and for data-dependent ops on dynamic shapes."""
    op = call.op
    if not isinstance(op, Op):
        return OpPattern.OPAQUE
    pattern = getattr(op, "pattern", None)
    if pattern is None:
        return OpPattern.OPAQUE
    rtype = _type(call)
    if getattr(op, "shape_func", None) is not None and isinstance(rtype, TensorType) and rtype.is_dynamic:
        return OpPattern.OPAQUE
    return OpPattern(pattern)


def edge_pattern(call: Call, arg, op_pattern: OpPattern) -> OpPattern:
    """The pattern of the edge arg -> call: a broadcast that does not broadcast is elementwise."""
    if op_pattern == OpPattern.BROADCAST:
        rtype, atype = _type(call), _type(arg)
        if isinstance(rtype, TensorType) and isinstance(atype, TensorType) and \
                shape_key(rtype.shape) == shape_key(atype.shape):  # `==` on dims builds tir EQ for size vars
            return OpPattern.ELEMWISE
    return op_pattern


class _Builder:
    def __init__(self, order, externals):
        self.index = {e: i for i, e in enumerate(order)}
        self.externals = externals
        self.g = nx.DiGraph(post_order=order, index=self.index)
        for i, e in enumerate(order):
            self.g.add_node(i, expr=e, pattern=OpPattern.OPAQUE, extern_ref=False)

    def extern(self, expr):
        self.g.nodes[self.index[expr]]["extern_ref"] = True

    def link(self, producer, consumer_index: int, pattern: OpPattern):
        """Add producer -> consumer; parallel uses keep the strongest (max) pattern."""
        u = self.index[producer]
        if self.g.has_edge(u, consumer_index):
            old = self.g.edges[u, consumer_index]["pattern"]
            self.g.edges[u, consumer_index]["pattern"] = max(old, pattern)
        else:
            self.g.add_edge(u, consumer_index, pattern=pattern)

    def add(self, i, e, captures):
        node = self.g.nodes[i]
        if e in self.externals or isinstance(e, Var):
            node["extern_ref"] = True
        elif isinstance(e, Constant):
            node["pattern"] = constant_pattern(e)
        elif isinstance(e, Call):
            self._call(i, e, node)
        elif isinstance(e, Tuple):
            node["pattern"] = OpPattern.TUPLE
            for f in e.fields:
                if isinstance(_type(f), TensorType):
                    self.link(f, i, OpPattern.INJECTIVE)
                else:
                    self.extern(f)
        elif isinstance(e, TupleGetItem):
            ttype = _type(e.tuple_value)
            if isinstance(ttype, TupleType) and all(isinstance(f, TensorType) for f in ttype.fields):
                node["pattern"] = OpPattern.INJECTIVE
                self.link(e.tuple_value, i, OpPattern.INJECTIVE)
            else:
                self.extern(e.tuple_value)
        elif is_boundary(e):
            for n in captures.get(e, ()):
                self.link(n, i, OpPattern.OPAQUE)
                self.extern(n)

    def _call(self, i, call, node):
        pattern = call_pattern(call)
        node["pattern"] = pattern
        if not isinstance(call.op, Op):
            self.link(call.op, i, OpPattern.OPAQUE)
            self.extern(call.op)
        for arg in call.args:
            self.link(arg, i, edge_pattern(call, arg, pattern))


def create_dataflow_graph(root, externals=(), materialize=()) -> nx.DiGraph:
    """The indexed forward graph of the region rooted at an expression (see the module
    docstring), the input of GraphPartitioner.

    Parameters
    ----------
    root : Expr
        The region's result.
    externals : container of Expr, optional
        Expressions already computed by enclosing regions; they are opaque leaves here (e.g.
        a value defined before an `if` and used in a branch). Defaults to ().
    materialize : container of Expr, optional
        Expressions that code after this region reuses (e.g. a later let value); those in the
        region are marked extern_ref so they stay values of their own. Defaults to ().

    Returns
    -------
    graph : networkx.DiGraph
        Nodes numbered in post-order, each with its expression (`expr`), op pattern
        (`pattern`) and `extern_ref` flag; edges run from a value to its users.
    """
    order, captures = region_nodes(root, externals)
    builder = _Builder(order, externals)
    for i, e in enumerate(order):
        builder.add(i, e, captures)
    builder.g.nodes[len(order) - 1]["extern_ref"] = True  # the root's value leaves the region
    for e in materialize:
        if e in builder.index:
            builder.extern(e)
    builder.g.graph["root"] = len(order) - 1
    return builder.g


__all__ = ["create_dataflow_graph", "region_nodes", "region_children", "is_boundary", "is_op_call",
           "constant_pattern", "call_pattern", "edge_pattern", "BOUNDARY_TYPES", "LEAF_TYPES"]
