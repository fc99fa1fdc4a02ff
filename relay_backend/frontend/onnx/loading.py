"""Where an ONNX model comes from: a ModelProto, its serialized bytes, or a path (str or PathLike).

`load_model` turns each into a ModelProto or raises a RelayError saying what was wrong with the
source: a path that does not exist or is a directory (InputError), bytes that are not a protobuf
ModelProto (SerializationError, not protobuf's DecodeError), or a model whose names hold bytes
that are not UTF-8 text (protobuf parses those and hands them out as bytes instead of str).

A model read from a path may keep large tensors in external files next to it. Those are read here,
and only from inside the model's directory: an absolute location, one that climbs out with `..`,
or a symlink that points outside is refused (onnx.load itself follows such symlinks), and so is a
file whose size does not match the tensor's dims (before anything is read).
"""
import os

from ...errors import InputError, SerializationError
from .common import InvalidModelError, iter_graphs
from .tensors import tensor_layout


def load_model(source, caller: str = "from_onnx"):
    """The onnx.ModelProto that `source` (a ModelProto, bytes, or a path) holds."""
    import onnx
    if isinstance(source, onnx.ModelProto):
        _check_text(source, f"{caller}: the model")
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        model = _parse(bytes(source), f"{caller}: the given bytes are")
        _check_text(model, f"{caller}: the given bytes")
        return model
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        model = _parse(_read_file(path, caller), f"{caller}: the file {path!r} is")
        _check_text(model, f"{caller}: the file {path!r}")
        _read_external_data(model, os.path.dirname(os.path.abspath(path)))
        return model
    raise InputError(f"{caller}: expected an onnx.ModelProto, its serialized bytes or a path, "
                     f"got {type(source).__name__}")


def _read_file(path: str, caller: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError as err:
        raise InputError(f"{caller}: the model file {path!r} does not exist") from err
    except IsADirectoryError as err:
        raise InputError(f"{caller}: {path!r} is a directory, not an ONNX model file") from err
    except OSError as err:
        raise InputError(f"{caller}: cannot read the model file {path!r}: {err.strerror or err}") from err


def _parse(data: bytes, subject: str):
    """The ModelProto in `data`; `subject` starts the error message ("from_onnx: the file 'm.onnx' is")."""
    import onnx
    from google.protobuf.message import DecodeError
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except DecodeError as err:
        raise SerializationError(f"{subject} not a valid ONNX model: the protobuf cannot be decoded ({err}); "
                                 "the file may be truncated or not an .onnx file") from err
    return model


def _check_text(model, subject: str):
    """Raise SerializationError if any string field of `model` (names, op types, attribute strings,
    ...) is not valid UTF-8; bytes fields such as raw_data are not read."""
    from google.protobuf.descriptor import FieldDescriptor
    stack = [("model", model)]
    while stack:
        where, message = stack.pop()
        for field in message.DESCRIPTOR.fields:
            repeated = field.is_repeated if hasattr(field, "is_repeated") else \
                field.label == FieldDescriptor.LABEL_REPEATED
            if field.type == FieldDescriptor.TYPE_STRING:
                try:
                    values = getattr(message, field.name)
                    bad = any(isinstance(v, bytes) for v in (values if repeated else [values]))
                except UnicodeDecodeError:
                    bad = True
                if bad:
                    raise SerializationError(f"{subject} holds text that is not valid UTF-8 in {where}.{field.name}; "
                                             "the file is corrupt")
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                if repeated:
                    stack.extend((f"{where}.{field.name}[{i}]", sub)
                                 for i, sub in enumerate(getattr(message, field.name)))
                elif message.HasField(field.name):
                    stack.append((f"{where}.{field.name}", getattr(message, field.name)))


def _named_tensors(model):
    """(what, TensorProto) for every initializer and tensor-valued node attribute, in every graph."""
    for graph in iter_graphs(model.graph):
        for tensor in graph.initializer:
            yield f"initializer {tensor.name!r}", tensor
        for node in graph.node:
            for attr in node.attribute:
                where = f"attribute {attr.name!r} of ONNX node {node.name or '<unnamed>'!r} ({node.op_type})"
                if attr.HasField("t"):
                    yield where, attr.t
                for tensor in attr.tensors:
                    yield where, tensor


def _read_external_data(model, base_dir: str):
    """Read every external tensor of `model` from files inside `base_dir` into its raw_data."""
    from onnx import TensorProto
    for what, tensor in _named_tensors(model):
        if tensor.data_location != TensorProto.EXTERNAL:
            continue
        info = {entry.key: entry.value for entry in tensor.external_data}
        location = info.get("location", "")
        path = _resolve_inside(base_dir, location, what)
        try:
            offset, length = int(info.get("offset") or 0), info.get("length")
            length = None if length in (None, "") else int(length)
        except ValueError as err:
            raise InvalidModelError(f"{what}: external data offset/length are not integers ({info})") from err
        size = os.path.getsize(path)
        if length is None:
            length = size - offset
        if offset < 0 or length < 0 or offset + length > size:
            raise InvalidModelError(f"{what}: external data at offset {offset} with length {length} reaches past "
                                    f"the end of {location!r} ({size} bytes)")
        dims, dtype, nbytes = tensor_layout(tensor, what)
        if length != nbytes:
            raise InvalidModelError(f"{what}: its external data in {location!r} is {length} bytes, but shape "
                                    f"{dims} {dtype} needs {nbytes} bytes")
        with open(path, "rb") as f:
            f.seek(offset)
            tensor.raw_data = f.read(length)
        del tensor.external_data[:]
        tensor.data_location = TensorProto.DEFAULT


def _resolve_inside(base_dir: str, location: str, what: str) -> str:
    """The real path of external file `location`, which must lie inside `base_dir` (symlinks resolved)."""
    if not location:
        raise InvalidModelError(f"{what}: it is marked as external data but names no location")
    root = os.path.realpath(base_dir)
    try:
        path = None if os.path.isabs(location) else os.path.realpath(os.path.join(root, location))
    except ValueError as err:  # e.g. an embedded NUL byte
        raise InvalidModelError(f"{what}: its external data location {location!r} is not a valid path") from err
    if path is None or os.path.commonpath([root, path]) != root:
        raise InvalidModelError(f"{what}: its external data location {location!r} is outside the model's "
                                f"directory {root!r}; external files must lie inside it")
    if not os.path.exists(path):
        raise InvalidModelError(f"{what}: its external data file {location!r} does not exist (looked for {path!r})")
    if not os.path.isfile(path):
        raise InvalidModelError(f"{what}: its external data location {location!r} is not a regular file")
    return path
