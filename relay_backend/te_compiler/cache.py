"""The compilation cache: CCacheKey = (primitive function up to alpha-renaming, target).

In memory, equal keys share one CCacheValue (its use_count shows how often it was asked for).
On disk, compiled kernels are stored as exported libraries keyed by (structural hash, target,
kernel name, package version, a digest of the package source, the chosen implementations
with a digest of their compute and schedule code, the host CPU name and features), so a
second process loads them instead of running LLVM, and neither a changed compiler, a
different (user-registered) implementation nor another CPU sharing the cache directory ever
loads a kernel that was not built for it. The full key is also stored inside each entry and
compared on load, so a valid library under the wrong file name is rebuilt, never served.
"""
import functools
import hashlib
import os
import pathlib
import stat
import types
import warnings
from dataclasses import dataclass, field

from ..config import VERSION, get as get_config
from ..errors import CacheError, RelayError, SerializationError
from ..ir.structural import structural_equal, structural_hash
from ..op.op_attrs import definition_generation
from ..runtime.module import load_library
from ..transform import InferTypeLocal
from ..target import as_target

PACKAGE_VERSION = VERSION


class ObjectIdentity:
    """TVM's Object comparison for Python objects mirroring TVM Objects: `a == b` and
    `a.same_as(b)` mean the same object, and the hash is the object's identity."""

    def same_as(self, other) -> bool:
        return self is other

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return id(self) >> 4


@dataclass(eq=False)
class CachedFunc(ObjectIdentity):
    """A lowered primitive function: its kernel name, te inputs/outputs and PrimFuncs.
    Compared as TVM compares Objects: by identity (same_as)."""

    target: object               # the target.Target it was lowered for
    func_name: str
    prim_fn_var: object          # GlobalVar naming the kernel
    inputs: list                 # te placeholders
    outputs: list                # te output tensors
    funcs: dict                  # name -> tir PrimFunc
    implementations: list = field(default_factory=list)  # (op, implementation) chosen
    impl_fingerprint: str = ""   # implementations_fingerprint() of the chosen implementations (+ configs)
    tuning_queries: tuple = ()   # (workload, config fingerprint) the dispatch context answered
    untuned: tuple = ()          # (target, workload) of tunable implementations run untuned
    external_module: object = None   # the runtime Module an external codegen (relay.ext.*) made


def ensure_typed(func):
    """Type `func` in place unless it is typed already (InferType also fills a missing ret_type)."""
    if func.body._checked_type_ is None:
        InferTypeLocal(func)
    return func


class CCacheKey(ObjectIdentity):
    """(source_func, target, operator definitions). As a TVM Object, `==`, `same_as` and `hash` go
    by identity; the cache itself matches keys structurally through `structural_key` (TVM's
    CCacheKeyNode::Equal: structurally equal functions and the same target, compared by its
    canonical string, so "llvm -mcpu=a" and "llvm -mcpu=b" never share a kernel), and only while
    no operator definition changed in between (an op's compute or strategy replaced from user
    code, see op_attrs.definition_generation). The function is typed first: typing fills a
    missing ret_type, which the structural hash covers, so typing it after the key was made would
    leave the key's hash stale."""

    def __init__(self, source_func, target):
        self.source_func = ensure_typed(source_func)
        self.target = as_target(target)
        self.target_text = str(self.target)
        self.op_generation = definition_generation()
        self.structural_key = StructuralKey(self.source_func, self.target_text, self.op_generation)

    def disk_key_text(self, func_name: str, impl_fingerprint: str) -> str:
        """Everything a cached kernel must have been built for, as text: stored inside each
        entry and compared on load, so a file under the wrong name is never served."""
        cpu, features = host_cpu_fingerprint()
        return (f"{structural_hash(self.source_func):016x}|{self.target_text}|{func_name}|{PACKAGE_VERSION}|"
                f"{compiler_digest()}|{impl_fingerprint}|{cpu}|{features}")

    def disk_key(self, func_name: str, impl_fingerprint: str) -> str:
        """The on-disk file name of this kernel: `impl_fingerprint` (from
        implementations_fingerprint) says which implementations built it."""
        return hashlib.sha256(self.disk_key_text(func_name, impl_fingerprint).encode()).hexdigest()[:32]


class StructuralKey:
    """The cache's view of a CCacheKey: equal when the functions are structurally equal (up to
    alpha-renaming), the targets match and the operator definitions are the same generation;
    hashed by structural hash, target and generation."""

    __slots__ = ("source_func", "target", "op_generation", "_hash")

    def __init__(self, source_func, target: str, op_generation: int = 0):
        self.source_func = source_func
        self.target = target
        self.op_generation = op_generation
        self._hash = hash((structural_hash(source_func), target, op_generation))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return (isinstance(other, StructuralKey) and self._hash == other._hash and self.target == other.target
                and self.op_generation == other.op_generation and structural_equal(self.source_func, other.source_func))


@functools.lru_cache(maxsize=None)
def host_cpu_fingerprint() -> tuple:
    """(process triple + cpu name, feature string): kernels are built for the host CPU, so a
    cache directory shared between machines must not hand one's code to another."""
    import llvmlite.binding as llvm
    from ..codegen.llvm_target import host_cpu
    cpu, features = host_cpu()
    return f"{llvm.get_process_triple()}/{cpu}", features


def implementations_fingerprint(chosen) -> str:
    """A digest of the implementations chosen for a function: for each (op name,
    OpImplementation) its op, name, plevel and the code of its compute and schedule functions,
    so a kernel built with a user-registered implementation is never served without it."""
    digest = hashlib.sha256()
    for op_name, impl in chosen:
        digest.update(f"{op_name}|{impl.name}|{impl.plevel}|".encode())
        digest.update(_callable_digest(impl.compute).encode())
        digest.update(b"|")
        digest.update(_callable_digest(impl.schedule).encode())
        digest.update(b";")
    return digest.hexdigest()[:16]


def _callable_digest(fn) -> str:
    """Module, qualname and bytecode (with constants, names and closure values) of `fn`."""
    digest = hashlib.sha256()
    seen = set()

    def feed(obj, level):
        if level > 4 or id(obj) in seen:
            digest.update(b"<...>")
            return
        if isinstance(obj, (type(None), bool, int, float, complex, str, bytes)):
            digest.update(repr(obj).encode())
            return
        seen.add(id(obj))
        if isinstance(obj, (tuple, list, frozenset)):
            digest.update(type(obj).__name__.encode())
            for item in (sorted(obj, key=repr) if isinstance(obj, frozenset) else obj):
                feed(item, level)
            return
        if isinstance(obj, types.CodeType):
            digest.update(f"{obj.co_name}|{obj.co_names}|{obj.co_varnames}|".encode())
            digest.update(obj.co_code)
            feed(obj.co_consts, level)
            return
        if isinstance(obj, functools.partial):
            digest.update(b"partial")
            feed(obj.func, level + 1)
            feed(obj.args, level + 1)
            feed(tuple(sorted(obj.keywords.items())), level + 1)
            return
        if isinstance(obj, types.MethodType):
            feed(obj.__func__, level)
            return
        code = getattr(obj, "__code__", None)
        if isinstance(code, types.CodeType):
            digest.update(f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}|"
                          .encode())
            feed(code, level)
            feed(getattr(obj, "__defaults__", None), level + 1)
            for cell in getattr(obj, "__closure__", None) or ():
                try:
                    feed(cell.cell_contents, level + 1)
                except ValueError:             # an empty cell
                    digest.update(b"<empty>")
            return
        if callable(obj) and not isinstance(obj, type):
            cls = type(obj)
            digest.update(f"{cls.__module__}.{cls.__qualname__}|".encode())
            call = getattr(cls, "__call__", None)
            if call is not None and hasattr(call, "__code__"):
                feed(call, level + 1)
            return
        if isinstance(obj, type):
            digest.update(f"{obj.__module__}.{obj.__qualname__}".encode())
            return
        # any other object (a module, an op definition, ...): its type and, where it has one,
        # its name; its identity would differ between processes, so it is not hashed
        digest.update(f"{type(obj).__module__}.{type(obj).__qualname__}:"
                      f"{getattr(obj, '__name__', getattr(obj, 'name', ''))}".encode())

    feed(fn, 0)
    return digest.hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def compiler_digest() -> str:
    """A hash of the package's own source: any change to an op compute, a schedule or the
    codegen makes every previously cached kernel stale (the version string alone would not)."""
    root = pathlib.Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(eq=False)
class CCacheValue(ObjectIdentity):
    """A cache entry: the lowered function, how often it was asked for, its compiled Module."""

    cached_func: CachedFunc
    use_count: int = 0
    module: object = None        # runtime Module once compiled


def disk_cache_dir():
    """Where compiled kernels are kept across processes, or None when disabled; CacheError
    naming the path when it is a file or cannot be created."""
    cfg = get_config()
    if cfg.no_disk_cache:
        return None
    path = cfg.cache_dir or os.path.join(os.path.expanduser("~"), ".cache", "relay_backend")
    fix = "point RB_CACHE_DIR at a directory, or set RB_NO_DISK_CACHE=1 to compile without it"
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise CacheError(f"the kernel cache directory {path!r} is a file, not a directory; {fix}") from None
    except OSError as err:
        raise CacheError(f"cannot create the kernel cache directory {path!r} ({err.strerror}); {fix}") from None
    return path


KEY_SECTION = "relay_backend.kernel_cache_key"


def load_cached(path: str, key_text: str):
    """The Module cached at `path` if it is a valid library built for `key_text`, else None.

    A corrupt entry, or a valid library holding another key (copied there, left by another
    build), is removed so the rebuilt kernel replaces it. Anything that is not a regular file
    is never touched: a RuntimeWarning names it and the kernel is built without the cache."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as err:
        warnings.warn(f"kernel cache entry {path} cannot be read ({err.strerror}); building the "
                      f"kernel without the cache", RuntimeWarning, stacklevel=3)
        return None
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        warnings.warn(f"kernel cache entry {path} is {kind}; the kernel is built and not cached "
                      f"until you remove it", RuntimeWarning, stacklevel=3)
        return None
    try:
        module, _ = load_library(path, require={KEY_SECTION: key_text.encode()})
        return module
    except SerializationError:
        try:
            os.remove(path)               # rebuilt below; another process may have removed it
        except OSError:
            pass
        return None


def store_cached(path: str, module, key_text: str) -> None:
    """Write `module` to `path` atomically, with its key inside; a failure only costs speed."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        module.export_library(tmp, sections={KEY_SECTION: key_text.encode()})
        os.replace(tmp, path)
    except (OSError, RelayError):
        try:
            os.remove(tmp)
        except OSError:
            pass
