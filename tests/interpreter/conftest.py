"""Shared helpers for the interpreter tests: building and reading Prelude lists."""
import numpy as np
import pytest

from relay_backend.interpreter import ConstructorValue
from relay_backend.runtime import ndarray as nd


def _make_list(prelude, items):
    """A Prelude List value (ConstructorValue chain) from Python items (converted to NDArrays)."""
    value = ConstructorValue(prelude.nil.tag, [], prelude.nil)
    for item in reversed(list(items)):
        value = ConstructorValue(prelude.cons.tag, [nd.array(np.asarray(item)), value], prelude.cons)
    return value


def _read_list(value):
    """The Python list of field values of a List value (iteratively, so long lists are fine)."""
    out = []
    while value.constructor.name_hint == "Cons":
        out.append(value.fields[0])
        value = value.fields[1]
    assert value.constructor.name_hint == "Nil"
    return out


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def make_list():
    return _make_list


@pytest.fixture
def read_list():
    return _read_list
