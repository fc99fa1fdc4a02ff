"""Proof, on load, that a graph JSON's storage plan never lets two live tensors share memory.

A graph JSON carries its own memory plan: entries with one `storage_id` are views of one pool.
Codegen's planner shares a pool only between entries whose live ranges are disjoint, but a
hand-edited file can give one id to two outputs, or to an intermediate a later kernel still
reads; the kernels then overwrite each other's results and the graph returns wrong numbers with
no error. `check_storage_plan` rebuilds the planner's view of the graph (an Entry per tensor,
a Step per kernel node in order, a `__nop` sharing its input's id as an alias, a `__nop` with
several inputs as an in-place concatenation whose inputs are views of its output) and runs
analysis.memory_plan.check_plan, the planner's own independent liveness checker (through
analysis.memory_views.check_views when there are views).
"""
from ..analysis.memory_plan import Entry, MemoryPlan, MemoryPlanError, Step, check_plan, tensor_nbytes
from ..analysis.memory_views import check_views
from ..errors import SerializationError

NOP = "__nop"


def planner_view(graph) -> tuple:
    """(steps, entries, MemoryPlan, views, dropped) of a parsed graph, as analysis.memory_plan
    and analysis.memory_views see them: a __nop with several inputs is an in-place
    concatenation whose inputs are views of its output (dropped: the indices of those steps)."""
    heads = {graph.entry_id(nid, k) for nid, k in graph.heads}
    entries, steps, views, dropped = [], [], {}, set()
    for nid, node in enumerate(graph.nodes):
        for k in range(node.num_outputs):
            eid = graph.entry_id(nid, k)
            if node.op == "null":
                kind = "input"
            else:
                kind = "output" if eid in heads else "intermediate"
            entries.append(Entry(tensor_nbytes(graph.shape[eid], graph.dltype[eid]), graph.dltype[eid],
                                 1, kind, graph.entry_label(eid)))
        if node.op == "null":
            continue
        inputs = tuple(graph.entry_id(src, idx) for src, idx in node.inputs)
        outputs = tuple(graph.entry_id(nid, k) for k in range(node.num_outputs))
        if node.func_name == NOP and len(inputs) > 1:
            for eid in inputs:
                views[eid] = (outputs[0], graph.offset(eid) - graph.offset(outputs[0]))
            dropped.add(len(steps))
        shares = (node.func_name == NOP and len(inputs) == 1 and len(outputs) == 1
                  and graph.storage_id[inputs[0]] == graph.storage_id[outputs[0]]
                  and graph.offset(inputs[0]) == graph.offset(outputs[0]))
        steps.append(Step(inputs, outputs, inputs[0] if shares else None, node.name))
    sizes = [0] * len(entries)
    for eid, (entry, sid) in enumerate(zip(entries, graph.storage_id)):
        sizes[sid] = max(sizes[sid], graph.offset(eid) + entry.nbytes)
    plan = MemoryPlan(list(graph.storage_id), sizes, [1] * len(sizes),
                      sum(e.nbytes for e in entries), [e.nbytes for e in entries])
    return steps, entries, plan, views, dropped


def check_storage_plan(graph) -> None:
    """SerializationError naming the two tensors and the node when the plan is unsafe."""
    steps, entries, plan, views, dropped = planner_view(graph)
    try:
        if views:
            check_views(steps, entries, views, dropped, plan.storage_ids, plan.storage_sizes,
                        [graph.offset(eid) for eid in range(len(entries))])
        else:
            check_plan(steps, entries, plan)
    except MemoryPlanError as err:
        raise SerializationError(f"invalid graph json: attrs['storage_id'] lets tensors share memory "
                                 f"while both are in use: {err}; give them different storage ids") from None


__all__ = ["check_storage_plan", "planner_view"]
