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

model.c holds the header's first 32 bytes and the file's size, and before the first run uses
a constant it checks them and recomputes the digest over the constants (`c_check_params`, a
C99 BLAKE2b that matches hashlib's): a foreign, stale or truncated file gives
TVMGEN_..._ERR_PARAMS, a corrupted one TVMGEN_..._ERR_PARAMS_CORRUPT, never silent garbage.
The digest catches accidental corruption (a flipped bit, a bad copy), not a crafted file.
"""
import functools
import hashlib
import struct
from dataclasses import dataclass

import numpy as np

from ..errors import SerializationError
from ..runtime.ndarray import aligned_empty

MAGIC = b"RBAOTPRM"
VERSION = 1
HEADER_BYTES = 64
CHECKED_BYTES = 32          # magic, version, count, size, digest: what model.c compares
DIGEST_AT = 24              # byte offset of the u64 digest in the header
ALIGN = 64                  # of each constant in the file; runtime.aligned_empty (ALIGNMENT) gives it
_HEAD = struct.Struct("<8sIIQQ")
FILE_NAME = "model_params.bin"


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass(frozen=True, eq=False)
class ParamsBlob:
    """model_params.bin in memory, 64-byte aligned, and where each constant lies in it.

    Parameters
    ----------
    buffer : numpy.ndarray
        The whole file as uint8 at a 64-byte aligned address: a checked header, then the
        constants. An in-process library reads its constants straight from it (build.py).
    offsets : tuple of int
        The byte offset of each constant (64-byte aligned).
    sizes : tuple of int
        The byte size of each constant.
    """

    buffer: np.ndarray
    offsets: tuple
    sizes: tuple

    @functools.cached_property
    def data(self) -> bytes:
        """The file's bytes (made on first use: writing the file, exporting)."""
        return self.buffer.tobytes()

    @property
    def header(self) -> bytes:
        """The bytes model.c expects at the start of the file."""
        return self.buffer[:CHECKED_BYTES].tobytes()

    def __len__(self) -> int:
        return int(self.buffer.size)


def _raw(arr: np.ndarray) -> np.ndarray:
    """C-order bytes of `arr` as its C storage type holds them (the host's byte order)."""
    flat = np.ascontiguousarray(arr)
    if not flat.dtype.isnative:
        flat = flat.astype(flat.dtype.newbyteorder("="))
    return flat.reshape(-1).view(np.uint8)


def pack_params(arrays) -> ParamsBlob:
    """Pack arrays into one params blob, each at a 64-byte aligned offset, behind a header
    holding a magic, a version, the size and a digest of the contents.

    Parameters
    ----------
    arrays : list of numpy.ndarray
        The constants, in constant order.

    Returns
    -------
    blob : ParamsBlob
        The packed bytes (one aligned buffer, one copy of each constant) with each constant's
        offset and size.
    """
    offsets, sizes, pos = [], [], HEADER_BYTES
    for arr in arrays:
        offsets.append(pos)
        sizes.append(int(arr.nbytes))
        pos = _align(pos + int(arr.nbytes))
    buf = aligned_empty((pos,), np.uint8)
    buf[:] = 0
    for arr, off, size in zip(arrays, offsets, sizes):
        if size:
            buf[off:off + size] = _raw(arr)
    digest = hashlib.blake2b(memoryview(buf[HEADER_BYTES:]), digest_size=8).digest()
    buf[:_HEAD.size] = np.frombuffer(_HEAD.pack(MAGIC, VERSION, len(offsets), pos,
                                                int.from_bytes(digest, "little")), np.uint8)
    buf.flags.writeable = False
    return ParamsBlob(buf, tuple(offsets), tuple(sizes))


def check_params(data: bytes, where: str = FILE_NAME) -> int:
    """Validate a model_params.bin (magic, version, size, digest); SerializationError naming the
    problem otherwise.

    Parameters
    ----------
    data : bytes
        The file's contents.
    where : str, optional
        The name of the file in error messages. Defaults to "model_params.bin".

    Returns
    -------
    count : int
        The number of constants it holds.
    """
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


# BLAKE2b (RFC 7693) with an 8-byte digest and no key, as hashlib.blake2b(digest_size=8) computes
# it; the 64-bit result is the first state word h[0], which is the little-endian digest.
_BLAKE2B_C = r"""
static const uint64_t rb_blake2b_iv[8] = {
  UINT64_C(0x6a09e667f3bcc908), UINT64_C(0xbb67ae8584caa73b), UINT64_C(0x3c6ef372fe94f82b),
  UINT64_C(0xa54ff53a5f1d36f1), UINT64_C(0x510e527fade682d1), UINT64_C(0x9b05688c2b3e6c1f),
  UINT64_C(0x1f83d9abfb41bd6b), UINT64_C(0x5be0cd19137e2179)};
static const uint8_t rb_blake2b_sigma[10][16] = {
  {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
  {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
  {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
  {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
  {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
  {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
  {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
  {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
  {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
  {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0}};
#define RB_ROTR64(x, n) (((x) >> (n)) | ((x) << (64 - (n))))
#define RB_B2B_G(a, b, c, d, x, y) do { \
    v[a] += v[b] + (x); v[d] = RB_ROTR64(v[d] ^ v[a], 32); \
    v[c] += v[d]; v[b] = RB_ROTR64(v[b] ^ v[c], 24); \
    v[a] += v[b] + (y); v[d] = RB_ROTR64(v[d] ^ v[a], 16); \
    v[c] += v[d]; v[b] = RB_ROTR64(v[b] ^ v[c], 63); } while (0)

static void rb_blake2b_compress(uint64_t h[8], const uint8_t* block, uint64_t counter, int last) {
  uint64_t v[16], m[16];
  int i, r;
  for (i = 0; i < 16; ++i) {           /* little-endian words, whatever the host order */
    const uint8_t* p = block + 8 * i;
    m[i] = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
  }
  for (i = 0; i < 8; ++i) { v[i] = h[i]; v[i + 8] = rb_blake2b_iv[i]; }
  v[12] ^= counter;                    /* bytes so far; the high word stays 0 below 2^64 bytes */
  if (last) v[14] = ~v[14];
  for (r = 0; r < 12; ++r) {
    const uint8_t* s = rb_blake2b_sigma[r % 10];
    RB_B2B_G(0, 4, 8, 12, m[s[0]], m[s[1]]);
    RB_B2B_G(1, 5, 9, 13, m[s[2]], m[s[3]]);
    RB_B2B_G(2, 6, 10, 14, m[s[4]], m[s[5]]);
    RB_B2B_G(3, 7, 11, 15, m[s[6]], m[s[7]]);
    RB_B2B_G(0, 5, 10, 15, m[s[8]], m[s[9]]);
    RB_B2B_G(1, 6, 11, 12, m[s[10]], m[s[11]]);
    RB_B2B_G(2, 7, 8, 13, m[s[12]], m[s[13]]);
    RB_B2B_G(3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (i = 0; i < 8; ++i) h[i] ^= v[i] ^ v[i + 8];
}

/* BLAKE2b-64 of data[0:n]: hashlib.blake2b(data, digest_size=8), read as a little-endian u64. */
static uint64_t rb_blake2b_64(const uint8_t* data, uint64_t n) {
  uint64_t h[8], done = 0;
  uint8_t last[128];
  int i;
  for (i = 0; i < 8; ++i) h[i] = rb_blake2b_iv[i];
  h[0] ^= UINT64_C(0x01010008);        /* depth 1, fanout 1, no key, 8-byte digest */
  for (; n - done > 128; done += 128) rb_blake2b_compress(h, data + done, done + 128, 0);
  memset(last, 0, sizeof(last));
  if (n > done) memcpy(last, data + done, (size_t)(n - done));
  rb_blake2b_compress(h, last, n, 1);
  return h[0];
}
"""


EXTERNAL_MACRO = "RB_PARAMS_EXTERNAL"


def c_check_params(prefix: str, blob: ParamsBlob, data_sym: str, size_sym: str) -> str:
    """C that defines `<prefix>_check_params()`: on the first call it compares the header and
    size of the compiled-in model_params.bin (`data_sym`, `size_sym` bytes) with the ones the
    sources were generated with, then recomputes the digest of the constants; the verdict is
    kept, so later calls cost one load. Returns RB_OK, <PREFIX>_ERR_PARAMS (foreign, stale or
    truncated file) or <PREFIX>_ERR_PARAMS_CORRUPT (digest mismatch). Needs GNU C atomics (the
    .incbin that embeds the file needs gcc or clang anyway). Built with -DRB_PARAMS_EXTERNAL
    (in-process libraries, build.py) the constants are the caller's buffer instead, which
    `<prefix>_set_params(data, size, digest_checked)` installs; it is checked the same way,
    except that the digest is not recomputed when the caller says it just computed it over
    that very buffer (digest_checked != 0: pack_params' read-only buffer)."""
    upper = prefix.upper()
    header = ", ".join(f"0x{b:02x}" for b in blob.header)
    digest = int.from_bytes(blob.buffer[DIGEST_AT:DIGEST_AT + 8].tobytes(), "little")
    verdict = f"{prefix}_params_verdict"
    return _BLAKE2B_C + "\n".join([
        "",
        f"static int32_t {verdict} = 0;   /* 0: not checked yet, 1: intact, <0: the error */",
        f"static int32_t {verdict}_digest_known = 0;",
        "",
        f"#ifdef {EXTERNAL_MACRO}",
        f"int32_t {prefix}_set_params(const void* data, uint64_t size, int32_t digest_checked) {{",
        f"  if (((uintptr_t)data & 63u) != 0) return {upper}_ERR_ALIGN;",
        f"  {data_sym} = (const uint8_t*)data;",
        f"  {size_sym} = data != NULL ? size : 0;",
        f"  {verdict}_digest_known = digest_checked;",
        f"  __atomic_store_n(&{verdict}, 0, __ATOMIC_RELEASE);   /* check the new buffer */",
        "  return RB_OK;",
        "}",
        "#endif",
        "",
        f"static int32_t {prefix}_check_params(void) {{",
        f"  static const uint8_t expected[{len(blob.header)}] = {{{header}}};",
        f"  int32_t state = __atomic_load_n(&{verdict}, __ATOMIC_ACQUIRE);",
        "  if (state == 0) {",
        f"    if ({size_sym} != UINT64_C({len(blob)}) || memcmp({data_sym}, expected, sizeof(expected)) != 0)",
        f"      state = {upper}_ERR_PARAMS;",
        f"    else if (!{verdict}_digest_known && rb_blake2b_64({data_sym} + {HEADER_BYTES}, {size_sym} - {HEADER_BYTES}) != "
        f"UINT64_C(0x{digest:016x}))",
        f"      state = {upper}_ERR_PARAMS_CORRUPT;",
        "    else",
        "      state = 1;",
        f"    __atomic_store_n(&{verdict}, state, __ATOMIC_RELEASE);",
        "  }",
        "  return state == 1 ? RB_OK : state;",
        "}", ""])
