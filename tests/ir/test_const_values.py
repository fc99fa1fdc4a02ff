"""relay.const never changes a value silently, and relay.var / relay.const / Constant reject dtypes
no executor supports (complex, strings, objects, non-native byte order) where they enter.

Default dtypes follow tvm.relay.const (Python int -> int32, float -> float32, int64 / float64
arrays -> int32 / float32); a value that does not fit the target dtype raises a RelayError naming
the value and the dtype that holds it, instead of numpy's wrap-around (2**40 -> 0) or overflow
to inf (1e300 -> inf). Values that fit are checked against numpy exactly."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import RelayError
from relay_backend.ir import Constant, TensorType


@pytest.mark.parametrize("value,dtype,named,fix", [
    (2 ** 40, None, "1099511627776", 'dtype="int64"'),
    (np.array([2 ** 40]), None, "1099511627776", 'dtype="int64"'),
    ([1, -2 ** 40], None, "-1099511627776", 'dtype="int64"'),
    (np.array([300]), "int8", "300", 'dtype="int64"'),
    (-1, "uint8", "-1", 'dtype="int64"'),
    (2 ** 63, "int64", "9223372036854775808", 'dtype="uint64"'),
    (2 ** 70, None, "1180591620717411303424", 'dtype="float64"'),
    (1e300, None, "1e+300", 'dtype="float64"'),
    (np.array([1.0, -1e300]), None, "-1e+300", 'dtype="float64"'),
    (70000, "float16", "70000", 'dtype="float64"'),
    (float("nan"), "int32", "nan", "float"),
    (np.array([1.0, np.inf]), "int64", "inf", "float"),
    (3e9, "int32", "3000000000", 'dtype="int64"'),
])
def test_values_that_do_not_fit_raise_naming_the_value(value, dtype, named, fix):
    with pytest.raises(RelayError) as info:
        relay.const(value, dtype)
    message = str(info.value)
    assert named in message and fix in message, message


@pytest.mark.parametrize("value,dtype,expected", [
    (2 ** 31 - 1, None, np.array(2 ** 31 - 1, "int32")),
    (np.array([2 ** 40]), "int64", np.array([2 ** 40], "int64")),
    (np.array([-128, 127]), "int8", np.array([-128, 127], "int8")),
    (1e300, "float64", np.array(1e300)),
    (np.array([np.inf, -np.inf, np.nan]), None, np.array([np.inf, -np.inf, np.nan], "float32")),
    (3.4e38, None, np.array(3.4e38, "float32")),
    (65504.0, "float16", np.array(65504, "float16")),
    (2.9, "int32", np.array(2, "int32")),          # truncation toward zero, as numpy and TVM
    (np.array([1, 2], dtype=">i4"), "int32", np.array([1, 2], "int32")),
    (True, None, np.array(True)),
])
def test_values_that_fit_are_kept_exactly(value, dtype, expected):
    data = relay.const(value, dtype).data.numpy()
    assert data.dtype == expected.dtype
    np.testing.assert_array_equal(data, expected)


def test_python_scalar_sugar_is_checked_too():
    x = relay.var("x", shape=(2,), dtype="int32")
    with pytest.raises(RelayError, match="1099511627776"):
        x + 2 ** 40


@pytest.mark.parametrize("value", [np.array([object()]), "abc", np.array([1 + 2j]),
                                   np.array([1, 2], dtype=">i4"), [[1, 2], [3]],
                                   np.array(["2020-01-01"], dtype="datetime64[D]")])
def test_non_numeric_or_unsupported_values_raise(value):
    with pytest.raises(RelayError, match="relay.const"):
        relay.const(value)


@pytest.mark.parametrize("dtype,hint", [("complex64", "complex64"), (">f4", "byte order"),
                                        ("object", "object"), ("U3", "<U3"), ("float8", "float8")])
def test_unsupported_dtypes_are_rejected_where_they_enter(dtype, hint):
    with pytest.raises(RelayError, match=hint):
        relay.var("x", shape=(2,), dtype=dtype)
    with pytest.raises(RelayError, match=hint):
        TensorType((2,), dtype)


def test_constant_node_rejects_unsupported_arrays():
    with pytest.raises(RelayError, match="complex128"):
        Constant(np.array([1 + 2j]))
    with pytest.raises(RelayError, match="complex"):
        relay.cast(relay.var("x", shape=(2,)), "complex64")
