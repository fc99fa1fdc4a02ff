"""Fixtures shared across test packages."""
import pytest

from relay_backend import config


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty on-disk cache of this test's own (RB_CACHE_DIR under tmp_path, the cache on,
    the default size bound), undone afterwards."""
    monkeypatch.setenv("RB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RB_NO_DISK_CACHE", raising=False)
    monkeypatch.delenv("RB_CACHE_MAX_BYTES", raising=False)
    config.reload()
    yield tmp_path / "cache"
    monkeypatch.undo()
    config.reload()
