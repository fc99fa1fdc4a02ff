"""model_params.bin: every constant of an AOT model as one binary blob, outside the C text.

Writing weights as C literals made model.c scale with the model (DenseNet-121: 190 MB of
text, more than cc's memory) and its compile time with it (ResNet-50: minutes). Instead the
constants are raw bytes in one file that model.c pulls in at compile time with the
assembler's `.incbin` (see codegen.py), so cc never parses them:

    offset 0   magic b"RBAOTPRM", u32 version, u32 number of constants,
               u64 file size, u64 digest (blake2b-64 of the bytes after the header),
               zeros up to 64 bytes                                 (little-endian)
    offset 64  constant 0 (C-order bytes of its storage type), zero padding to 64 bytes
    ...        constant k at `offsets[k]`, a multiple of 64

model.c holds the header's first 32 bytes and the file's size and checks them on every run
(a foreign, stale or truncated file gives TVMGEN_..._ERR_PARAMS, never silent garbage).
"""
import hashlib
import struct
from dataclasses import dataclass

import numpy as np

from ..errors import SerializationError

MAGIC = b"RBAOTPRM"
VERSION = 1
HEADER_BYTES = 64
CHECKED_BYTES = 32          # magic, version, count, size, digest: what model.c compares
ALIGN = 64
_HEAD = struct.Struct("<8sIIQQ")
FILE_NAME = "model_params.bin"


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass(frozen=True)
class ParamsBlob:
    """The bytes of model_params.bin and, per constant, its byte offset and size."""

    data: bytes
    offsets: tuple
    sizes: tuple

    @property
    def header(self) -> bytes:
        """The bytes model.c expects at the start of the file."""
        return self.data[:CHECKED_BYTES]

    def __len__(self) -> int:
        return len(self.data)


def _raw(arr: np.ndarray) -> memoryview:
    """C-order bytes of `arr` as its C storage type holds them (the host's byte order)."""
    flat = np.ascontiguousarray(arr)
    if not flat.dtype.isnative:
        flat = flat.astype(flat.dtype.newbyteorder("="))
    return memoryview(flat.reshape(-1).view(np.uint8))


def pack_params(arrays) -> ParamsBlob:
    """Pack numpy `arrays` (in constant order) into one blob, each at a 64-byte aligned offset."""
    offsets, sizes, pos = [], [], HEADER_BYTES
    for arr in arrays:
        offsets.append(pos)
        sizes.append(int(arr.nbytes))
        pos = _align(pos + int(arr.nbytes))
    buf = bytearray(pos)
    for arr, off, size in zip(arrays, offsets, sizes):
        if size:
            buf[off:off + size] = _raw(arr)
    digest = hashlib.blake2b(memoryview(buf)[HEADER_BYTES:], digest_size=8).digest()
    buf[:_HEAD.size] = _HEAD.pack(MAGIC, VERSION, len(offsets), pos, int.from_bytes(digest, "little"))
    return ParamsBlob(bytes(buf), tuple(offsets), tuple(sizes))


def check_params(data: bytes, where: str = FILE_NAME) -> int:
    """Validate a model_params.bin (magic, version, size, digest); returns its constant count."""
    if len(data) < HEADER_BYTES:
        raise SerializationError(f"{where}: {len(data)} bytes is too short for an AOT params file "
                                 f"(header alone is {HEADER_BYTES})")
    magic, version, count, size, digest = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise SerializationError(f"{where}: not an AOT params file (magic {magic!r}, expected {MAGIC!r})")
    if version != VERSION:
        raise SerializationError(f"{where}: params format version {version}; this relay_backend "
                                 f"reads version {VERSION}")
    if size != len(data):
        raise SerializationError(f"{where}: header says {size} bytes, the file has {len(data)} "
                                 f"(truncated or padded)")
    got = int.from_bytes(hashlib.blake2b(memoryview(data)[HEADER_BYTES:], digest_size=8).digest(), "little")
    if got != digest:
        raise SerializationError(f"{where}: contents do not match the header's digest (corrupt file)")
    return count
