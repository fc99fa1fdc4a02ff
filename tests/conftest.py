"""Fixtures shared by every test directory.

`cache_dir`: an empty on-disk compile cache of the test's own.
`scratch_names`: for tests that register global functions; the names they list are
unregistered afterwards, so no test leaks a name (or a codegen) into the next."""
import pytest

import relay_backend as relay
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


@pytest.fixture
def scratch_names():
    """A list the test appends the global function names it registers to."""
    names = []
    yield names
    for name in names:
        if relay.get_global_func(name, allow_missing=True) is not None:
            relay.remove_global_func(name)
