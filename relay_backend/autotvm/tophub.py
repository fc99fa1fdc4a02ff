"""Shipped tuning records (TVM's TopHub): best configs of the benchmark workloads, measured on one
CPU family and applied by default to builds for that family.

The records live in autotvm/tophub/<arch>-<llvm cpu name>.log (e.g. x86_64-znver3.log), each made
by a short tuning run (benchmarks/README.md says how long and how many trials). A build's scope
(env.build_scope) enters `context(target)`: when the user set no dispatch context, the target
compiles for this process's CPU and a file for this CPU exists, its records apply through an
ApplyHistoryBest; otherwise nothing changes, and a note (INFO, once per process) says why.
A config tuned on another CPU family is never applied: its tile sizes assume that CPU's vector
width and caches. RB_TOPHUB=0 turns the shipped records off.
"""
import contextlib
import functools
import pathlib

from ..diagnostics import get_logger
from ..config import get as get_config
from ..target import arch_family, as_target, host_cpu, host_triple
from .task.dispatcher import ApplyHistoryBest, DispatchContext, FallbackContext

logger = get_logger("autotvm")     # relay_backend.autotvm (TVM: "autotvm")

RECORDS_DIR = pathlib.Path(__file__).resolve().parent / "tophub"
_NOTED = set()


def host_family() -> str:
    """This host's CPU family as the record files name it: "<arch>-<llvm cpu name>"."""
    return f"{arch_family(host_triple())}-{host_cpu()[0]}"


def available_families() -> list:
    """The CPU families records ship for."""
    return sorted(p.stem for p in RECORDS_DIR.glob("*.log"))


def record_file(family: str = None) -> pathlib.Path:
    """The shipped log of `family` (this host's by default); it may not exist."""
    return RECORDS_DIR / f"{family or host_family()}.log"


@functools.lru_cache(maxsize=None)
def _records(path: str) -> tuple:
    from .record import load_from_file
    return tuple(load_from_file(path))


def _why_not(target) -> str:
    """Why the shipped records do not apply to `target` ("" when they do)."""
    if not get_config().tophub:
        return "RB_TOPHUB=0"
    if target.kind.name != "llvm":
        return f"records ship for llvm CPU targets, not {target.kind.name}"
    mismatch = target.host_mismatch()
    if mismatch:
        return f"the target does not compile for this host ({mismatch})"
    if not record_file().is_file():
        shipped = ", ".join(available_families()) or "none"
        return f"no shipped tuning records for this CPU ({host_family()}; records ship for: {shipped})"
    return ""


def context(target, extra_files=None):
    """An ApplyHistoryBest over the shipped records (and `extra_files`) for `target`, or a
    context that changes nothing (see the module doc)."""
    if not isinstance(DispatchContext.current, FallbackContext):
        return contextlib.nullcontext()          # the user chose the records
    target = as_target(target)
    reason = _why_not(target)
    if reason:
        if reason not in _NOTED:
            _NOTED.add(reason)
            logger.info("autotvm.tophub: the default schedules are used: %s", reason)
        return contextlib.nullcontext()
    records = list(_records(str(record_file())))
    for path in extra_files or ():
        records.extend(_records(str(path)))
    return ApplyHistoryBest(records)
