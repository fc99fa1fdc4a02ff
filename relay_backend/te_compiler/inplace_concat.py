"""In-place concatenation, shared by the graph executor and AOT: producers write straight into
their slice.

A fused function that is only `concatenate(params...)` copies its inputs into its output. When
the slices are contiguous in memory (every axis before the concatenation axis has extent 1, e.g.
the channels of NCHW or NCHW{c}c at batch 1), every slice starts ALIGNMENT-aligned (kernels take
aligned buffers), and every input is written by a kernel of this graph (or is itself an in-place
concatenation) and read by nothing but this concatenation, each producer can write its result
straight into the output's bytes: the inputs become views of the output at byte offsets
(analysis.memory_views plans them) and the concatenation runs nothing (a graph `__nop`; no call
in AOT's model.c). Otherwise the copy stays: a graph input or a constant (the caller owns it; a
param is shared), an entry read twice (two slices, one producer), an entry some other kernel
also reads, a reshape nop's output (it aliases its source), or slices that are not contiguous or
not aligned.
"""
from ..analysis.pure_concat import pure_concatenation, slice_offsets


def inplace_concats(lowered) -> tuple:
    """({input entry: (concat output entry, byte offset)}, {index of the concatenation in
    lowered.calls}) for every concatenation that can run in place (see the module docstring)."""
    calls = lowered.calls
    readers = {}
    for call in calls:
        for eid in call.inputs:
            readers[eid] = readers.get(eid, 0) + 1
    for eid in lowered.outputs:
        readers[eid] = readers.get(eid, 0) + 1
    producer = {}
    for index, call in enumerate(calls):
        for eid in call.outputs:
            producer[eid] = index
    views, dropped = {}, set()
    for index, call in enumerate(calls):
        found = pure_concatenation(call.prim)
        if found is None or len(call.outputs) != 1 or len(call.inputs) != found[1]:
            continue
        out = lowered.entries[call.outputs[0]]
        if len(set(call.inputs)) != len(call.inputs) or \
                not all(_writes_in_place(lowered, calls, producer, readers, dropped, eid, out.dtype)
                        for eid in call.inputs):
            continue
        offsets = slice_offsets((out.shape, out.dtype, out.nbytes), found[0],
                                [(e.shape, e.dtype, e.nbytes) for e in (lowered.entries[eid] for eid in call.inputs)])
        if offsets is None:
            continue             # not back to back, or a slice not aligned (module docstring)
        for eid, offset in zip(call.inputs, offsets):
            views[eid] = (call.outputs[0], offset)
        dropped.add(index)
    return views, dropped


def _writes_in_place(lowered, calls, producer, readers, dropped, eid, dtype) -> bool:
    """Whether entry `eid` may be written straight into a concatenation's output: an
    intermediate of the concatenation's dtype that it alone reads, made by a kernel (not a
    reshape alias) or by an in-place concatenation."""
    entry = lowered.entries[eid]
    if entry.kind != "intermediate" or entry.dtype != dtype or readers.get(eid, 0) != 1:
        return False
    index = producer.get(eid)
    if index is None:
        return False
    return index in dropped or calls[index].alias_of is None


__all__ = ["inplace_concats"]
