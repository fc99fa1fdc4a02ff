"""Params blobs: `save_param_dict` / `load_param_dict` in TVM's byte layout (no pickle).

A blob is what `relay.build(...).get_params()` is saved as and what `GraphModule.load_params`
reads, so a file written by TVM loads here and vice versa. Layout (little-endian, dmlc stream):

    u64 0xF7E58D4F05049CB7          list magic
    u64 0                           reserved
    u64 n, n x (u64 len, utf-8)     names
    u64 n                           array count (must equal the name count)
    n x NDArray:
        u64 0xDD5E40F096B4A13F      NDArray magic
        u64 0                       reserved
        i32 device_type (1 = CPU), i32 device_id
        i32 ndim
        u8 code, u8 bits, u16 lanes dtype (code 0 int, 1 uint, 2 float; bool = uint 1-bit)
        i64 shape[ndim]
        i64 byte_size               = prod(shape) * ceil(bits * lanes / 8)
        raw little-endian bytes

Loading checks every field and raises SerializationError naming the field and its byte offset;
it never executes anything from the file.
"""
import struct

import numpy as np

from ..errors import AllocationError, SerializationError
from . import ndarray as _nd
from .limits import check_tensor_size
from .ndarray import NDArray
from .registry import register_func

LIST_MAGIC = 0xF7E58D4F05049CB7
NDARRAY_MAGIC = 0xDD5E40F096B4A13F
DEVICE_CPU = 1

_CODE_INT, _CODE_UINT, _CODE_FLOAT = 0, 1, 2
_CODE_DLPACK_BOOL = 6  # DLPack >= 0.8 spells bool as its own code (8 bits); accepted on load
_CODE_NAMES = {_CODE_INT: "int", _CODE_UINT: "uint", _CODE_FLOAT: "float", 4: "bfloat",
               5: "complex", _CODE_DLPACK_BOOL: "bool"}

# numpy dtype name -> (code, bits); bool is TVM's DataType::Bool() = uint, 1 bit, 1 byte/element
_DTYPE_TO_DL = {
    "bool": (_CODE_UINT, 1),
    "int8": (_CODE_INT, 8), "int16": (_CODE_INT, 16), "int32": (_CODE_INT, 32), "int64": (_CODE_INT, 64),
    "uint8": (_CODE_UINT, 8), "uint16": (_CODE_UINT, 16), "uint32": (_CODE_UINT, 32),
    "uint64": (_CODE_UINT, 64),
    "float16": (_CODE_FLOAT, 16), "float32": (_CODE_FLOAT, 32), "float64": (_CODE_FLOAT, 64),
}
_DL_TO_DTYPE = {v: k for k, v in _DTYPE_TO_DL.items()}
_DL_TO_DTYPE[(_CODE_DLPACK_BOOL, 8)] = "bool"

_MAX_NDIM = 64  # far above any real tensor; a larger value means the file is not a params blob


# ---------------------------------------------------------------------------------------------
# saving


def _as_host_array(name, value) -> np.ndarray:
    """The C-contiguous numpy view of a param value (numpy array, numpy scalar or NDArray)."""
    if isinstance(value, NDArray):
        arr = value.view_numpy()
    elif isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
    else:
        raise SerializationError(
            f"save_param_dict: param {name!r} is a {type(value).__name__}; expected a numpy array "
            f"or an NDArray (wrap it with relay_backend.nd.array(...))")
    dtype = _nd.dtype_name(arr.dtype)
    if dtype not in _DTYPE_TO_DL:
        raise SerializationError(
            f"save_param_dict: param {name!r} has dtype {dtype}, which the params format cannot "
            f"store; supported: {', '.join(_DTYPE_TO_DL)} (cast it first)")
    return arr if arr.flags.c_contiguous else arr.copy(order="C")  # keeps 0-d arrays 0-d


def _pack_str(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def _pack_array(arr: np.ndarray) -> bytes:
    code, bits = _DTYPE_TO_DL[_nd.dtype_name(arr.dtype)]
    data = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes(order="C")
    head = struct.pack("<QQiii", NDARRAY_MAGIC, 0, DEVICE_CPU, 0, arr.ndim)
    head += struct.pack("<BBH", code, bits, 1)
    head += struct.pack(f"<{arr.ndim}q", *arr.shape)
    head += struct.pack("<q", len(data))
    return head + data


def save_param_dict(params) -> bytearray:
    """Serialize named arrays to TVM's params byte layout (tvm.runtime.save_param_dict).

    Parameters
    ----------
    params : dict of str to numpy.ndarray or NDArray
        The arrays by name, written in the dict's iteration order.

    Returns
    -------
    blob : bytearray
        The bytes, as TVM returns them (it compares equal to the same bytes); load_param_dict
        and GraphModule.load_params read them back.
    """
    if not hasattr(params, "items"):
        raise SerializationError(
            f"save_param_dict: expected a dict of name -> array, got {type(params).__name__}")
    names, arrays = [], []
    for name, value in params.items():
        if not isinstance(name, str):
            raise SerializationError(
                f"save_param_dict: param names must be strings, got {name!r} ({type(name).__name__})")
        names.append(name)
        arrays.append(_as_host_array(name, value))
    out = [struct.pack("<QQQ", LIST_MAGIC, 0, len(names))]
    out.extend(_pack_str(n) for n in names)
    out.append(struct.pack("<Q", len(arrays)))
    out.extend(_pack_array(a) for a in arrays)
    return bytearray(b"".join(out))


# ---------------------------------------------------------------------------------------------
# loading


class _Reader:
    """A bounds-checked little-endian cursor; every failure names the field and byte offset."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def fail(self, what: str, offset: int = None):
        at = self.pos if offset is None else offset
        raise SerializationError(f"load_param_dict: {what} at byte offset {at} "
                                 f"(blob is {len(self.data)} bytes); not a valid params blob "
                                 f"(expected the output of save_param_dict)")

    def take(self, n: int, field: str) -> bytes:
        if n > len(self.data) - self.pos:
            self.fail(f"truncated: {field} needs {n} bytes but only "
                      f"{len(self.data) - self.pos} remain")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt: str, field: str):
        values = struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), field))
        return values if len(values) > 1 else values[0]


def _read_names(r: _Reader) -> list:
    count_at = r.pos
    count = r.unpack("Q", "name count")
    if count > len(r.data):  # each name takes at least 8 bytes; this bounds the loop
        r.fail(f"name count {count} is larger than the blob", count_at)
    names = []
    for i in range(count):
        len_at = r.pos
        length = r.unpack("Q", f"length of name {i}")
        if length > len(r.data) - r.pos:
            r.fail(f"truncated: name {i} claims {length} bytes but only "
                   f"{len(r.data) - r.pos} remain", len_at)
        raw = r.take(length, f"name {i}")
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            r.fail(f"name {i} is not valid utf-8 ({raw[:32]!r})", len_at + 8)
    return names


def _read_array(r: _Reader, name: str) -> NDArray:
    start = r.pos
    magic = r.unpack("Q", f"NDArray magic of {name!r}")
    if magic != NDARRAY_MAGIC:
        r.fail(f"bad NDArray magic 0x{magic:016X} for param {name!r} "
               f"(expected 0x{NDARRAY_MAGIC:016X})", start)
    r.unpack("Q", f"reserved word of {name!r}")
    dev_at = r.pos
    dev_type, _dev_id = r.unpack("ii", f"device of {name!r}")
    if dev_type != DEVICE_CPU:
        r.fail(f"param {name!r} was saved from device type {dev_type}; only CPU (1) tensors "
               f"can be stored", dev_at)
    ndim_at = r.pos
    ndim = r.unpack("i", f"ndim of {name!r}")
    if ndim < 0 or ndim > _MAX_NDIM:
        r.fail(f"param {name!r} has invalid ndim {ndim} (expected 0..{_MAX_NDIM})", ndim_at)
    dt_at = r.pos
    code, bits, lanes = r.unpack("BBH", f"dtype of {name!r}")
    dtype = _DL_TO_DTYPE.get((code, bits))
    if dtype is None or lanes != 1:
        kind = _CODE_NAMES.get(code, f"unknown code {code}")
        r.fail(f"param {name!r} has unsupported dtype (code={code} [{kind}], bits={bits}, "
               f"lanes={lanes}); supported: {', '.join(_DTYPE_TO_DL)} with lanes=1", dt_at)
    shape_at = r.pos
    shape = r.unpack(f"{ndim}q", f"shape of {name!r}") if ndim else ()
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    for axis, extent in enumerate(shape):
        if extent < 0:
            r.fail(f"param {name!r} has negative extent {extent} on axis {axis} "
                   f"(shape {shape})", shape_at + 8 * axis)
    size_at = r.pos
    byte_size = r.unpack("q", f"byte size of {name!r}")
    itemsize = (bits * lanes + 7) // 8
    expected = int(np.prod(shape, dtype=object)) * itemsize  # prod(()) == 1 for 0-d
    if byte_size != expected:
        r.fail(f"param {name!r} declares {byte_size} data bytes but shape {shape} of {dtype} "
               f"needs {expected}", size_at)
    raw = r.take(byte_size, f"data of {name!r} ({byte_size} bytes)")
    try:
        check_tensor_size(shape, dtype, f"param {name!r}")
    except AllocationError as err:
        if byte_size:                # the blob really holds that much data: a size limit, not corruption
            raise
        r.fail(f"{err} (a corrupt extent of a zero-size tensor)", shape_at)
    if dtype == "bool":
        host = np.frombuffer(raw, dtype=np.uint8).reshape(shape) != 0
    else:
        host = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)
    return _nd.array(host.astype(dtype, copy=False))


def save_ndarray(value) -> bytes:
    """One array in TVM's NDArray byte layout (the blocks of a params blob; what TVM's JSON
    keeps base64-encoded in "b64ndarrays")."""
    return _pack_array(_as_host_array("array", value))


def load_ndarray(data: bytes, what: str = "array") -> NDArray:
    """The NDArray of one block written by save_ndarray; SerializationError if it is malformed."""
    r = _Reader(bytes(data))
    arr = _read_array(r, what)
    if r.pos != len(r.data):
        r.fail(f"{len(r.data) - r.pos} trailing bytes after {what}")
    return arr


def load_param_dict(param_bytes) -> dict:
    """Read a params blob back into named arrays (tvm.runtime.load_param_dict), in file order.

    A truncated, corrupt or foreign blob raises SerializationError naming the bad field and
    its byte offset.

    Parameters
    ----------
    param_bytes : bytes or bytearray or memoryview
        The contents of the blob (read a file with open(path, "rb").read()).

    Returns
    -------
    params : dict of str to NDArray
        The arrays by name.
    """
    if isinstance(param_bytes, (bytearray, memoryview)):
        param_bytes = bytes(param_bytes)
    if not isinstance(param_bytes, bytes):
        raise SerializationError(
            f"load_param_dict: expected bytes, got {type(param_bytes).__name__} "
            f"(read the file with open(path, 'rb').read())")
    r = _Reader(param_bytes)
    magic = r.unpack("Q", "list magic")
    if magic != LIST_MAGIC:
        r.fail(f"bad list magic 0x{magic:016X} (expected 0x{LIST_MAGIC:016X})", 0)
    r.unpack("Q", "reserved word")
    names = _read_names(r)
    count_at = r.pos
    count = r.unpack("Q", "array count")
    if count != len(names):
        r.fail(f"array count {count} does not match the {len(names)} names", count_at)
    result = {}
    for name in names:
        if name in result:
            r.fail(f"duplicate param name {name!r}")
        result[name] = _read_array(r, name)
    if r.pos != len(param_bytes):
        r.fail(f"{len(param_bytes) - r.pos} trailing bytes after the last array")
    return result


# TVM's runtime reaches these through the global registry under these names
register_func("runtime.SaveParams", save_param_dict)
register_func("runtime.LoadParams", load_param_dict)
