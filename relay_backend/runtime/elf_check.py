"""Bounds of an ELF shared object, checked before dlopen.

An exported library's trailer says where the shared object ends and its byte sections begin;
an edited section table (checksum recomputed) moves that split into the object, and dlopen of a
truncated object maps segments past the end of the file and dies with SIGBUS. `check_elf_bounds`
reads the ELF header and rejects an object whose program headers, loadable segments or section
header table do not fit in its bytes. It proves the file is whole, not that its code is benign:
loading a shared library means trusting it.
"""
import platform
import struct

from ..errors import SerializationError

# ELF e_machine -> instruction set (the ones LLVM commonly targets)
ELF_MACHINES = {3: "x86", 62: "x86_64", 40: "arm", 183: "aarch64", 243: "riscv", 21: "ppc64",
                8: "mips", 22: "s390x"}
_HOST_ISA = {"x86_64": "x86_64", "amd64": "x86_64", "i386": "x86", "i686": "x86",
             "aarch64": "aarch64", "arm64": "aarch64", "riscv64": "riscv", "ppc64le": "ppc64",
             "s390x": "s390x"}


def elf_machine(body: bytes) -> int:
    """The e_machine field of a little-endian ELF header (0 when too short)."""
    return struct.unpack_from("<H", body, 18)[0] if len(body) >= 20 else 0


def check_elf_machine(body: bytes, path: str) -> None:
    """SerializationError unless the ELF object in `body` is code for this machine's instruction
    set: a library cross-compiled for another machine (e.g. -mtriple=aarch64-linux-gnu) is
    refused before dlopen, with what it is for and what this host is."""
    machine = elf_machine(body)
    want = ELF_MACHINES.get(machine, f"ELF machine {machine}")
    host = _HOST_ISA.get(platform.machine().lower(), platform.machine())
    if want != host:
        raise SerializationError(f"load_module: {path!r} holds {want} code (cross-compiled for "
                                 f"another machine); this host is {host}: load it on a {want} "
                                 f"machine")

# ELF class -> (header: phoff, shoff, phentsize, phnum, shentsize, shnum),
#              (program header: p_offset, p_filesz), minimum header size
_LAYOUT = {
    1: (struct.Struct("<28xII6xHHHH"), struct.Struct("<4xI8xI"), 52),     # ELF32
    2: (struct.Struct("<32xQQ6xHHHH"), struct.Struct("<8xQ16xQ"), 64),    # ELF64
}


def check_elf_bounds(body: bytes, path: str) -> None:
    """SerializationError naming `path` unless every header and loadable segment of the
    little-endian ELF object in `body` lies inside it."""
    def fail(what):
        raise SerializationError(f"load_module: {path!r}: the shared object is truncated or corrupt "
                                 f"({what}; it has {len(body)} bytes)")
    if len(body) < 16 or body[5] != 1 or body[4] not in _LAYOUT:
        fail("not a little-endian 32- or 64-bit ELF object")
    header, program, header_size = _LAYOUT[body[4]]
    if len(body) < header_size:
        fail("the ELF header is cut off")
    phoff, shoff, phentsize, phnum, shentsize, shnum = header.unpack_from(body)
    if phnum and (phentsize < program.size or phoff + phnum * phentsize > len(body)):
        fail(f"{phnum} program headers at offset {phoff} do not fit")
    if shnum and shoff + shnum * shentsize > len(body):
        fail(f"{shnum} section headers at offset {shoff} do not fit")
    for i in range(phnum):
        offset, filesz = program.unpack_from(body, phoff + i * phentsize)
        if offset + filesz > len(body):
            fail(f"segment {i} spans bytes {offset}..{offset + filesz}")


__all__ = ["check_elf_bounds", "check_elf_machine", "elf_machine", "ELF_MACHINES"]
