"""Hand-edit saved artifacts the way an attacker or a careless script would: change the JSON
metadata of a VM executable or of an exported library and recompute the checksum, so the edit
reaches the loader's validation instead of being stopped by the checksum."""
import hashlib
import json
import struct

_VM_HEADER = 12                # magic (8) + format version (4)
_LIB_TAIL = 8 + 32 + 8         # u64 metadata length, sha256, magic


def vm_metadata(code: bytes) -> dict:
    """The metadata JSON of a VM executable's bytes (Executable.save()[0])."""
    (n,) = struct.unpack_from("<Q", code, _VM_HEADER)
    return json.loads(code[_VM_HEADER + 8:_VM_HEADER + 8 + n])


def edit_vm(code: bytes, edit) -> bytes:
    """`code` with its metadata changed by `edit(meta)` (in place) and the checksum recomputed."""
    body = code[:-32]
    (n,) = struct.unpack_from("<Q", body, _VM_HEADER)
    start = _VM_HEADER + 8
    meta = json.loads(body[start:start + n])
    edit(meta)
    return replace_vm_metadata(code, json.dumps(meta, separators=(",", ":")).encode())


def replace_vm_metadata(code: bytes, meta_bytes: bytes) -> bytes:
    """`code` with its metadata bytes replaced verbatim (any bytes) and the checksum recomputed."""
    body = code[:-32]
    (n,) = struct.unpack_from("<Q", body, _VM_HEADER)
    start = _VM_HEADER + 8
    body = body[:_VM_HEADER] + struct.pack("<Q", len(meta_bytes)) + meta_bytes + body[start + n:]
    return body + hashlib.sha256(body).digest()


def library_metadata(data: bytes) -> dict:
    """The trailer JSON of an exported library's bytes (Module.export_library)."""
    payload = data[:-40]
    (n,) = struct.unpack("<Q", payload[-8:])
    return json.loads(payload[-8 - n:-8])


def edit_library(data: bytes, edit) -> bytes:
    """Library bytes with the trailer JSON changed by `edit(meta)` and the checksum recomputed."""
    meta = library_metadata(data)
    edit(meta)
    return replace_library_metadata(data, json.dumps(meta).encode())


def replace_library_metadata(data: bytes, meta_bytes: bytes) -> bytes:
    """Library bytes with the trailer JSON replaced verbatim and the checksum recomputed."""
    payload, magic = data[:-40], data[-8:]
    (n,) = struct.unpack("<Q", payload[-8:])
    payload = payload[:-8 - n] + meta_bytes + struct.pack("<Q", len(meta_bytes))
    return payload + hashlib.sha256(payload).digest() + magic


def edit_library_section(data: bytes, name: str, edit) -> bytes:
    """Library bytes with section `name` replaced by `edit(old bytes)`, its size in the trailer's
    section table updated and the checksum recomputed."""
    payload, magic = data[:-40], data[-8:]
    (n,) = struct.unpack("<Q", payload[-8:])
    meta = json.loads(payload[-8 - n:-8])
    contents = payload[:-8 - n]
    base = len(contents) - sum(size for _, size in meta["sections"])
    body, offset, blobs = contents[:base], base, []
    for row in meta["sections"]:
        blob = contents[offset:offset + row[1]]
        offset += row[1]
        if row[0] == name:
            blob = edit(blob)
            row[1] = len(blob)
        blobs.append(blob)
    meta_bytes = json.dumps(meta).encode()
    payload = body + b"".join(blobs) + meta_bytes + struct.pack("<Q", len(meta_bytes))
    return payload + hashlib.sha256(payload).digest() + magic


def edit_library_object(data: bytes, edit) -> bytes:
    """Library bytes with the shared object itself replaced by `edit(old bytes)` (same length:
    the section table keeps its sizes) and the checksum recomputed."""
    payload, magic = data[:-40], data[-8:]
    (n,) = struct.unpack("<Q", payload[-8:])
    meta = json.loads(payload[-8 - n:-8])
    contents = payload[:-8 - n]
    base = len(contents) - sum(size for _, size in meta["sections"])
    body = edit(contents[:base])
    assert len(body) == base, "edit_library_object keeps the object's length"
    payload = body + payload[base:]
    return payload + hashlib.sha256(payload).digest() + magic
