"""The static memory planner: Relay's worked examples, reuse policy, pinning, and the checker."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay_backend import config
from relay_backend.analysis.memory_plan import (Entry, MemoryPlan, MemoryPlanError, Step, check_plan,
                                                 plan_memory, tensor_nbytes)
from relay_backend.errors import RelayError


def E(nbytes, kind="intermediate", device_type=1, name=""):
    return Entry(nbytes, "float32", device_type, kind, name)


def S(inputs, outputs, alias_of=None, name=""):
    return Step(tuple(inputs), tuple(outputs), alias_of, name)


def plan_and_check(steps, entries, **kw):
    plan = plan_memory(steps, entries, **kw)
    check_plan(steps, entries, plan)
    return plan


# --- Relay's worked examples (reference section 2.5) ---------------------------------------------

def test_relay_plan_memory_example():
    # x:(10,), y:(1,); exp(y), add(x, .), then 5 x exp
    entries = [E(40, "input"), E(4, "input"), E(4), E(40)] + [E(40)] * 4 + [E(40, "output")]
    steps = [S([1], [2]), S([0, 2], [3])] + [S([i], [i + 1]) for i in range(3, 8)]
    plan = plan_and_check(steps, entries)
    assert plan.num_storages == 4
    assert plan.storage_ids == [0, 1, 2, 3, 2, 3, 2, 3, 2]
    assert plan.entry_sizes[:4] == [40, 4, 4, 40]      # Relay's reported (original-type) sizes
    assert plan.storage_sizes == [40, 4, 40, 40]       # sid 2 grew from 4 to 40 bytes
    assert plan.total_bytes == 124 and plan.no_reuse_bytes == 40 * 7 + 4 * 2


def test_relay_reshape_nop_example():
    # abs->expand_dims feeding reshape(reshape(.)) and abs; reshape(abs); returned as a 3-tuple
    entries = [E(160, "input"), E(160), E(160, "output"), E(160), E(160, "output"), E(160, "output")]
    steps = [S([0], [1]), S([1], [2], alias_of=1), S([1], [3]), S([3], [4]), S([3], [5], alias_of=3)]
    plan = plan_and_check(steps, entries)
    assert plan.storage_ids == [0, 1, 1, 2, 3, 2]


# --- reuse policy ---------------------------------------------------------------------------------

def test_long_chain_uses_constant_storage():
    n = 10_000
    entries = [E(64, "input")] + [E(64)] * (n - 1) + [E(64, "output")]
    steps = [S([i], [i + 1]) for i in range(n)]
    plan = plan_and_check(steps, entries)
    assert plan.num_storages == 3  # the input + two alternating blocks (the output reuses one)
    assert set(plan.storage_ids[1:]) == {1, 2}
    assert plan.total_bytes == 3 * 64


def test_diamond():
    entries = [E(8, "input"), E(8), E(8), E(8), E(8, "output")]
    steps = [S([0], [1]), S([1], [2]), S([1], [3]), S([2, 3], [4])]
    assert plan_and_check(steps, entries).storage_ids == [0, 1, 2, 3, 1]
    separate = plan_and_check(steps, entries, reuse_for_outputs=False)
    assert separate.storage_ids == [0, 1, 2, 3, 4]


def test_multi_output_step_and_dead_output():
    # x -> (a, b, dead); a -> c; (b, c) -> d
    entries = [E(16, "input"), E(16), E(16), E(16), E(16), E(16, "output")]
    steps = [S([0], [1, 2, 3]), S([1], [4]), S([2, 4], [5])]
    plan = plan_and_check(steps, entries)
    sids = plan.storage_ids
    assert len({sids[1], sids[2], sids[3]}) == 3  # outputs of one step never share
    assert sids[4] == sids[3]                     # the dead output's block is reused at once
    assert sids[5] == sids[1]                     # d reuses a (freed after step 1)


def test_outputs_inputs_and_params_are_never_reused():
    # x, p feed an early output o; then a long chain of intermediates of the same size
    entries = [E(32, "input"), E(32, "param"), E(32, "output")] + [E(32)] * 6 + [E(32, "output")]
    steps = [S([0, 1], [2]), S([2], [3])] + [S([i], [i + 1]) for i in range(3, 9)]
    plan = plan_and_check(steps, entries)
    sids = plan.storage_ids
    for pinned in (0, 1, 2):
        assert sids.count(sids[pinned]) == 1, (pinned, sids)
    assert sids[:3] == [0, 1, 2]


def test_params_are_numbered_on_first_use():
    entries = [E(4, "input"), E(4), E(4, "param"), E(4, "output"), E(4, "param")]
    steps = [S([0], [1]), S([1, 2], [3])]
    # input first, then a's output, then the param when step 1 reads it; unused params last
    assert plan_and_check(steps, entries).storage_ids == [0, 1, 2, 3, 4]


def test_match_range_and_best_fit():
    # a(200), b(400), c(50) live together, then all die; later requests pick among them
    entries = [E(8, "input"), E(200), E(400), E(50), E(4), E(100), E(3000), E(1), E(8, "output")]
    steps = [S([0], [1]), S([0], [2]), S([0], [3]), S([1, 2, 3], [4]),
             S([4], [5]),   # 100 B: smallest block >= 100 is a (200)
             S([5], [6]),   # 3000 B: no block >= 3000 within 16x; largest smaller >= 187 is b (400)
             S([6], [7]),   # 1 B: only blocks of 1..16 B qualify: k (4 B), not c (50 B)
             S([7], [8])]
    plan = plan_and_check(steps, entries)
    sid = plan.storage_ids
    assert sid[5] == sid[1] and sid[6] == sid[2]
    assert sid[7] == sid[4]
    assert plan.storage_sizes[sid[2]] == 3000  # the 400 B block grew


def test_smaller_block_below_range_is_not_taken():
    entries = [E(8, "input"), E(4), E(100), E(100, "output")]
    steps = [S([0], [1]), S([1], [2]), S([2], [3])]  # 4 < 100 // 16: no reuse
    assert plan_and_check(steps, entries).num_storages == 4


def test_devices_do_not_share():
    entries = [E(8, "input"), E(8, device_type=2), E(8), E(8, "output")]
    steps = [S([0], [1]), S([1], [2]), S([2], [3])]
    plan = plan_and_check(steps, entries)
    assert plan.storage_ids[3] != plan.storage_ids[1]
    assert plan.storage_device_types[plan.storage_ids[1]] == 2


def test_no_memory_plan_env(monkeypatch):
    entries = [E(8, "input")] + [E(8)] * 5 + [E(8, "output")]
    steps = [S([i], [i + 1]) for i in range(6)]
    try:
        monkeypatch.setenv("RB_NO_MEMORY_PLAN", "1")
        config.reload()
        plan = plan_and_check(steps, entries)
        assert plan.storage_ids == list(range(7)) and plan.total_bytes == plan.no_reuse_bytes
    finally:
        monkeypatch.delenv("RB_NO_MEMORY_PLAN")
        config.reload()
    assert plan_and_check(steps, entries).num_storages == 3


def test_tensor_nbytes():
    assert tensor_nbytes((2, 3), "float32") == 24
    assert tensor_nbytes((), "bool") == 1 and tensor_nbytes((0, 5), "int64") == 0
    with pytest.raises(MemoryPlanError, match="symbolic shape"):
        tensor_nbytes((2, "n"), "float32")
    with pytest.raises(MemoryPlanError, match="negative"):
        tensor_nbytes((-1,), "float32")


# --- the checker can fail ---------------------------------------------------------------------

def _diamond():
    entries = [E(8, "input", name="x"), E(8, name="a"), E(8, name="b"), E(8, name="c"),
               E(8, "output", name="d")]
    steps = [S([0], [1], name="f0"), S([1], [2], name="f1"), S([1], [3], name="f2"),
             S([2, 3], [4], name="f3")]
    return steps, entries, plan_memory(steps, entries)


def _with_sids(plan, **changes):
    sids = list(plan.storage_ids)
    for eid, sid in changes.items():
        sids[int(eid[1:])] = sid
    return MemoryPlan(sids, list(plan.storage_sizes), list(plan.storage_device_types),
                      plan.no_reuse_bytes, list(plan.entry_sizes))


def test_checker_catches_live_overlap():
    steps, entries, plan = _diamond()
    bad = _with_sids(plan, e3=plan.storage_ids[2])  # c shares b's storage while b is live
    with pytest.raises(RelayError, match=r"entry 2 'b'.*entry 3 'c'.*both live at step 2 \(f2\)"):
        check_plan(steps, entries, bad)


def test_checker_catches_in_place_reuse():
    steps, entries, plan = _diamond()
    bad = _with_sids(plan, e2=plan.storage_ids[1])  # b written over its own input a
    with pytest.raises(MemoryPlanError, match="'a'.*'b'.*step 1 \\(f1\\)"):
        check_plan(steps, entries, bad)


def test_checker_catches_shared_pinned_entry():
    steps, entries, plan = _diamond()
    bad = _with_sids(plan, e4=plan.storage_ids[0])  # output placed on the input's storage
    with pytest.raises(MemoryPlanError, match="pinned entry 0 'x'.*never shared"):
        check_plan(steps, entries, bad)


def test_checker_catches_size_and_device():
    steps, entries, plan = _diamond()
    small = MemoryPlan(plan.storage_ids, [4] * plan.num_storages, plan.storage_device_types,
                       plan.no_reuse_bytes)
    with pytest.raises(MemoryPlanError, match="does not fit storage"):
        check_plan(steps, entries, small)
    entries2 = list(entries)
    entries2[2] = E(8, device_type=2, name="b")
    with pytest.raises(MemoryPlanError, match="device types"):
        check_plan(steps, entries2, _with_sids(plan, e2=plan.storage_ids[4]))


def test_malformed_steps_are_rejected():
    with pytest.raises(MemoryPlanError, match="before any step writes it"):
        plan_memory([S([1], [2]), S([0], [1])], [E(4, "input"), E(4), E(4, "output")])
    with pytest.raises(MemoryPlanError, match="already written by step 0"):
        plan_memory([S([0], [1]), S([0], [1])], [E(4, "input"), E(4, "output")])
    with pytest.raises(MemoryPlanError, match="never written"):
        plan_memory([], [E(4, "input"), E(4, "output")])
    with pytest.raises(MemoryPlanError, match="inputs and params are never written"):
        plan_memory([S([0], [1])], [E(4, "input"), E(4, "param")])
    with pytest.raises(MemoryPlanError, match="alias_of=0 needs exactly one output"):
        plan_memory([S([0], [1, 2], alias_of=0)], [E(4, "input"), E(4), E(4, "output")])
    with pytest.raises(MemoryPlanError, match="unknown kind"):
        plan_memory([], [E(4, "weight")])


# --- property: every plan of a random DAG is safe and no larger than no reuse -----------------

SIZES = [1, 4, 16, 64, 100, 256, 1000, 4096]


@st.composite
def programs(draw):
    entries = [E(draw(st.sampled_from(SIZES)), draw(st.sampled_from(["input", "param"])),
                 draw(st.sampled_from([1, 1, 2])))
               for _ in range(draw(st.integers(1, 3)))]
    steps, available = [], list(range(len(entries)))
    for _ in range(draw(st.integers(1, 25))):
        ins = draw(st.lists(st.sampled_from(available), min_size=1, max_size=3))
        if draw(st.integers(0, 5)) == 0:  # a reshape-only step aliasing its first input
            src = entries[ins[0]]
            outs, alias = [len(entries)], ins[0]
            entries.append(E(src.nbytes, "intermediate", src.device_type))
        else:
            outs, alias = [], None
            for _ in range(draw(st.integers(1, 3))):
                outs.append(len(entries))
                entries.append(E(draw(st.sampled_from(SIZES)), "intermediate",
                                 draw(st.sampled_from([1, 1, 2]))))
        steps.append(S(ins, outs, alias_of=alias))
        available.extend(outs)
    produced = [i for i, e in enumerate(entries) if e.kind == "intermediate"]
    marked = set(draw(st.lists(st.sampled_from(produced), max_size=3))) | {produced[-1]}
    entries = [E(e.nbytes, "output", e.device_type) if i in marked else e for i, e in enumerate(entries)]
    return steps, entries


@settings(max_examples=200, deadline=None)
@given(programs())
def test_plans_of_random_dags_are_safe(program):
    steps, entries = program
    for kw in ({}, {"reuse_for_outputs": False}, {"reuse": False}):
        plan = plan_and_check(steps, entries, **kw)
        assert plan.total_bytes <= plan.no_reuse_bytes
        for i, sid in enumerate(plan.storage_ids):
            assert plan.storage_device_types[sid] == entries[i].device_type
        if kw.get("reuse_for_outputs") is False:  # an output's storage holds only it and its aliases
            aliases = {s.outputs[0] for s in steps if s.alias_of is not None}
            for i, e in enumerate(entries):
                if e.kind == "output" and i not in aliases:
                    sharers = {j for j, sid in enumerate(plan.storage_ids) if sid == plan.storage_ids[i]}
                    assert sharers - {i} <= aliases, (i, sharers)


def test_plain_tuples_are_accepted():
    entries = [(8, "float32", 1, "input"), (8, "float32", 1, "intermediate"), (8, "int8", 1, "output")]
    steps = [([0], [1]), ([1], [2])]
    plan = plan_memory(steps, entries)
    check_plan(steps, entries, plan)
    assert plan.storage_ids == [0, 1, 2]
