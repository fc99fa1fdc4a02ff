"""Shared pieces of the ONNX importer: dtype mapping, the frontend's error classes, attribute
access that tracks what a converter read (so an attribute nobody handles is an error, not a silent
wrong answer), and the NodeContext a converter receives (typed, constant-folded access to its
inputs)."""
import numpy as np

from ...errors import InputError, OpNotImplemented
from ...ir.expr import Constant
from ...runtime import ndarray as _nd

# ONNX TensorProto.DataType -> numpy dtype name (the ones our ops can hold)
ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
               9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64"}


def onnx_dtype(code: int, what: str) -> str:
    """The numpy dtype name of ONNX element type `code`; unsupported ones (string, bfloat16,
    complex, float8) raise OpNotImplemented naming `what`."""
    try:
        return ONNX_DTYPES[int(code)]
    except KeyError:
        import onnx
        name = onnx.TensorProto.DataType.Name(int(code)) if int(code) in onnx.TensorProto.DataType.values() else code
        raise OpNotImplemented(f"{what}: ONNX element type {name} is not supported "
                               f"(supported: {sorted(set(ONNX_DTYPES.values()))})") from None


def const(value, dtype=None) -> Constant:
    """A Constant that keeps the numpy dtype exactly (relay.const narrows int64 to int32)."""
    arr = np.asarray(value, dtype=dtype)
    return Constant(_nd.array(np.array(arr, order="C")))


class InvalidModelError(InputError):
    """The model breaks the ONNX standard (a node with the wrong number of inputs, a missing
    required attribute, a tensor whose data does not match its dims, Split sizes that do not add
    up, ...), as opposed to using something this importer does not support (OpNotImplemented)."""


def node_where(node, opset: int) -> str:
    """How every message names a node: its name (or <unnamed>), op type and the opset in force."""
    return f"ONNX node {node.name or '<unnamed>'!r} ({node.op_type}, opset {opset})"


def iter_graphs(graph):
    """`graph` and every subgraph held in a node attribute (If / Loop / Scan bodies), at any depth."""
    stack = [graph]
    while stack:
        current = stack.pop()
        yield current
        for node in current.node:
            for attr in node.attribute:
                if attr.HasField("g"):
                    stack.append(attr.g)
                stack.extend(attr.graphs)


class UndeclaredElementShapeError(InputError):
    """A sequence or optional graph input declares no shape for its tensors, and from_onnx's shape
    argument gives none: Relay types need at least the rank."""


class DynamicInputError(OpNotImplemented):
    """A converter needs the value of an input (axes, pads, shape, ...) that is only known at run time."""


class DynamicShapeError(OpNotImplemented):
    """A converter needs a static shape (or dim) that is only known at run time."""


class NodeAttrs:
    """An ONNX node's attributes as Python values; remembers which ones were read."""

    def __init__(self, node):
        import onnx
        self._values = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        for k, v in self._values.items():
            try:
                if isinstance(v, bytes):
                    self._values[k] = v.decode()
                elif isinstance(v, list) and v and isinstance(v[0], bytes):
                    self._values[k] = [x.decode() for x in v]
            except UnicodeDecodeError as err:
                raise InvalidModelError(f"attribute {k!r} is not UTF-8 text ({err})") from err
        self._read = set()

    def get(self, name, default=None):
        self._read.add(name)
        return self._values.get(name, default)

    def ints(self, name, default=None):
        v = self.get(name, default)
        return None if v is None else tuple(int(x) for x in v)

    def __contains__(self, name):
        return name in self._values

    def unread(self) -> list:
        return sorted(set(self._values) - self._read)


class NodeContext:
    """What a converter sees: the node, its attrs, opset, and the importer's typed builder."""

    def __init__(self, importer, node, attrs: NodeAttrs, opset: int, since: int, values=None):
        self.importer = importer
        self.values = values  # the ONNX name -> expression table in force (subgraphs read it)
        self.node = node
        self.attrs = attrs
        self.opset = opset
        self.since = since  # the since_version of the schema in force for this node

    # --- inputs ------------------------------------------------------------------------------
    @property
    def op(self) -> str:
        return self.node.op_type

    def where(self) -> str:
        return node_where(self.node, self.opset)

    def fail(self, msg: str, fix: str = "") -> OpNotImplemented:
        """The error for a valid node that uses something this importer does not support."""
        return OpNotImplemented(f"{self.where()}: {msg}" + (f"; {fix}" if fix else ""))

    def invalid(self, msg: str, fix: str = "") -> InvalidModelError:
        """The error for a node whose inputs or attributes break the ONNX standard."""
        return InvalidModelError(f"{self.where()}: {msg}" + (f"; {fix}" if fix else ""))

    def fail_shape(self, msg: str, fix: str = "") -> DynamicShapeError:
        """fail() for a problem caused by a dynamic (run-time) shape rather than by the node itself."""
        return DynamicShapeError(f"{self.where()}: {msg}" + (f"; {fix}" if fix else ""))

    def value(self, expr, what: str, fix: str = "the importer needs it to be constant; give static input "
                                                 "shapes via from_onnx(model, shape={...})"):
        """The numpy value of `expr` if it folds to a constant, else OpNotImplemented."""
        expr = self.importer.normalize(expr)
        if not isinstance(expr, Constant):
            raise DynamicInputError(f"{self.where()}: input {what} is computed at run time, which is not "
                                    f"supported; {fix}")
        return expr.data.view_numpy()

    def maybe_value(self, expr):
        """The numpy value of `expr` if it folds to a constant, else None."""
        expr = self.importer.normalize(expr)
        return expr.data.view_numpy() if isinstance(expr, Constant) else None

    def type(self, expr):
        return self.importer.type_of(expr)

    def shape(self, expr) -> tuple:
        return tuple(self.importer.type_of(expr).shape)

    def static_shape(self, expr, what: str = "data") -> tuple:
        from ...ir.types import is_static
        shape = self.shape(expr)
        if not all(is_static(d) for d in shape):  # Any or a size variable
            raise self.fail_shape(f"{what} has a dynamic shape {shape}, which this converter needs static",
                            "give static input shapes via from_onnx(model, shape={...})")
        return tuple(int(d) for d in shape)

    def ndim(self, expr) -> int:
        return len(self.importer.type_of(expr).shape)

    def dtype(self, expr) -> str:
        return self.importer.type_of(expr).dtype
