"""The static memory planner shared by the graph and AOT executors (Relay's GraphPlanMemory).

Input is executor-neutral: `entries` (one per flattened tensor; entry id = list index) and
`steps` in execution order, each reading some entries and writing others. Output is a
`MemoryPlan`: a storage id per entry and the byte size of every storage.

The algorithm is Relay's token allocator:
* reference count = number of consumer slots (+1 pin for inputs, params and outputs);
* graph inputs get storage up front in entry order, params when first consumed (as Relay
  numbers constants on first visit); pinned entries are never released, hence never shared;
* a step's outputs are requested *before* its inputs are released, so no kernel writes into
  the storage of its own inputs; an output nobody consumes is released right away;
* a request takes a free block of the same device type within a factor `match_range` (16) of
  its size: the smallest block >= size first, else the largest smaller block, which grows.
  Pools are dtype-agnostic byte blocks (as Relay, and as AOT's workspace needs);
* a reshape-only step (`Step.alias_of`) writes no memory: its output shares the storage of
  that input, whose reference count absorbs the output's consumers;
* an output may take a block freed by a dead intermediate, as Relay does; AOT, whose outputs
  are the caller's buffers, passes `reuse_for_outputs=False`;
* `RB_NO_MEMORY_PLAN=1` (or `reuse=False`) gives every entry its own storage; aliases are kept,
  because a reshape nop has no kernel and must see its input's bytes.

`MemoryPlan.check_size` rejects a plan whose storages together exceed the tensor size limit.
`check_plan` re-derives live ranges independently and proves that no two simultaneously live
entries share a storage; the property tests run it on every generated plan.
"""
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from .. import config
from ..errors import AllocationError, CompileError
from ..runtime.limits import max_tensor_bytes

KINDS = ("input", "param", "intermediate", "output")
PINNED_KINDS = ("input", "param", "output")
MATCH_RANGE = 16


class MemoryPlanError(CompileError):
    """Malformed planner input, or a plan that lets two live tensors share memory."""


@dataclass(frozen=True)
class Entry:
    """One flattened tensor: its size in bytes, dtype, device type (1 cpu, 2 cuda) and role."""

    nbytes: int
    dtype: str = "float32"
    device_type: int = 1
    kind: str = "intermediate"
    name: str = ""


@dataclass(frozen=True)
class Step:
    """One kernel call in execution order: entry ids read, entry ids written.

    `alias_of` (an input entry id) marks a reshape-only step whose single output shares that
    input's storage instead of being written.
    """

    inputs: tuple
    outputs: tuple
    alias_of: Optional[int] = None
    name: str = ""


@dataclass
class MemoryPlan:
    """storage_ids[entry]; storage_sizes[sid] = largest entry placed there (bytes)."""

    storage_ids: list
    storage_sizes: list
    storage_device_types: list
    no_reuse_bytes: int
    entry_sizes: list = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        """Bytes the executor allocates: one block per storage id."""
        return sum(self.storage_sizes)

    @property
    def num_storages(self) -> int:
        return len(self.storage_sizes)

    def check_size(self, what: str) -> None:
        """Raise AllocationError when the storages together exceed the tensor size limit
        (runtime/limits.py): each tensor may fit while all of them, live at once, do not."""
        limit = max_tensor_bytes()
        if self.total_bytes > limit:
            largest = sorted(self.storage_sizes, reverse=True)[:3]
            raise AllocationError(
                f"{what}: its {self.num_storages} planned storages together need {self.total_bytes:,} bytes "
                f"(the largest {', '.join(f'{n:,}' for n in largest)}), more than the limit of {limit:,} bytes "
                f"(the machine's memory, or RB_MAX_TENSOR_BYTES); use smaller shapes or raise "
                f"RB_MAX_TENSOR_BYTES")


def tensor_nbytes(shape, dtype) -> int:
    """prod(shape) * ceil(bits / 8) (bool takes one byte); rejects symbolic or negative dims."""
    dims = []
    for d in shape:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise MemoryPlanError(
                f"cannot plan memory for a tensor with symbolic shape {tuple(shape)} ({dtype}): "
                f"dimension {d!r} is not a constant; use the vm executor for dynamic shapes")
        if d < 0:
            raise MemoryPlanError(f"cannot plan memory for negative shape {tuple(shape)} ({dtype})")
        dims.append(int(d))
    return int(np.prod(dims, dtype=object)) * np.dtype(dtype).itemsize


# ---------------------------------------------------------------------------------------------
# input validation


def _describe(entries, eid) -> str:
    e = entries[eid]
    label = f" {e.name!r}" if e.name else ""
    return f"entry {eid}{label} ({e.kind}, {e.nbytes} B)"


def _step_label(steps, index) -> str:
    s = steps[index]
    return f"step {index}" + (f" ({s.name})" if s.name else "")


def _coerce(steps, entries):
    entries = [e if isinstance(e, Entry) else Entry(*e) for e in entries]
    steps = [s if isinstance(s, Step) else Step(*s) for s in steps]
    return ([Step(tuple(s.inputs), tuple(s.outputs), s.alias_of, s.name) for s in steps], entries)


def _validate(steps, entries):
    """Producer of every entry; raises MemoryPlanError on a malformed step list."""
    for eid, e in enumerate(entries):
        if e.kind not in KINDS:
            raise MemoryPlanError(f"{_describe(entries, eid)}: unknown kind {e.kind!r}; use one of {KINDS}")
        if not isinstance(e.nbytes, (int, np.integer)) or e.nbytes < 0:
            raise MemoryPlanError(f"entry {eid}: nbytes must be a non-negative int, got {e.nbytes!r}")
    producer = {}
    for i, s in enumerate(steps):
        for eid in s.inputs + s.outputs:
            if not 0 <= eid < len(entries):
                raise MemoryPlanError(f"{_step_label(steps, i)} names entry {eid}, but there are "
                                      f"only {len(entries)} entries")
        for eid in s.inputs:
            if entries[eid].kind not in ("input", "param") and eid not in producer:
                raise MemoryPlanError(f"{_step_label(steps, i)} reads {_describe(entries, eid)} "
                                      f"before any step writes it; list steps in execution order")
        for eid in s.outputs:
            if entries[eid].kind in ("input", "param"):
                raise MemoryPlanError(f"{_step_label(steps, i)} writes {_describe(entries, eid)}, "
                                      f"but inputs and params are never written by a step")
            if eid in producer:
                raise MemoryPlanError(f"{_step_label(steps, i)} writes {_describe(entries, eid)}, "
                                      f"already written by {_step_label(steps, producer[eid])}")
            producer[eid] = i
        if s.alias_of is not None:
            if s.alias_of not in s.inputs or len(s.outputs) != 1:
                raise MemoryPlanError(
                    f"{_step_label(steps, i)}: alias_of={s.alias_of} needs exactly one output and "
                    f"must name one of its inputs {s.inputs}")
            out = s.outputs[0]
            if entries[out].nbytes > entries[s.alias_of].nbytes:
                raise MemoryPlanError(
                    f"{_step_label(steps, i)}: {_describe(entries, out)} cannot alias the smaller "
                    f"{_describe(entries, s.alias_of)}")
    for eid, e in enumerate(entries):
        if e.kind in ("intermediate", "output") and eid not in producer:
            raise MemoryPlanError(f"{_describe(entries, eid)} is never written by any step")
    return producer


# ---------------------------------------------------------------------------------------------
# planning


class _Token:
    __slots__ = ("sid", "refs", "max_bytes", "device_type", "pinned")

    def __init__(self, sid, refs, nbytes, device_type, pinned):
        self.sid, self.refs, self.max_bytes = sid, refs, nbytes
        self.device_type, self.pinned = device_type, pinned


class _Allocator:
    """Relay's 1-D token allocator: per-device free lists keyed by block size."""

    def __init__(self, reuse: bool, match_range: int):
        self.reuse, self.match_range = reuse, match_range
        self.tokens = []
        self.free = {}  # device_type -> list of (max_bytes, seq, token)
        self.seq = 0

    def alloc(self, nbytes, device_type, refs, pinned) -> _Token:
        tok = _Token(len(self.tokens), refs, nbytes, device_type, pinned)
        self.tokens.append(tok)
        return tok

    def request(self, nbytes, device_type, refs, pinned, may_reuse=True) -> _Token:
        pool = self.free.get(device_type, [])
        if self.reuse and may_reuse and pool:
            lo, hi = nbytes // self.match_range, nbytes * self.match_range
            ordered = sorted(pool, key=lambda t: (t[0], t[1]))
            bigger = [t for t in ordered if nbytes <= t[0] <= hi]
            smaller = [t for t in reversed(ordered) if lo <= t[0] < nbytes]
            for cand in bigger[:1] or smaller[:1]:
                pool.remove(cand)
                tok = cand[2]
                tok.max_bytes = max(tok.max_bytes, nbytes)
                tok.refs, tok.pinned = refs, pinned
                return tok
        return self.alloc(nbytes, device_type, refs, pinned)

    def release(self, tok: _Token):
        if tok.refs == 0 and not tok.pinned:
            self.free.setdefault(tok.device_type, []).append((tok.max_bytes, self.seq, tok))
            self.seq += 1


def plan_memory(steps: Sequence[Step], entries: Sequence[Entry], *, reuse: Optional[bool] = None,
                reuse_for_outputs: bool = True, match_range: int = MATCH_RANGE) -> MemoryPlan:
    """Assign a storage id to every entry, reusing dead intermediates' storage (see module doc).

    reuse=None follows RB_NO_MEMORY_PLAN; reuse_for_outputs=False keeps outputs out of freed
    blocks (AOT). Steps are (inputs, outputs[, alias_of, name]); entries are Entry or tuples.
    """
    steps, entries = _coerce(steps, entries)
    _validate(steps, entries)
    if reuse is None:
        reuse = not config.get().no_memory_plan
    consumers = [0] * len(entries)
    for s in steps:
        for eid in s.inputs:
            consumers[eid] += 1
    alloc = _Allocator(reuse, match_range)
    token_of = [None] * len(entries)

    def pin_source(eid):
        e = entries[eid]
        token_of[eid] = alloc.alloc(e.nbytes, e.device_type, consumers[eid], pinned=True)

    for eid, e in enumerate(entries):
        if e.kind == "input":
            pin_source(eid)
    for s in steps:
        for eid in s.inputs:
            if token_of[eid] is None:  # a param, numbered when first used
                pin_source(eid)
        if s.alias_of is not None:
            out, tok = s.outputs[0], token_of[s.alias_of]
            tok.refs += consumers[out]
            tok.pinned = tok.pinned or entries[out].kind == "output"
            token_of[out] = tok
        else:
            for out in s.outputs:
                e = entries[out]
                is_out = e.kind == "output"
                token_of[out] = alloc.request(e.nbytes, e.device_type, consumers[out], is_out,
                                              may_reuse=reuse_for_outputs or not is_out)
            for out in s.outputs:  # outputs nobody reads go straight back to the free list
                alloc.release(token_of[out])
        for eid in s.inputs:
            tok = token_of[eid]
            tok.refs -= 1
            alloc.release(tok)
    for eid, e in enumerate(entries):
        if token_of[eid] is None:  # params nobody reads still need their storage
            pin_source(eid)

    sizes = [0] * len(alloc.tokens)
    for eid, e in enumerate(entries):
        sid = token_of[eid].sid
        sizes[sid] = max(sizes[sid], int(e.nbytes))
    return MemoryPlan(
        storage_ids=[token_of[eid].sid for eid in range(len(entries))],
        storage_sizes=sizes,
        storage_device_types=[t.device_type for t in alloc.tokens],
        no_reuse_bytes=sum(int(e.nbytes) for e in entries),
        entry_sizes=[int(e.nbytes) for e in entries],
    )


# ---------------------------------------------------------------------------------------------
# checking


def _alias_roots(steps, n):
    root = list(range(n))

    def find(x):
        while root[x] != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    for s in steps:
        if s.alias_of is not None:
            root[find(s.outputs[0])] = find(s.alias_of)
    return find


def check_plan(steps: Sequence[Step], entries: Sequence[Entry], plan: MemoryPlan) -> None:
    """Prove the plan safe; raise MemoryPlanError naming the two entries and the step otherwise.

    Live range of an entry: from the step writing it to its last reader (inclusive, so an
    output never shares with its own step's inputs); inputs/params live from before step 0 and
    outputs to the end. Aliased entries count as one tensor. Entries sharing a storage must have
    disjoint live ranges, the same device type, and fit in the storage's size.
    """
    steps, entries = _coerce(steps, entries)
    producer = _validate(steps, entries)
    n, end = len(entries), len(steps)
    if len(plan.storage_ids) != n:
        raise MemoryPlanError(f"plan has {len(plan.storage_ids)} storage ids for {n} entries")
    find = _alias_roots(steps, n)
    start = [-1 if e.kind in ("input", "param") else producer[i] for i, e in enumerate(entries)]
    stop = list(start)
    for i, s in enumerate(steps):
        for eid in s.inputs:
            stop[eid] = max(stop[eid], i)
    for i, e in enumerate(entries):
        if e.kind in PINNED_KINDS:
            stop[i] = end
    group_start, group_stop = {}, {}
    for i in range(n):  # an alias group lives as long as any member
        r = find(i)
        group_start[r] = min(group_start.get(r, start[i]), start[i])
        group_stop[r] = max(group_stop.get(r, stop[i]), stop[i])

    by_sid = {}
    for i, sid in enumerate(plan.storage_ids):
        if not 0 <= sid < len(plan.storage_sizes):
            raise MemoryPlanError(f"{_describe(entries, i)} has storage id {sid}, but the plan has "
                                  f"{len(plan.storage_sizes)} storages")
        if entries[i].nbytes > plan.storage_sizes[sid]:
            raise MemoryPlanError(f"{_describe(entries, i)} does not fit storage {sid} of "
                                  f"{plan.storage_sizes[sid]} B")
        by_sid.setdefault(sid, {}).setdefault(find(i), i)
    for sid, groups in by_sid.items():
        members = [(group_start[r], group_stop[r], eid) for r, eid in groups.items()]
        devices = {entries[eid].device_type for _, _, eid in members}
        if len(devices) > 1:
            raise MemoryPlanError(f"storage {sid} is shared across device types {sorted(devices)}")
        members.sort()
        live = None  # the member with the latest stop so far
        for m in members:
            if live is not None and m[0] <= live[1]:
                _report_overlap(steps, entries, sid, live, m)
            if live is None or m[1] > live[1]:
                live = m


def _report_overlap(steps, entries, sid, a, b):
    for eid in (a[2], b[2]):
        if entries[eid].kind in ("input", "param"):
            raise MemoryPlanError(
                f"storage {sid}: pinned {_describe(entries, eid)} shares memory with "
                f"{_describe(entries, b[2] if eid == a[2] else a[2])}; inputs and params are never shared")
    at = max(a[0], b[0])
    where = _step_label(steps, at) if 0 <= at < len(steps) else "the start"
    raise MemoryPlanError(
        f"storage {sid}: {_describe(entries, a[2])} (live steps {a[0]}..{a[1]}) and "
        f"{_describe(entries, b[2])} (live steps {b[0]}..{b[1]}) are both live at {where}")
