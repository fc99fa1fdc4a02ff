"""Fixtures shared by every test directory.

`scratch_names`: for tests that register global functions; the names they list are
unregistered afterwards, so no test leaks a name (or a codegen) into the next."""
import pytest

import relay_backend as relay


@pytest.fixture
def scratch_names():
    """A list the test appends the global function names it registers to."""
    names = []
    yield names
    for name in names:
        if relay.get_global_func(name, allow_missing=True) is not None:
            relay.remove_global_func(name)
