"""Relay-level disk records: a second process builds a model without lowering its kernels.

The kernel cache (codegen/llvm_cache.py) keys object code by the *lowered* kernel, so a process
finding every kernel on disk still runs te lowering and the tir passes to compute those keys
(about half of a warm ResNet-50 build). A record skips that: it maps a primitive Relay
function, before lowering, to what the executors need from its lowering, and the kernel's
content digest, which finds its object code:

    key  = relay-kernel | structural_digest of the primitive function (128 bits) | the Target
           string | triple, CPU, features and opt level LLVM compiles for (schedules choose
           vector widths from them) | the PassContext's opt level and config | package digest
    body = JSON {"content": kernel content digest, "signature": FunctionInfo (renamed on use),
                 "implementations": [[op, implementation]], "queries": [[workload, config
                 fingerprint]], "untuned": [workload]}

Everything lowering reads is in the key or checked on a hit: the function (with the layouts
AlterOpLayout chose and its constants), the target and host CPU, the pass configuration, the
package's own source (every .py file of relay_backend: strategies, schedules, te, tir), and the
autotvm configs, which are checked like the in-memory cache checks them (the dispatch context
must still answer each recorded query with the same config). Records are used only while
every operator is as the package defined it (op_attrs.definitions_are_library_only: a user op,
strategy or attribute changes lowering in a way no digest of the package sees), for llvm
targets this process can run, and never while autotvm traces tasks (extraction needs the
lowering itself). The TECompiler writes the records of what it lowered with the build that
compiles those kernels, in one batch. A record whose object code is missing from disk (evicted,
or compiled under another kernel name: the object code's key holds the symbol) is harmless: the
kernel is lowered again when codegen asks for its PrimFunc.
"""
import dataclasses
import functools
import json

from .. import cache
from ..autotvm.task.task import clean_json
from ..autotvm.task.topi_integration import TaskExtractEnv
from ..codegen import llvm_target
from ..codegen.llvm import kernel_signature
from ..codegen.llvm_cache import KernelRecord, kernel_content_digest, sources_digest
from ..config import get as get_config
from ..errors import SerializationError
from ..ir.structural import structural_digest
from ..op.op_attrs import definitions_are_library_only
from ..runtime.signature import SYMBOL_PREFIX, FunctionInfo
from ..transform import PassContext

CACHE_KIND = "relay"
KEY_FORMAT = "relay-kernel-v1"


@functools.lru_cache(maxsize=None)
def package_digest() -> str:
    """sources_digest of the whole package: lowering may read any part of it."""
    return sources_digest(("",))


def _pass_context_text() -> str:
    ctx = PassContext.current()
    config = sorted((str(k), repr(v)) for k, v in dict(ctx.config or {}).items())
    return f"O{ctx.opt_level}|{config!r}|{sorted(ctx.required_pass or ())!r}|" \
           f"{sorted(ctx.disabled_pass or ())!r}"


def record_key(source_func, target):
    """The key text of `source_func` lowered for `target` (a Target), or None when records
    cannot be used for it (see the module docstring)."""
    extracting = TaskExtractEnv.current is not None and TaskExtractEnv.current.tracing
    if (get_config().no_disk_cache or target.kind.name != "llvm" or extracting
            or not definitions_are_library_only() or source_func.attrs.get("Compiler") is not None):
        return None
    spec = llvm_target.machine_spec(target)
    if not spec.runs_here:
        return None
    return "|".join([KEY_FORMAT, structural_digest(source_func), str(target), spec.triple, spec.cpu,
                     spec.features, f"O{spec.opt_level}", _pass_context_text(), package_digest()])


@dataclasses.dataclass(frozen=True)
class LoweringRecord:
    """What a record holds: the kernel under a neutral name, and what lowering reported."""

    content: str
    info: FunctionInfo               # under the name it was stored with; kernel() renames it
    implementations: list
    queries: tuple
    untuned: tuple

    def kernel(self, name: str, prim_func) -> KernelRecord:
        """The KernelRecord of this kernel named `name`; `prim_func()` lowers it again."""
        info = dataclasses.replace(self.info, name=name, symbol=SYMBOL_PREFIX + name)
        return KernelRecord(info, self.content, prim_func)


def _json_round_trips(value) -> bool:
    try:
        return clean_json(json.loads(json.dumps(value))) == value
    except (TypeError, ValueError):
        return False


def make(key: str, prim, implementations, queries, untuned_workloads):
    """(LoweringRecord, cache entry) of a kernel just lowered (`prim`, its PrimFunc); the entry
    is a (kind, key, parts) triple for cache.store_many (the TECompiler writes a build's records
    in one batch: each write scans the cache for its size bound). None when some part cannot be
    written as JSON and read back equal (then nothing is to be stored)."""
    content = kernel_content_digest(prim)
    queries = tuple(queries)
    untuned_workloads = tuple(untuned_workloads)
    if content is None or not _json_round_trips((queries, untuned_workloads)):
        return None
    info = kernel_signature(prim, set())
    body = {"content": content, "signature": info.to_json(),
            "implementations": [list(pair) for pair in implementations],
            "queries": [list(q) for q in queries], "untuned": list(untuned_workloads)}
    text = json.dumps(body)
    return _record(json.loads(text)), (CACHE_KIND, key, {"record": text.encode()})   # as read back


def load(key: str):
    """The LoweringRecord stored under `key`, or None (none stored, or not a valid record)."""
    parts = cache.load(CACHE_KIND, key)
    if parts is None or "record" not in parts:
        return None
    try:
        return _record(json.loads(parts["record"].decode()))
    except (ValueError, TypeError, KeyError, UnicodeDecodeError, SerializationError):
        return None


def _record(body: dict) -> LoweringRecord:
    return LoweringRecord(str(body["content"]), FunctionInfo.from_json(body["signature"]),
                          [tuple(map(str, pair)) for pair in body["implementations"]],
                          tuple((clean_json(w), str(fp)) for w, fp in body["queries"]),
                          tuple(clean_json(w) for w in body["untuned"]))


__all__ = ["CACHE_KIND", "LoweringRecord", "load", "make", "package_digest", "record_key"]
