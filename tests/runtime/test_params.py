"""Params blobs: round trips, the exact TVM byte layout (built here with struct), corrupt files."""
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay_backend import runtime
from relay_backend.errors import SerializationError
from relay_backend.runtime import load_param_dict, nd, save_param_dict

LIST_MAGIC = 0xF7E58D4F05049CB7
ARR_MAGIC = 0xDD5E40F096B4A13F

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]


def _sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def _assert_same(loaded, expected: dict):
    assert list(loaded) == list(expected)
    for name, value in expected.items():
        got = loaded[name]
        assert isinstance(got, runtime.NDArray)
        want = np.asarray(value)
        assert got.shape == want.shape and got.dtype == str(want.dtype), name
        np.testing.assert_array_equal(got.numpy(), want)  # exact: bytes are copied verbatim


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1,), (2, 3, 4)])
def test_round_trip_every_dtype(dtype, shape):
    params = {"w": _sample(dtype, shape), "nd_value": nd.array(_sample(dtype, shape, seed=1))}
    blob = save_param_dict(params)
    assert isinstance(blob, bytearray)   # as TVM returns it
    _assert_same(load_param_dict(blob), {k: np.asarray(v) for k, v in params.items()})
    assert load_param_dict(bytearray(blob)).keys() == params.keys()


def test_non_contiguous_and_scalar_inputs():
    base = np.arange(24, dtype="float32").reshape(4, 6)
    params = {"t": base.T, "s": base[:, ::2], "scalar": np.float64(2.5), "empty_rows": base[:0]}
    _assert_same(load_param_dict(save_param_dict(params)), {k: np.asarray(v) for k, v in params.items()})
    assert load_param_dict(save_param_dict({})) == {}


def _hand_blob(entries):
    """The layout from the reference, written independently of the library's writer."""
    out = struct.pack("<QQQ", LIST_MAGIC, 0, len(entries))
    for name, *_ in entries:
        out += struct.pack("<Q", len(name.encode())) + name.encode()
    out += struct.pack("<Q", len(entries))
    for _, code, bits, shape, data in entries:
        out += struct.pack("<QQ", ARR_MAGIC, 0) + struct.pack("<ii", 1, 0) + struct.pack("<i", len(shape))
        out += struct.pack("<BBH", code, bits, 1)
        out += b"".join(struct.pack("<q", s) for s in shape)
        out += struct.pack("<q", len(data)) + data
    return out


HAND = [
    ("weight", 2, 32, (2, 2), struct.pack("<4f", 1.0, -2.0, 0.5, 3.25)),
    ("idx", 0, 64, (3,), struct.pack("<3q", -1, 0, 7)),
    ("mask", 1, 1, (2,), bytes([1, 0])),  # TVM's bool: uint, 1 bit, one byte per element
    ("half", 2, 16, (), struct.pack("<e", 1.5)),
    ("bytes", 1, 8, (0, 4), b""),
]


def test_hand_built_blob_loads_and_writer_matches_it_byte_for_byte():
    blob = _hand_blob(HAND)
    expected = {
        "weight": np.array([[1.0, -2.0], [0.5, 3.25]], "float32"),
        "idx": np.array([-1, 0, 7], "int64"),
        "mask": np.array([True, False]),
        "half": np.array(1.5, "float16"),
        "bytes": np.zeros((0, 4), "uint8"),
    }
    _assert_same(load_param_dict(blob), expected)
    assert save_param_dict(expected) == blob


def test_dlpack_bool_code_is_accepted():
    blob = _hand_blob([("m", 6, 8, (3,), bytes([1, 0, 1]))])
    np.testing.assert_array_equal(load_param_dict(blob)["m"].numpy(), [True, False, True])


# --- corrupt files: (description, mutate(blob) -> bytes, message fragment, offset or None) -----

_ONE = _hand_blob([("w", 2, 32, (2,), struct.pack("<2f", 1.0, 2.0))])
# offsets inside _ONE: 24 names[0] len, 33 array count, 41 NDArray magic, 49 reserved,
# 57 device, 65 ndim, 69 dtype, 73 shape[0], 81 byte_size, 89 data, 97 end
_ARR = 41


def _put(blob, offset, fmt, *values):
    b = bytearray(blob)
    struct.pack_into("<" + fmt, b, offset, *values)
    return bytes(b)


CORRUPT = [
    ("bad list magic", lambda b: _put(b, 0, "Q", 0x1234), "bad list magic", 0),
    ("bad ndarray magic", lambda b: _put(b, _ARR, "Q", 0xDEADBEEF), "bad NDArray magic", _ARR),
    ("byte size too small", lambda b: _put(b, 81, "q", 4), "declares 4 data bytes", 81),
    ("byte size too large", lambda b: _put(b, 81, "q", 12), "needs 8", 81),
    ("unknown dtype code", lambda b: _put(b, 69, "B", 9), "unknown code 9", 69),
    ("bfloat dtype", lambda b: _put(b, 69, "BB", 4, 16), "bfloat", 69),
    ("odd bits", lambda b: _put(b, 70, "B", 24), "bits=24", 69),
    ("vector lanes", lambda b: _put(b, 71, "H", 4), "lanes=4", 69),
    ("negative ndim", lambda b: _put(b, 65, "i", -1), "invalid ndim -1", 65),
    ("huge ndim", lambda b: _put(b, 65, "i", 1000), "invalid ndim 1000", 65),
    ("negative extent", lambda b: _put(b, 73, "q", -2), "negative extent -2", 73),
    ("gpu device", lambda b: _put(b, 57, "i", 2), "device type 2", 57),
    ("count mismatch", lambda b: _put(b, 33, "Q", 2), "array count 2", 33),
    ("name too long", lambda b: _put(b, 24, "Q", 1 << 40), "name 0 claims", 24),
    ("name count huge", lambda b: _put(b, 16, "Q", 1 << 60), "name count", 16),
    ("bad utf-8 name", lambda b: _put(b, 32, "B", 0xFF), "not valid utf-8", 32),
    ("trailing garbage", lambda b: b + b"\x00junk", "5 trailing bytes", 97),
    ("truncated data", lambda b: b[:-3], "truncated", 89),
    ("empty file", lambda b: b"", "truncated: list magic", 0),
    ("foreign json", lambda b: b'{"nodes": [], "arg_nodes": []}', "bad list magic", 0),
    ("foreign zip", lambda b: b"PK\x03\x04" + bytes(60), "bad list magic", 0),
]


@pytest.mark.parametrize("case", CORRUPT, ids=[c[0] for c in CORRUPT])
def test_corrupt_blob_raises_with_field_and_offset(case):
    _, mutate, fragment, offset = case
    assert load_param_dict(_ONE)["w"].shape == (2,)  # the unmutated blob is valid
    with pytest.raises(SerializationError) as info:
        load_param_dict(mutate(_ONE))
    msg = str(info.value)
    assert fragment in msg, msg
    assert f"byte offset {offset} " in msg, msg


def test_every_truncation_raises():
    blob = _hand_blob(HAND)
    for cut in range(len(blob)):
        with pytest.raises(SerializationError, match="truncated|byte size|trailing"):
            load_param_dict(blob[:cut])


def test_duplicate_names_rejected():
    blob = _hand_blob([("a", 0, 8, (1,), b"\x01"), ("a", 0, 8, (1,), b"\x02")])
    with pytest.raises(SerializationError, match="duplicate param name 'a'"):
        load_param_dict(blob)


def test_save_rejects_bad_values():
    with pytest.raises(SerializationError, match="complex128"):
        save_param_dict({"c": np.zeros(2, "complex128")})
    with pytest.raises(SerializationError, match="param 'x' is a list"):
        save_param_dict({"x": [1, 2]})
    with pytest.raises(SerializationError, match="names must be strings"):
        save_param_dict({3: np.zeros(1)})
    with pytest.raises(SerializationError, match="expected bytes"):
        load_param_dict("not bytes")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=0, max_size=8), st.sampled_from(DTYPES),
                          st.lists(st.integers(0, 4), max_size=4), st.integers(0, 2**31)),
                max_size=5))
def test_round_trip_property(specs):
    params = {}
    for name, dtype, shape, seed in specs:
        params[name] = _sample(dtype, tuple(shape), seed)
    _assert_same(load_param_dict(save_param_dict(params)), params)


@pytest.mark.parametrize("shape", [(0, 3), (2, 0), (0,)])
def test_every_bit_flip_of_a_zero_size_tensor_loads_or_raises_serialization_error(shape):
    # a flipped high bit in the non-zero extent of (0, 3) gave (0, 2**62 + 3): byte size 0 still
    # matched, and numpy's reshape raised ValueError ("array is too big")
    blob = save_param_dict({"empty": np.zeros(shape, "float32")})
    for bit in range(len(blob) * 8):
        mutated = bytearray(blob)
        mutated[bit // 8] ^= 1 << (bit % 8)
        try:
            loaded = load_param_dict(bytes(mutated))
        except SerializationError:
            continue
        for value in loaded.values():          # what loads is a real, consistent array
            assert value.numpy().size == 0 and value.numpy().nbytes == 0


def test_zero_size_shape_numpy_cannot_build_names_the_param_and_offset():
    blob = bytearray(save_param_dict({"empty": np.zeros((0, 3), "float32")}))
    shape_at = blob.find(struct.pack("<qq", 0, 3))
    struct.pack_into("<q", blob, shape_at + 8, 3 | (1 << 62))
    with pytest.raises(SerializationError, match=rf"param 'empty'.*cannot be represented.* at byte "
                                                 rf"offset {shape_at}"):
        load_param_dict(bytes(blob))


@pytest.mark.parametrize("value", [None, 7, 1.5, [1, 2], {"a": 1}, np.zeros(3), "blob"])
def test_load_with_a_wrong_type_names_the_type(value):
    with pytest.raises(SerializationError, match=rf"expected bytes, got {type(value).__name__}"):
        load_param_dict(value)


def test_load_accepts_bytearray_and_memoryview():
    blob = save_param_dict({"w": np.arange(3, dtype="int32")})
    for view in (bytearray(blob), memoryview(blob)):
        np.testing.assert_array_equal(load_param_dict(view)["w"].numpy(), [0, 1, 2])
