"""Plain-text views of a compiled graph for a terminal: one line per kernel, and the memory plan
as rows of storage ids over node order."""
from ..docstrings import shared_parameters
from .compiled import COMPILED_PARAMETERS, compiled_nodes, tensor_text


@shared_parameters(COMPILED_PARAMETERS)
def text(compiled) -> str:
    """The compiled graph as text, one line per node: `%3 = kernel(%0, %1) -> Tensor[...]  [ops]`.

    Returns
    -------
    text : str
        The lines.
    """
    lines = []
    for node in compiled_nodes(compiled):
        outs = ", ".join(tensor_text(s, t) for s, t in zip(node.shapes, node.dtypes))
        if node.kind != "kernel":
            lines.append(f"%{node.nid} = {node.kind} {node.name}: {outs}")
            continue
        args = ", ".join(f"%{src}" for src in node.inputs)
        ops = ", ".join(node.ops)
        lines.append(f"%{node.nid} = {node.kernel}({args}) -> {outs}  [{ops}]")
    return "\n".join(lines)


@shared_parameters(COMPILED_PARAMETERS)
def memory_plan_text(compiled) -> str:
    """The memory plan as text: per storage id, its bytes and a mark under each node whose
    output lives there (I input, P param, # kernel output), nodes in execution order.

    Returns
    -------
    text : str
        The table.
    """
    nodes = compiled_nodes(compiled)
    marks = {"input": "I", "param": "P", "kernel": "#"}
    sizes, owners = {}, {}
    for node in nodes:
        for sid, nbytes in zip(node.storage_ids, node.nbytes):
            sizes[sid] = max(sizes.get(sid, 0), nbytes)
            owners.setdefault(sid, {})[node.nid] = marks[node.kind]
    width = len(str(max(sizes.values(), default=0)))
    lines = [f"storage {'bytes'.rjust(width)}  nodes 0..{len(nodes) - 1}"]
    for sid in sorted(sizes):
        row = "".join(owners[sid].get(node.nid, ".") for node in nodes)
        lines.append(f"{sid:>7} {str(sizes[sid]).rjust(width)}  {row}")
    lines.append(f"total {sum(sizes.values())} bytes in {len(sizes)} storages")
    return "\n".join(lines)


__all__ = ["text", "memory_plan_text"]
