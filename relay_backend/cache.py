"""The on-disk cache of compiled code, shared by every build path and every process.

`relay.build` (graph), `vm.compile` (both through codegen's LLVM kernels) and the AOT executor
(its C program) keep what LLVM or the C compiler produced here, content-addressed: an entry's
file name is a digest of its key text, and the key text names everything the code was built
from (the lowered kernel, the target with the host CPU and its features, a digest of the
compiler). A second process building the same model reads the entries and compiles nothing.

    relay_backend.cache.info()     # CacheInfo(dir, entries, bytes, max_bytes, hits, misses, stores)
    relay_backend.cache.clear()    # delete every entry; returns how many

Entry file `<kind>-<digest>.rbc`:

    MAGIC (8 bytes) | u32 header length | header JSON {"key": key text, "parts": [[name, size], ...]}
    | the parts' bytes, in order | SHA-256 of everything before it (32 bytes)

The whole file is checked (magic, sizes, checksum, stored key == wanted key) before any byte of
it is used; a corrupt, truncated or foreign entry is deleted and read as a miss, so the caller
compiles again. Parts are plain bytes (object code, IR text): nothing is unpickled, and loading
an entry never runs Python code.

Writes go to a private temporary file in the same directory and then `os.replace`: a reader
sees the old entry, none, or the whole new one, and two processes storing one entry at once
both succeed (they wrote the same bytes; the last rename wins). The least recently used entries
(a read touches an entry's mtime) are deleted until the cache is within RB_CACHE_MAX_BYTES
(default 2 GiB) after a process's first batch of writes to the directory, and then whenever it
has written 1/EVICT_EVERY of the bound since its last look: the look lists and stats every
entry (0.44-0.56 s for a cache of 79,000 entries), which after every build's writes made a test
suite run 3.5x longer. So the cache stays within the bound plus 1/EVICT_EVERY of it per process
writing at the time. RB_NO_DISK_CACHE=1 turns the cache off.
"""
import hashlib
import json
import logging
import os
import re
import stat
import struct
import threading
import time
import warnings
from dataclasses import dataclass

from .config import get as get_config
from .docstrings import shared_parameters
from .errors import CacheError

MAGIC = b"RBCACHE1"
SUFFIX = ".rbc"
# kernels the TECompiler kept before this cache (<32 hex digits>.so): never read any more,
# but counted, evicted and cleared like entries so they do not fill the disk forever
_LEGACY = re.compile(r"^[0-9a-f]{32}\.so$")
_TMP_SUFFIX = ".tmp"
_STALE_TMP_S = 600            # a temporary file this old was left by a writer that died
_LOG = logging.getLogger(__name__)
_COUNTS = {"hits": 0, "misses": 0, "stores": 0}
_COUNTS_LOCK = threading.Lock()
EVICT_EVERY = 16              # a process looks again after writing 1/EVICT_EVERY of the bound
_WRITTEN = {}                 # folder -> bytes this process wrote there since it last evicted


@dataclass(frozen=True)
class CacheInfo:
    """What info() reports about the kernel cache.

    Parameters
    ----------
    dir : str or None
        The cache directory, or None when the cache is off (RB_CACHE=0).
    entries : int
        The number of entries in it.
    bytes : int
        Their total size in bytes.
    max_bytes : int
        The size bound (RB_CACHE_MAX_BYTES) eviction keeps the cache under.
    hits : int
        How many loads this process found an entry for.
    misses : int
        How many loads found none.
    stores : int
        How many entries this process wrote.
    """

    dir: object
    entries: int
    bytes: int
    max_bytes: int
    hits: int
    misses: int
    stores: int


def cache_dir():
    """The cache directory (created if needed), or None when RB_NO_DISK_CACHE=1; a CacheError
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


# how every entry is named (shared_parameters completes the docstrings of the functions taking one)
ENTRY_PARAMETERS = {
    "kind": ("str", 'The kind of artifact (e.g. "kernel"), the first part of the file name.'),
    "key": ("str", "The string identifying the entry (its digest names the file)."),
}


def entry_name(kind: str, key: str) -> str:
    """The file name of the entry for (`kind`, `key`): the kind, then a digest of the key."""
    return f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:40]}{SUFFIX}"


@shared_parameters(ENTRY_PARAMETERS)
def entry_path(kind: str, key: str):
    """Where the entry for a (kind, key) pair lives.

    Returns
    -------
    path : str or None
        The file path, or None when the cache is off.
    """
    folder = cache_dir()
    return os.path.join(folder, entry_name(kind, key)) if folder else None


def _count(what: str) -> None:
    with _COUNTS_LOCK:
        _COUNTS[what] += 1


# ---------------------------------------------------------------- the entry format

def encode_entry(key: str, parts: dict) -> bytes:
    """The bytes of an entry holding `parts` ({name: bytes}) under `key`."""
    header = json.dumps({"key": key, "parts": [[name, len(blob)] for name, blob in parts.items()]}).encode()
    body = MAGIC + struct.pack("<I", len(header)) + header + b"".join(bytes(b) for b in parts.values())
    return body + hashlib.sha256(body).digest()


def decode_entry(data: bytes, key: str):
    """{name: bytes} of an entry stored under `key`, or a string saying why it is unusable."""
    if len(data) < len(MAGIC) + 4 + 32 or not data.startswith(MAGIC):
        return "not a cache entry (bad magic or truncated)"
    body, digest = data[:-32], data[-32:]
    if hashlib.sha256(body).digest() != digest:
        return "checksum mismatch (corrupt or truncated)"
    (header_len,) = struct.unpack("<I", body[len(MAGIC):len(MAGIC) + 4])
    start = len(MAGIC) + 4
    if start + header_len > len(body):
        return "bad header length"
    try:
        header = json.loads(body[start:start + header_len].decode())
        stored_key, table = header["key"], header["parts"]
        sizes = [(str(name), int(size)) for name, size in table]
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, KeyError, TypeError, ValueError):
        return "unreadable header"
    if stored_key != key:
        return "it holds another key"
    offset, parts = start + header_len, {}
    if any(size < 0 for _, size in sizes) or offset + sum(size for _, size in sizes) != len(body):
        return "part sizes do not match the file"
    for name, size in sizes:
        parts[name] = body[offset:offset + size]
        offset += size
    return parts


# ---------------------------------------------------------------- reading and writing

@shared_parameters(ENTRY_PARAMETERS)
def load(kind: str, key: str):
    """The parts stored for a (kind, key) pair.

    Returns
    -------
    parts : dict of str to bytes or None
        {name: bytes}, or None on a miss: the cache is off, there is no entry, or the entry
        was unusable (and has been deleted).
    """
    path = entry_path(kind, key)
    parts = _read(path, key) if path else None
    _count("hits" if parts is not None else "misses")
    return parts


def _read(path: str, key: str):
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as err:
        warnings.warn(f"kernel cache entry {path} cannot be read ({err.strerror}); compiling "
                      f"without the cache", RuntimeWarning, stacklevel=3)
        return None
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        warnings.warn(f"kernel cache entry {path} is {kind}; the code is compiled and not cached "
                      f"until you remove it", RuntimeWarning, stacklevel=3)
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:             # deleted (evicted, replaced) between stat and open: a miss
        return None
    parts = decode_entry(data, key)
    if isinstance(parts, str):
        _LOG.warning("kernel cache entry %s is unusable (%s); compiling it again", path, parts)
        _remove(path)
        return None
    try:
        os.utime(path)           # most recently used: the last to be evicted
    except OSError:
        pass
    return parts


@shared_parameters(ENTRY_PARAMETERS)
def store(kind: str, key: str, parts: dict) -> None:
    """Keep parts under a (kind, key) pair (see store_many).

    Parameters
    ----------
    parts : dict of str to bytes
        The named byte strings to keep.
    """
    store_many([(kind, key, parts)])


def store_many(entries) -> None:
    """Write entries atomically, then evict down to the size bound when it is due (the first
    writes of this process to the directory, then every 1/EVICT_EVERY of the bound it wrote).
    A failure (disk full, read-only directory) costs only speed: it is logged, never raised.

    Parameters
    ----------
    entries : iterable of tuple
        (kind, key, parts) triples, as store takes them.
    """
    folder = cache_dir()
    if folder is None:
        return
    written = 0
    for kind, key, parts in entries:
        path = os.path.join(folder, entry_name(kind, key))
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}{_TMP_SUFFIX}"
        try:
            data = encode_entry(key, parts)
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            _count("stores")
            written += len(data)
        except OSError as err:
            _LOG.warning("cannot write kernel cache entry %s (%s); continuing without it", path, err)
            _remove(tmp)
    if _eviction_due(folder, written):
        evict(folder)


def _eviction_due(folder: str, written: int) -> bool:
    """Whether this process should look at the directory's size now, having just written
    `written` bytes there (see the module docstring); resets its count when it should."""
    with _COUNTS_LOCK:
        since = _WRITTEN.get(folder)
        total = written + (since or 0)
        due = since is None or total >= get_config().cache_max_bytes // EVICT_EVERY
        _WRITTEN[folder] = 0 if due else total
        return due


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass                     # already gone (another process), or not ours to remove


# ---------------------------------------------------------------- size bound, clear, info

def _scan(folder: str) -> list:
    """[(mtime, size, path)] of the entries in `folder`; deletes stale temporary files."""
    found, now = [], time.time()
    try:
        items = list(os.scandir(folder))
    except OSError:
        return found
    for item in items:
        try:
            if not item.is_file(follow_symlinks=False):
                continue
            st = item.stat(follow_symlinks=False)
        except OSError:
            continue
        if item.name.endswith(SUFFIX) or _LEGACY.match(item.name):
            found.append((st.st_mtime, st.st_size, item.path))
        elif item.name.endswith(_TMP_SUFFIX) and SUFFIX in item.name and now - st.st_mtime > _STALE_TMP_S:
            _remove(item.path)
    return found


def evict(folder=None, max_bytes=None) -> int:
    """Delete least recently used entries until the cache fits a size bound.

    Parameters
    ----------
    folder : str, optional
        The cache directory; None (the default) is the configured one.
    max_bytes : int, optional
        The bound in bytes; None (the default) is RB_CACHE_MAX_BYTES.

    Returns
    -------
    count : int
        How many entries were deleted.
    """
    folder = folder or cache_dir()
    if folder is None:
        return 0
    limit = get_config().cache_max_bytes if max_bytes is None else max_bytes
    entries = sorted(_scan(folder))
    total = sum(size for _, size, _ in entries)
    removed = 0
    for _, size, path in entries:
        if total <= limit:
            break
        _remove(path)
        total -= size
        removed += 1
    return removed


def clear() -> int:
    """Delete every cache entry (and kernel libraries an older relay_backend left there; other
    files in the directory are left alone); returns how many were deleted."""
    folder = cache_dir()
    if folder is None:
        return 0
    entries = _scan(folder)
    for _, _, path in entries:
        _remove(path)
    return len(entries)


def info() -> CacheInfo:
    """The cache's directory, entry count, total bytes and size bound, and this process's
    hits / misses / stores (tvm has no equivalent; this is relay_backend's own)."""
    folder = cache_dir()
    entries = _scan(folder) if folder else []
    with _COUNTS_LOCK:
        counts = dict(_COUNTS)
    return CacheInfo(folder, len(entries), sum(size for _, size, _ in entries),
                     get_config().cache_max_bytes, counts["hits"], counts["misses"], counts["stores"])


__all__ = ["CacheInfo", "EVICT_EVERY", "cache_dir", "clear", "entry_path", "evict", "info", "load", "store",
           "store_many"]
