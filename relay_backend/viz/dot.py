"""DOT pictures (graphviz.Digraph) of a Relay module, a compiled graph and its memory plan.

relay_graph: main's dataflow; ops are boxes labelled with their output type, inputs are
ellipses, constants are folded into the label of the op that reads them ("params collapsed"),
and each fused primitive function is a cluster named like its kernel (fused_nn.conv2d_...).
kernel_graph: the compiled graph executor graph; each kernel is a cluster holding its Relay ops.
memory_plan_graph: one table, a row per storage id (its bytes) and a column per node, marking
which node's output lives in which storage.
"""
import html

from ..docstrings import shared_parameters
from ..errors import InputError
from ..ir.expr import Call, Constant, Function, Tuple, TupleGetItem, Var
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..ir.types import type_to_str
from ..op.registry import OpDef
from ..te_compiler.naming import candidate_name
from .compiled import COMPILED_PARAMETERS, compiled_nodes, tensor_text

INSTALL_HINT = 'pip install "relay_backend[viz]" (the graphviz package)'


def _digraph(name: str):
    try:
        import graphviz
    except ImportError:
        raise InputError(f"viz: drawing DOT needs the graphviz package: {INSTALL_HINT}; "
                         f"relay_backend.viz.text() works without it") from None
    dot = graphviz.Digraph(name=name)
    dot.attr(rankdir="TB")
    dot.attr("node", fontname="Helvetica", fontsize="10")
    return dot


def _type_text(expr) -> str:
    ty = getattr(expr, "_checked_type_", None)
    return type_to_str(ty) if ty is not None else ""


def _main_of(mod, func_name: str) -> Function:
    if isinstance(mod, Function):
        return mod
    if not isinstance(mod, IRModule):
        raise InputError(f"viz.relay_graph: expected an IRModule or Function, got {type(mod).__name__}")
    if func_name not in mod:
        raise InputError(f"viz.relay_graph: the module has no function {func_name!r}")
    if getattr(mod[func_name], "_checked_type_", None) is None:
        from ..transform import InferType
        mod = InferType()(mod)
    return mod[func_name]


class _RelayDrawer:
    """Adds the nodes of one function body to a Digraph (or a cluster of it)."""

    def __init__(self):
        self.ids = {}            # expr -> DOT node id
        self.count = 0
        self.clusters = 0

    def fresh(self) -> str:
        self.count += 1
        return f"n{self.count}"

    def draw_body(self, graph, body, bindings: dict) -> str:
        """Draw `body` into `graph`; `bindings` maps a function's params to DOT node ids.
        Returns the id of the node producing the body's value."""
        for expr in post_order(body):
            if expr in bindings:
                self.ids[expr] = bindings[expr]
            elif isinstance(expr, Var):
                self.ids[expr] = self.node(graph, f"{expr.name_hint}\n{_type_text(expr)}", "ellipse")
            elif isinstance(expr, Call) and isinstance(expr.op, Function):
                self.ids[expr] = self.cluster(graph, expr)
            elif isinstance(expr, Call):
                self.ids[expr] = self.op_node(graph, expr)
            elif isinstance(expr, Tuple):
                self.ids[expr] = self.node(graph, "tuple", "point")
                self.edges(graph, expr.fields, self.ids[expr])
            elif isinstance(expr, TupleGetItem):
                self.ids[expr] = self.node(graph, f".{expr.index}\n{_type_text(expr)}", "box")
                self.edges(graph, [expr.tuple_value], self.ids[expr])
            elif isinstance(expr, (Constant, Function)):
                continue                     # constants fold into their reader; functions are clusters
            else:
                self.ids[expr] = self.node(graph, type(expr).__name__, "diamond")
        return self.ids.get(body) or self.node(graph, self.const_text(body), "box")

    def node(self, graph, label: str, shape: str) -> str:
        node_id = self.fresh()
        graph.node(node_id, label=label, shape=shape)
        return node_id

    @staticmethod
    def const_text(expr) -> str:
        return f"const {_type_text(expr)}"

    def op_node(self, graph, call: Call) -> str:
        name = call.op.name if isinstance(call.op, OpDef) else type(call.op).__name__
        consts = [self.const_text(a) for a in call.args if isinstance(a, Constant)]
        label = "\n".join([name, _type_text(call)] + [f"+ {c}" for c in consts])
        node_id = self.node(graph, label, "box")
        self.edges(graph, [a for a in call.args if not isinstance(a, Constant)], node_id)
        return node_id

    def edges(self, graph, sources, target: str) -> None:
        for src in sources:
            if src in self.ids:
                graph.edge(self.ids[src], target)

    def cluster(self, graph, call: Call) -> str:
        prim = call.op
        self.clusters += 1
        with graph.subgraph(name=f"cluster_{self.clusters}") as sub:
            sub.attr(label=candidate_name(prim), style="rounded,filled", fillcolor="#eef3fb",
                     fontname="Helvetica", fontsize="10")
            outer = {}
            for param, arg in zip(prim.params, call.args):
                if isinstance(arg, Constant):
                    continue
                if arg in self.ids:
                    outer[param] = self.ids[arg]
            return self.draw_body(sub, prim.body, outer)


def relay_graph(mod, func_name: str = "main"):
    """The Relay graph of a function as a graphviz.Digraph: parameters, one node per op call
    (with its output type), tuples and the output.

    Parameters
    ----------
    mod : IRModule or Function
        The module (or a function) to draw.
    func_name : str, optional
        Which function of the module to draw. Defaults to "main".

    Returns
    -------
    dot : graphviz.Digraph
        The graph (render it with viz.render, or read its DOT text with .source).
    """
    func = _main_of(mod, func_name)
    dot = _digraph(func_name)
    drawer = _RelayDrawer()
    bindings = {p: drawer.node(dot, f"{p.name_hint}\n{_type_text(p)}", "ellipse") for p in func.params}
    out = drawer.draw_body(dot, func.body, bindings)
    dot.node("output", label=f"output\n{_type_text(func.body)}", shape="ellipse", style="bold")
    dot.edge(out, "output")
    return dot


@shared_parameters(COMPILED_PARAMETERS)
def kernel_graph(compiled, collapse_params: bool = True):
    """The compiled graph as a graphviz.Digraph: inputs, one cluster per kernel node holding its
    Relay ops, and the outputs.

    Parameters
    ----------
    collapse_params : bool, optional
        If True (the default), the params (bound weights) are one summary node instead of one
        node each.

    Returns
    -------
    dot : graphviz.Digraph
        The graph.
    """
    nodes = compiled_nodes(compiled)
    dot = _digraph("compiled")
    params = [n for n in nodes if n.kind == "param"]
    if collapse_params and params:
        total = sum(sum(n.nbytes) for n in params)
        dot.node("params", label=f"{len(params)} params\n{total} bytes", shape="folder")
    for node in nodes:
        node_id = f"k{node.nid}"
        if node.kind == "param" and collapse_params:
            continue
        if node.kind in ("input", "param"):
            dot.node(node_id, label=f"{node.name}\n{tensor_text(node.shapes[0], node.dtypes[0])}",
                     shape="ellipse" if node.kind == "input" else "note")
            continue
        with dot.subgraph(name=f"cluster_{node.nid}") as sub:
            sub.attr(label=node.kernel, style="rounded,filled", fillcolor="#eef3fb",
                     fontname="Helvetica", fontsize="10")
            outs = ", ".join(tensor_text(s, t) for s, t in zip(node.shapes, node.dtypes))
            ops = "\n".join(node.ops) if node.ops else node.kernel
            sub.node(node_id, label=f"{ops}\n-> {outs}", shape="box")
    by_id = {n.nid: n for n in nodes}
    for node in nodes:
        for src in node.inputs:
            source = "params" if collapse_params and by_id[src].kind == "param" else f"k{src}"
            dot.edge(source, f"k{node.nid}")
    return dot


@shared_parameters(COMPILED_PARAMETERS)
def memory_plan_graph(compiled):
    """The static memory plan as a graphviz table: a row per storage id with its bytes, a
    column per node in execution order; a filled cell is a node output living in that
    storage.

    Returns
    -------
    dot : graphviz.Digraph
        The picture.
    """
    nodes = compiled_nodes(compiled)
    sizes = {}
    for node in nodes:
        for sid, nbytes in zip(node.storage_ids, node.nbytes):
            sizes[sid] = max(sizes.get(sid, 0), nbytes)
    owners = {}
    for node in nodes:
        for sid in node.storage_ids:
            owners.setdefault(sid, set()).add(node.nid)
    colors = {"input": "#cfe8cf", "param": "#e6e6e6", "kernel": "#9cc3f0"}
    header = "".join(f"<TD>{node.nid}</TD>" for node in nodes)
    rows = [f"<TR><TD><B>storage</B></TD><TD><B>bytes</B></TD>{header}</TR>"]
    for sid in sorted(sizes):
        cells = "".join(
            f'<TD BGCOLOR="{colors[node.kind]}" TITLE="{html.escape(node.name)}">&nbsp;</TD>'
            if node.nid in owners[sid] else "<TD></TD>" for node in nodes)
        rows.append(f"<TR><TD>{sid}</TD><TD>{sizes[sid]}</TD>{cells}</TR>")
    total = sum(sizes.values())
    caption = f"<TR><TD COLSPAN=\"{len(nodes) + 2}\">memory plan: {len(sizes)} storages, {total} bytes</TD></TR>"
    dot = _digraph("memory_plan")
    dot.node("plan", label=f"<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\">{caption}{''.join(rows)}</TABLE>>",
             shape="plaintext")
    return dot


__all__ = ["relay_graph", "kernel_graph", "memory_plan_graph", "INSTALL_HINT"]
