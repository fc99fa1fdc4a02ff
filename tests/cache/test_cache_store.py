"""The on-disk cache's store (relay_backend/cache.py) on its own, without a compiler: entries
round-trip; a corrupt, truncated or foreign entry is a miss and is deleted; writes are atomic
(no temporary left behind, a half-written file never read); eviction keeps the directory under
RB_CACHE_MAX_BYTES, least recently used first; clear() and info(); RB_NO_DISK_CACHE=1."""
import os
import threading
import time

import pytest

from relay_backend import cache, config
from relay_backend.errors import CacheError, RelayError


def _set_env(monkeypatch, **values):
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    config.reload()


def test_an_entry_round_trips_and_is_counted(cache_dir):
    before = cache.info()
    parts = {"object": bytes(range(256)) * 4, "ll": b"define void @f() { ret void }"}
    assert cache.load("llvm", "key-1") is None
    cache.store("llvm", "key-1", parts)
    assert cache.load("llvm", "key-1") == parts
    assert cache.load("llvm", "key-2") is None               # another key: a miss
    info = cache.info()
    assert info.dir == str(cache_dir) and info.entries == 1
    assert info.bytes == os.path.getsize(cache.entry_path("llvm", "key-1"))
    assert (info.hits - before.hits, info.misses - before.misses, info.stores - before.stores) == (1, 2, 1)
    assert not [n for n in os.listdir(cache_dir) if n.endswith(".tmp")]      # atomic: no leftovers


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "append", "empty", "foreign file"])
def test_a_damaged_entry_is_a_miss_and_is_deleted(cache_dir, damage):
    parts = {"object": b"\x7fELF" + b"x" * 1000}
    cache.store("llvm", "k", parts)
    path = cache.entry_path("llvm", "k")
    data = open(path, "rb").read()
    damaged = {"flip a byte": data[:500] + bytes([data[500] ^ 1]) + data[501:],
               "truncate": data[:len(data) // 2], "append": data + b"\0",
               "empty": b"", "foreign file": b"\x7fELF not a cache entry at all"}[damage]
    with open(path, "wb") as f:
        f.write(damaged)
    assert cache.load("llvm", "k") is None
    assert not os.path.exists(path)                          # removed, so the rebuild replaces it
    cache.store("llvm", "k", parts)
    assert cache.load("llvm", "k") == parts


def test_an_entry_copied_under_another_key_is_never_served(cache_dir):
    cache.store("llvm", "x + 1", {"object": b"one"})
    os.replace(cache.entry_path("llvm", "x + 1"), cache.entry_path("llvm", "x + 2"))
    assert cache.load("llvm", "x + 2") is None               # the key stored inside differs


def test_decode_names_what_is_wrong():
    good = cache.encode_entry("k", {"a": b"12", "b": b""})
    assert cache.decode_entry(good, "k") == {"a": b"12", "b": b""}
    assert "another key" in cache.decode_entry(good, "other")
    assert "checksum" in cache.decode_entry(good[:-1] + bytes([good[-1] ^ 1]), "k")
    assert "magic" in cache.decode_entry(b"RB", "k")


def test_an_entry_that_is_a_directory_is_left_alone(cache_dir):
    path = cache.entry_path("llvm", "dir-key")
    os.makedirs(os.path.join(path, "keep-me"))
    with pytest.warns(RuntimeWarning, match=rf"{path}.*is a directory.*remove it"):
        assert cache.load("llvm", "dir-key") is None
    cache.store("llvm", "dir-key", {"object": b"data"})       # cannot replace it: logged, no error
    assert os.path.isdir(os.path.join(path, "keep-me"))


def test_cache_dir_that_is_a_file_raises_naming_the_path(tmp_path, monkeypatch):
    not_a_dir = tmp_path / "cache-file"
    not_a_dir.write_text("I am a file")
    _set_env(monkeypatch, RB_CACHE_DIR=str(not_a_dir))
    monkeypatch.delenv("RB_NO_DISK_CACHE", raising=False)
    config.reload()
    try:
        with pytest.raises(CacheError, match=rf"{not_a_dir}.*is a file, not a directory.*RB_NO_DISK_CACHE=1") as info:
            cache.load("llvm", "k")
        assert isinstance(info.value, RelayError)
    finally:
        monkeypatch.undo()
        config.reload()


def test_the_directory_is_looked_at_on_the_first_write_then_per_sixteenth_of_the_bound(cache_dir, monkeypatch):
    """Listing a large cache costs ~0.5 s, so a process evicts after its first writes to the
    directory and then only once it has written 1/EVICT_EVERY of the bound since: the bound
    still holds within that margin."""
    looks = []
    scan = cache._scan
    monkeypatch.setattr(cache, "_scan", lambda folder: looks.append(folder) or scan(folder))
    blob = os.urandom(10_000)
    cache.store("llvm", "first", {"object": blob})
    assert len(looks) == 1                                   # this process's first write here
    size = os.path.getsize(cache.entry_path("llvm", "first"))
    _set_env(monkeypatch, RB_CACHE_MAX_BYTES=str(cache.EVICT_EVERY * size * 3))
    for i in range(2):
        cache.store("llvm", f"small{i}", {"object": blob})
    assert len(looks) == 1                                   # 2 entries: under a sixteenth
    cache.store("llvm", "third", {"object": blob})
    assert len(looks) == 2                                   # the third reaches it
    _set_env(monkeypatch, RB_CACHE_MAX_BYTES=str(2 * size))
    cache.store("llvm", "last", {"object": blob})           # a sixteenth of 2 entries: due
    info = cache.info()
    assert len(looks) >= 3 and info.entries == 2 and info.bytes <= info.max_bytes


def test_eviction_keeps_the_size_under_the_bound_least_recently_used_first(cache_dir, monkeypatch):
    blob = os.urandom(10_000)
    for i in range(6):
        cache.store("llvm", f"k{i}", {"object": blob})
    size = os.path.getsize(cache.entry_path("llvm", "k0"))
    now = time.time()
    for i in range(6):                                       # k0 oldest ... k5 newest
        os.utime(cache.entry_path("llvm", f"k{i}"), (now - 100 + i, now - 100 + i))
    assert cache.load("llvm", "k1") is not None              # a read makes k1 the most recent
    _set_env(monkeypatch, RB_CACHE_MAX_BYTES=str(3 * size + size // 2))
    cache.store("llvm", "k6", {"object": blob})              # a write evicts down to the bound
    info = cache.info()
    assert info.bytes <= info.max_bytes and info.entries == 3
    kept = {i for i in range(7) if os.path.exists(cache.entry_path("llvm", f"k{i}"))}
    assert kept == {1, 5, 6}
    _set_env(monkeypatch, RB_CACHE_MAX_BYTES="0")
    assert cache.evict() == 3 and cache.info().entries == 0


def test_size_bound_accepts_suffixes(monkeypatch):
    try:
        _set_env(monkeypatch, RB_CACHE_MAX_BYTES="500M")
        assert config.get().cache_max_bytes == 500 << 20
        monkeypatch.setenv("RB_CACHE_MAX_BYTES", "lots")
        with pytest.raises(ValueError, match="RB_CACHE_MAX_BYTES='lots' is not a byte count"):
            config.reload()
    finally:
        monkeypatch.undo()
        config.reload()


def test_clear_removes_entries_and_nothing_else(cache_dir):
    for i in range(3):
        cache.store("aot", f"k{i}", {"so": b"x" * 10})
    (cache_dir / "README.txt").write_text("not ours")
    (cache_dir / ("0123456789abcdef" * 2 + ".so")).write_bytes(b"an old kernel library")
    assert cache.info().entries == 4                          # the old library counts (and is evicted)
    assert cache.clear() == 4
    assert cache.info().entries == 0 and cache.info().bytes == 0
    assert os.listdir(cache_dir) == ["README.txt"]


def test_disabled_cache_reads_and_writes_nothing(tmp_path, monkeypatch):
    try:
        _set_env(monkeypatch, RB_CACHE_DIR=str(tmp_path / "c"), RB_NO_DISK_CACHE="1")
        cache.store("llvm", "k", {"object": b"x"})
        assert cache.load("llvm", "k") is None
        assert cache.info().dir is None and cache.clear() == 0
        assert not (tmp_path / "c").exists()
    finally:
        monkeypatch.undo()
        config.reload()


def test_concurrent_writers_and_readers_never_see_a_partial_entry(cache_dir):
    parts = {"object": os.urandom(200_000)}
    seen = []

    def writer():
        for _ in range(20):
            cache.store("llvm", "hot", parts)

    def reader():
        for _ in range(60):
            got = cache.load("llvm", "hot")
            if got is not None:
                seen.append(got == parts)

    threads = [threading.Thread(target=f) for f in (writer, writer, reader, reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen and all(seen)
    assert cache.load("llvm", "hot") == parts
