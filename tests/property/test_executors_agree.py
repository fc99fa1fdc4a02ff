"""Every compiled executor agrees with the debug interpreter on random well-typed programs.

graph and aot get dataflow-only programs (they reject If); vm gets programs with control flow.
An executor that is not available yet is skipped with its reason, so it is picked up by these
tests as soon as it lands. On a failure hypothesis shrinks the program and the note shows its
astext() and inputs. RB_SOAK=1 runs the long profile.
"""
import pytest
from hypothesis import given, note

from relay_backend.analysis.memory_plan import MemoryPlan, MemoryPlanError, check_plan
from relay_backend.testing import executors
from relay_backend.testing.program_gen import dataflow_programs, programs

from .profiles import profile


def _check(kind, program):
    note(program.describe())
    executors.compare(program.mod, program.inputs, kind)


@pytest.mark.parametrize("kind", ["graph", "aot"])
def test_dataflow_executor_agrees_with_debug(kind):

    @profile(ci_examples=40)
    @given(program=dataflow_programs(max_calls=30))
    def check(program):
        _check(kind, program)
    check()


def test_vm_agrees_with_debug_on_control_flow():

    @profile(ci_examples=40)
    @given(program=programs(max_calls=30))
    def check(program):
        _check("vm", program)
    check()


def _graph_plan(program):
    import relay_backend as relay
    factory = relay.build(program.mod, target="llvm")
    plan = factory.memory_plan  # (steps, entries, MemoryPlan)
    return plan() if callable(plan) else plan


def test_graph_memory_plan_is_live_range_safe():
    """check_plan re-derives live ranges and proves no two live entries share a storage."""

    @profile(ci_examples=40)
    @given(program=dataflow_programs(max_calls=30))
    def check(program):
        note(program.describe())
        steps, entries, plan = _graph_plan(program)
        check_plan(steps, entries, plan)
    check()


def test_memory_plan_checker_catches_shared_storage():
    """The property above can fail: a plan putting every entry in one storage is rejected."""
    from hypothesis import find, settings

    program = find(dataflow_programs(max_calls=6), lambda p: p.num_calls >= 3,
                   settings=settings(database=None, derandomize=True, max_examples=200))
    steps, entries, plan = _graph_plan(program)
    biggest = max(plan.storage_sizes)
    bad = MemoryPlan(storage_ids=[0] * len(plan.storage_ids), storage_sizes=[biggest],
                     storage_device_types=plan.storage_device_types[:1], no_reuse_bytes=plan.no_reuse_bytes,
                     entry_sizes=plan.entry_sizes)
    with pytest.raises(MemoryPlanError):
        check_plan(steps, entries, bad)
