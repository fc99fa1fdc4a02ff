"""Memory planning when some entries are views into another entry's storage (in-place concatenation).

An in-place concatenation drops the concatenate kernel: each of its inputs is written by its own
producer straight into its slice of the output's storage. Its inputs become *views*: `views`
maps an entry id to (parent entry id, byte offset inside the parent); a parent may itself be a
view (nested concatenations), and `resolve` follows the chain to the root entry that owns the
storage. The steps that did the concatenation (`dropped`) run no kernel.

Planning and checking reduce the problem to the plain one of analysis.memory_plan: the views
disappear, a step writing a view writes its root instead (the first such step in execution order
produces the root; a later one lists it as read, which keeps it live: it must not be reused
while slices are still being written), the dropped steps disappear. The root's storage id and
the views' offsets then place every entry. `check_views` proves the reduced plan safe and the
views well formed: inside their parent, and siblings (views of one parent) disjoint.
"""
from typing import Optional

from .memory_plan import Entry, MemoryPlan, MemoryPlanError, Step, check_plan, plan_memory


def resolve(views: dict) -> dict:
    """{view entry: (root entry, byte offset inside the root)}; MemoryPlanError on a cycle."""
    out = {}
    for eid in views:
        seen, node, offset = {eid}, eid, 0
        while node in views:
            parent, delta = views[node]
            offset += delta
            node = parent
            if node in seen:
                raise MemoryPlanError(f"entry {eid} is a view of itself (through {sorted(seen)})")
            seen.add(node)
        out[eid] = (node, offset)
    return out


def reduce_problem(steps, entries, views: dict, dropped) -> tuple:
    """(steps, entries, new id of each kept old entry) of the plain problem (module docstring)."""
    roots = resolve(views)
    dropped = set(dropped)
    kept = [eid for eid in range(len(entries)) if eid not in roots]
    new_id = {eid: i for i, eid in enumerate(kept)}
    outputs_pinned = {roots[eid][0] for eid in roots if entries[eid].kind == "output"}

    def target(eid):
        return new_id[roots[eid][0] if eid in roots else eid]

    reduced_entries = []
    for eid in kept:
        entry = entries[eid]
        kind = "output" if eid in outputs_pinned and entry.kind == "intermediate" else entry.kind
        reduced_entries.append(Entry(entry.nbytes, entry.dtype, entry.device_type, kind, entry.name))
    produced, reduced_steps = set(), []
    for index, step in enumerate(steps):
        if index in dropped:
            continue
        inputs = list(dict.fromkeys(target(e) for e in step.inputs))
        outputs = []
        for eid in step.outputs:
            new = target(eid)
            if new in produced:
                if new not in inputs:
                    inputs.append(new)
            elif new not in outputs:
                outputs.append(new)
                produced.add(new)
        alias = None if step.alias_of is None else target(step.alias_of)
        if alias is not None and (len(outputs) != 1 or alias not in inputs):
            alias = None
        reduced_steps.append(Step(tuple(inputs), tuple(outputs), alias, step.name))
    return reduced_steps, reduced_entries, new_id


def plan_with_views(steps, entries, views: dict, dropped, **options) -> tuple:
    """(MemoryPlan over every entry, byte offset per entry): the reduced problem planned by
    analysis.memory_plan.plan_memory (`options` are its keywords), views placed at their
    offsets in their root's storage."""
    reduced_steps, reduced_entries, new_id = reduce_problem(steps, entries, views, dropped)
    plan = plan_memory(reduced_steps, reduced_entries, **options)
    roots = resolve(views)
    storage_ids, offsets = [], []
    for eid in range(len(entries)):
        root, offset = roots.get(eid, (eid, 0))
        storage_ids.append(plan.storage_ids[new_id[root]])
        offsets.append(offset)
    full = MemoryPlan(storage_ids, plan.storage_sizes, plan.storage_device_types,
                      sum(int(e.nbytes) for e in entries), [int(e.nbytes) for e in entries])
    return full, offsets


def check_views(steps, entries, views: dict, dropped, storage_ids, storage_sizes,
                offsets: Optional[list] = None) -> None:
    """MemoryPlanError unless every view lies inside its parent, views of one parent are
    disjoint, a view shares its root's storage at the resolved offset, and the reduced plan is
    safe (analysis.memory_plan.check_plan)."""
    roots = resolve(views)
    by_parent = {}
    for eid, (parent, offset) in views.items():
        if offset < 0 or offset + entries[eid].nbytes > entries[parent].nbytes:
            raise MemoryPlanError(f"entry {eid} ({entries[eid].nbytes} B at offset {offset}) does not lie "
                                  f"inside entry {parent} ({entries[parent].nbytes} B)")
        by_parent.setdefault(parent, []).append((offset, offset + entries[eid].nbytes, eid))
    for parent, spans in by_parent.items():
        spans.sort()
        for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
            if start < end:
                raise MemoryPlanError(f"entries {a} and {b} overlap inside entry {parent}")
    for eid, (root, offset) in roots.items():
        if storage_ids[eid] != storage_ids[root] or (offsets is not None and
                                                     offsets[eid] - offsets[root] != offset):
            raise MemoryPlanError(f"entry {eid} is a view at offset {offset} of entry {root} but is "
                                  f"placed in storage {storage_ids[eid]} (the root is in "
                                  f"{storage_ids[root]})")
    reduced_steps, reduced_entries, new_id = reduce_problem(steps, entries, views, dropped)
    kept_sids = [None] * len(reduced_entries)
    for eid, new in new_id.items():
        kept_sids[new] = storage_ids[eid]
    reduced = MemoryPlan(kept_sids, list(storage_sizes), [1] * len(storage_sizes),
                         sum(e.nbytes for e in reduced_entries), [e.nbytes for e in reduced_entries])
    check_plan(reduced_steps, reduced_entries, reduced)


__all__ = ["resolve", "reduce_problem", "plan_with_views", "check_views"]
