"""The model package the command line writes (`compile -o model.tar`) and reads (`run`, `info`).

A tar file holding metadata.json (format, version, executor, target, inputs, outputs, kernels with
their Relay ops, the memory plan as text) and the compiled model:
  graph: model.so (export_library: kernels + graph JSON + params, checksummed)
  vm:    model.so (the kernels) and model.ro (the bytecode, Executable.save)
  aot:   model.so (the compiled C program) and aot.json (its entry point and I/O layout);
         metadata.json carries model.so's SHA-256, checked before it is loaded.
`read_metadata` never loads native code (what `info` uses); `load_package` does, so only load
packages you trust. Members are read by name into a private folder: nothing else is extracted.
"""
import atexit
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import types

from ..errors import SerializationError

FORMAT = "relay_backend.package"
VERSION = 1
MEMBERS = {"graph": ("metadata.json", "model.so"), "vm": ("metadata.json", "model.so", "model.ro"),
           "aot": ("metadata.json", "model.so", "aot.json")}
MAX_METADATA_BYTES = 64 << 20


def write_package(path: str, executor: str, metadata: dict, files: dict) -> str:
    """Write the tar at `path`: metadata.json plus `files` ({member name: bytes})."""
    wanted = set(MEMBERS[executor]) - {"metadata.json"}
    if set(files) != wanted:
        raise SerializationError(f"package: the {executor} package holds {sorted(wanted)}, got {sorted(files)}")
    meta = {"format": FORMAT, "version": VERSION, "executor": executor, **metadata}
    if executor == "aot":
        meta["model_so_sha256"] = hashlib.sha256(files["model.so"]).hexdigest()
    blobs = {"metadata.json": json.dumps(meta, indent=1).encode(), **files}
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with tarfile.open(tmp, "w") as tar:
        for name in MEMBERS[executor]:
            info = tarfile.TarInfo(name)
            info.size = len(blobs[name])
            info.mode = 0o644
            tar.addfile(info, _reader(blobs[name]))
    os.replace(tmp, path)
    return path


def _reader(data: bytes):
    import io
    return io.BytesIO(data)


def _open(path: str):
    if not os.path.isfile(path):
        raise SerializationError(f"{path!r}: no such model package (write one with `relay-backend compile`)")
    try:
        return tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError, EOFError) as err:
        raise SerializationError(f"{path!r} is not a model package (a tar file): {' '.join(str(err).split())}") from None


def _member(tar, path: str, name: str, limit: int = None) -> bytes:
    try:
        info = tar.getmember(name)
    except KeyError:
        raise SerializationError(f"{path!r}: the package has no {name}") from None
    if not info.isfile():
        raise SerializationError(f"{path!r}: {name} is not a regular file")
    if limit is not None and info.size > limit:
        raise SerializationError(f"{path!r}: {name} is {info.size} bytes, more than {limit}")
    return tar.extractfile(info).read()


def read_metadata(path: str) -> dict:
    """The package's metadata.json, checked for format and version (loads no native code)."""
    with _open(path) as tar:
        raw = _member(tar, path, "metadata.json", MAX_METADATA_BYTES)
    try:
        meta = json.loads(raw.decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise SerializationError(f"{path!r}: metadata.json is not JSON ({str(err)[:120]})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise SerializationError(f"{path!r} is not a relay_backend model package (format {FORMAT!r})")
    if meta.get("version") != VERSION:
        raise SerializationError(f"{path!r}: package version {meta.get('version')!r}; this build reads {VERSION}")
    if meta.get("executor") not in MEMBERS:
        raise SerializationError(f"{path!r}: unknown executor {meta.get('executor')!r}")
    return meta


def load_package(path: str, device):
    """(metadata, module) with the compiled model loaded: a GraphModule factory, a VM
    Executable, or an AotModule-ready factory stand-in. Runs the package's native code."""
    meta = read_metadata(path)
    executor = meta["executor"]
    folder = tempfile.mkdtemp(prefix="rb_package_")
    try:
        with _open(path) as tar:
            blobs = {name: _member(tar, path, name) for name in MEMBERS[executor] if name != "metadata.json"}
        for name, data in blobs.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
        loaded = _load(executor, meta, folder, blobs, path)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    atexit.register(shutil.rmtree, folder, True)     # the loaded library's file, until exit
    return meta, loaded


def _load(executor: str, meta: dict, folder: str, blobs: dict, path: str):
    so_path = os.path.join(folder, "model.so")
    if executor == "graph":
        from ..runtime.module import load_module
        return load_module(so_path)
    if executor == "vm":
        from ..runtime.module import load_module
        from ..vm import Executable
        return Executable.load_exec(blobs["model.ro"], load_module(so_path))
    if hashlib.sha256(blobs["model.so"]).hexdigest() != meta.get("model_so_sha256"):
        raise SerializationError(f"{path!r}: model.so does not match the checksum in metadata.json")
    return _aot_factory(json.loads(blobs["aot.json"].decode()), so_path, path)


def _aot_factory(layout: dict, so_path: str, path: str):
    """What AotModule needs from a factory, rebuilt from aot.json and the loaded library."""
    from ..aot.build import AotLibrary
    keys = ("prefix", "input_names", "input_fields", "output_fields", "input_types", "output_types")
    if not isinstance(layout, dict) or any(k not in layout for k in keys):
        raise SerializationError(f"{path!r}: aot.json lacks one of {list(keys)}")
    return types.SimpleNamespace(
        lib=AotLibrary(so_path, layout["prefix"]), input_names=list(layout["input_names"]),
        input_fields=list(layout["input_fields"]), output_fields=list(layout["output_fields"]),
        input_types=[(tuple(s), d) for s, d in layout["input_types"]],
        output_types=[(tuple(s), d) for s, d in layout["output_types"]], bound_param_names=frozenset())


__all__ = ["write_package", "read_metadata", "load_package", "FORMAT", "VERSION"]
