"""IR as JSON: `save_json(node)` / `load_json(text)` for any expression, type, module or attrs.

The layout is TVM's (tvm.ir.save_json): a flat list of nodes that refer to each other by index,
the root's index, and the tensor data of constants base64-encoded in TVM's NDArray layout:

    {"root": 3,
     "nodes": [{"type_key": ""},                                   <- 0 is null
               {"type_key": "relay.Id", "attrs": {"name_hint": "x"}},
               {"type_key": "relay.Var", "attrs": {"vid": "1", "type_annotation": "0", ...}},
               {"type_key": "relay.Call", "attrs": {"op": "4", "args": "5", ...}},
               {"type_key": "Op", "global_key": "nn.relu"}, {"type_key": "Array", "data": [2]}],
     "b64ndarrays": [...], "attrs": {"tvm_version": "0.18.0"}}

A node shared in the program is one entry, so sharing (and the identity of variables) survives a
round trip; so do spans, inferred types, op attrs (`relay.attrs.<Class>` nodes) and function and
module attrs. Loading reads JSON and base64 only, never pickle or eval; both directions walk the
graph with explicit stacks, and a malformed file raises SerializationError naming the node.
"""
import base64
import binascii
import dataclasses
import json

from ..config import VERSION
from ..errors import RelayError, SerializationError
from ..runtime.ndarray import NDArray
from ..runtime.params import load_ndarray, save_ndarray
from ..tir import expr as tir_expr
from .adt import Clause, Pattern, TypeData
from .attrs import ATTRS_TYPES, Attrs, DictAttrs
from .expr import Expr, Op, bind_type
from .json_schema import BY_KEY, dim_build, dim_fields, kind_of
from .module import IRModule
from .span import SourceName, Span
from .types import Any, Type

_ATTRS_PREFIX = "relay.attrs."
_GRAPH_NODES = (Expr, Type, TypeData, Clause, Pattern, Span, SourceName, Attrs, DictAttrs, tir_expr.PrimExpr,
                Any, IRModule, NDArray)


class _Writer:
    """Gives every value a node index; IR objects are memoized so sharing is preserved."""

    def __init__(self):
        self.nodes = [{"type_key": ""}]
        self.arrays = []
        self.memo = {}
        self.pending = []

    def ref(self, value) -> int:
        if value is None:
            return 0
        memoized = isinstance(value, _GRAPH_NODES)
        if memoized and id(value) in self.memo:
            return self.memo[id(value)]
        index = len(self.nodes)
        self.nodes.append(None)
        if memoized:
            self.memo[id(value)] = index
        self.pending.append((index, value))
        return index

    def run(self, root) -> int:
        index = self.ref(root)
        while self.pending:
            i, value = self.pending.pop()
            self.nodes[i] = self.encode(value)
        return index

    def encode(self, value) -> dict:  # noqa: C901 - one branch per value kind
        if isinstance(value, Op):
            return {"type_key": "Op", "global_key": value.name}
        kind = kind_of(value)
        if kind is not None:
            attrs = {}
            for name, v in kind.fields(value).items():
                attrs[name] = self.field(name, v)
            if isinstance(value, Expr) and value._checked_type_ is not None:
                attrs["_checked_type_"] = str(self.ref(value._checked_type_))
            return {"type_key": kind.type_key, "attrs": attrs}
        if isinstance(value, IRModule):
            return {"type_key": "IRModule", "attrs": {
                "functions": str(self.ref(dict(value.functions))),
                "type_definitions": str(self.ref(dict(value.type_definitions))),
                "attrs": str(self.ref(value.attrs))}}
        if isinstance(value, DictAttrs):
            return {"type_key": "DictAttrs", "attrs": {"__dict__": str(self.ref(dict(value)))}}
        if isinstance(value, Attrs) and dataclasses.is_dataclass(value):
            return {"type_key": _ATTRS_PREFIX + type(value).__name__,
                    "attrs": {f.name: str(self.ref(getattr(value, f.name))) for f in dataclasses.fields(value)}}
        if isinstance(value, (Any, tir_expr.Var, tir_expr.IntImm)):   # leaves of shape dims (ints are IntImm nodes)
            key, plain = dim_fields(value)
            return {"type_key": key, "attrs": plain}
        if isinstance(value, dict):
            if all(isinstance(k, str) for k in value):
                return {"type_key": "Map", "keys": list(value), "data": [self.ref(v) for v in value.values()]}
            return {"type_key": "Map", "data": [self.ref(x) for kv in value.items() for x in kv]}
        if isinstance(value, (list, tuple)):
            return {"type_key": "Array", "data": [self.ref(v) for v in value]}
        return _encode_scalar(value)

    def field(self, name: str, value):
        """A field's JSON value: a node index (as TVM writes it, a string) or plain text."""
        if isinstance(value, NDArray):            # relay.Constant.data: an index into b64ndarrays
            self.arrays.append(base64.b64encode(save_ndarray(value)).decode("ascii"))
            return str(len(self.arrays) - 1)
        if isinstance(value, tuple) and value and value[0] == "relay.Id":
            i = len(self.nodes)
            self.nodes.append({"type_key": "relay.Id", "attrs": {"name_hint": value[1]}})
            return str(i)
        if isinstance(value, str):
            return value
        return str(self.ref(value))


def _encode_scalar(value) -> dict:
    if hasattr(value, "item") and not isinstance(value, (list, tuple, dict)):
        value = value.item()   # numpy scalars
    if isinstance(value, bool):
        return {"type_key": "IntImm", "attrs": {"dtype": "bool", "value": str(int(value))}}
    if isinstance(value, int):
        return {"type_key": "IntImm", "attrs": {"dtype": "int64", "value": str(value)}}
    if isinstance(value, float):
        return {"type_key": "FloatImm", "attrs": {"dtype": "float64", "value": repr(value)}}
    if isinstance(value, str):
        return {"type_key": "runtime.String", "repr_str": value}
    raise SerializationError(f"save_json: cannot save a value of type {type(value).__name__} "
                             f"({value!r:.80}); IR nodes, attrs, numbers, strings, lists and dicts can")


def save_json(node) -> str:
    """The JSON text of an IR node (tvm.ir.save_json).

    Parameters
    ----------
    node : Expr or Type or IRModule or Attrs or plain value
        What to save: an expression, a type, a module, attrs, or numbers, strings, lists and
        dicts of them.

    Returns
    -------
    text : str
        JSON in TVM's graph-of-nodes layout; constants are base64 arrays.
    """
    writer = _Writer()
    root = writer.run(node)
    return json.dumps({"root": root, "nodes": writer.nodes, "b64ndarrays": writer.arrays,
                       "attrs": {"tvm_version": "0.18.0", "relay_backend_version": VERSION}},
                      indent=1)


# ------------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------------
class _Reader:
    """Builds nodes children-first from a parsed JSON object, checking every reference."""

    def __init__(self, doc, what: str):
        self.what = what
        if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
            raise self.fail("the JSON is not an IR graph (expected an object with a 'nodes' list)")
        self.nodes = doc["nodes"]
        self.arrays = doc.get("b64ndarrays", [])
        if not isinstance(self.arrays, list):
            raise self.fail("'b64ndarrays' must be a list")
        self.root = self.index(doc.get("root"), "root")
        self.built = {0: None}

    def fail(self, message: str, index: int = None) -> SerializationError:
        where = "" if index is None else f" (node {index})"
        return SerializationError(f"{self.what}: {message}{where}")

    def index(self, value, field: str, at: int = None) -> int:
        try:
            i = int(value)
        except (TypeError, ValueError):
            raise self.fail(f"field {field!r} should be a node index, got {value!r:.40}", at) from None
        if not 0 <= i < len(self.nodes):
            raise self.fail(f"field {field!r} refers to node {i}, but there are {len(self.nodes)}", at)
        return i

    def node(self, i: int) -> dict:
        node = self.nodes[i]
        if not isinstance(node, dict) or not isinstance(node.get("type_key"), str):
            raise self.fail("a node must be an object with a 'type_key'", i)
        return node

    def children(self, i: int) -> list:
        """The indices node i refers to (what must be built before it)."""
        node = self.node(i)
        key, attrs = node["type_key"], node.get("attrs", {})
        if not isinstance(attrs, dict):
            raise self.fail("'attrs' must be an object", i)
        if key in ("Array", "Map"):
            data = node.get("data", [])
            if not isinstance(data, list):
                raise self.fail("'data' must be a list", i)
            return [self.index(v, "data", i) for v in data]
        kind = BY_KEY.get(key)
        if kind is not None:
            names = [n for n in (*kind.refs, "_checked_type_") if n in attrs]
        elif key in ("IRModule", "DictAttrs") or key.startswith(_ATTRS_PREFIX):
            names = list(attrs)
        else:
            names = []
        return [self.index(attrs[n], n, i) for n in names]

    def run(self):
        stack, visiting = [(self.root, False)], set()
        while stack:
            i, expanded = stack.pop()
            if i in self.built:
                continue
            if expanded:
                self.built[i] = self.build(i)
                visiting.discard(i)
                continue
            if i in visiting:
                raise self.fail("the graph has a cycle", i)
            visiting.add(i)
            stack.append((i, True))
            stack.extend((c, False) for c in self.children(i) if c not in self.built)
        return self.built[self.root]

    def ref(self, i: int, field: str, node: dict):
        return self.built[self.index(node.get("attrs", {}).get(field, "0"), field, i)]

    def build(self, i: int):  # noqa: C901 - one branch per node kind
        node = self.node(i)
        key, attrs = node["type_key"], node.get("attrs", {})
        try:
            if key == "Op":
                op = Op.get(str(node.get("global_key")))
                if op is None:
                    raise self.fail(f"operator {node.get('global_key')!r} is not registered", i)
                return op
            if key == "Array":
                return [self.built[self.index(v, "data", i)] for v in node.get("data", [])]
            if key == "Map":
                values = [self.built[self.index(v, "data", i)] for v in node.get("data", [])]
                keys = node.get("keys")
                if keys is not None:
                    return dict(zip((str(k) for k in keys), values))
                return dict(zip(values[0::2], values[1::2]))
            if key == "runtime.String":
                return str(node.get("repr_str", ""))
            if key == "IntImm":
                value = int(attrs["value"])
                return bool(value) if attrs.get("dtype") == "bool" else value
            if key == "FloatImm":
                return float(attrs["value"])
            if key in ("tir.Any", "tir.SizeVar", "tir.Var"):
                return dim_build(key, attrs)
            if key == "relay.Id":
                return str(attrs.get("name_hint", ""))
            if key == "DictAttrs":
                return DictAttrs(_attr_values(self.ref(i, "__dict__", node) or {}))
            if key == "IRModule":
                return IRModule(self.ref(i, "functions", node) or {},
                                self.ref(i, "type_definitions", node) or {},
                                self.ref(i, "attrs", node) or {})
            if key.startswith(_ATTRS_PREFIX):
                return self.attrs(key[len(_ATTRS_PREFIX):], attrs, i, node)
            kind = BY_KEY.get(key)
            if kind is None or kind.build is None:
                raise self.fail(f"unknown node type {key!r}", i)
            fields = {n: self.ref(i, n, node) for n in kind.refs}
            fields.update({n: attrs.get(n, "") for n in kind.plain})
            if key == "relay.Constant":
                fields["data"] = self.constant(attrs.get("data"), i)
            out = kind.build(fields)
            if "_checked_type_" in attrs and attrs["_checked_type_"] not in ("0", 0):
                bind_type(out, self.ref(i, "_checked_type_", node))
            return out
        except SerializationError:
            raise
        except (RelayError, KeyError, TypeError, ValueError, AttributeError) as err:
            raise self.fail(f"invalid {key} node: {type(err).__name__}: {err}", i) from None

    def constant(self, index, i: int):
        try:
            blob = base64.b64decode(self.arrays[int(index)], validate=True)
        except (IndexError, TypeError, ValueError, binascii.Error):
            raise self.fail(f"constant data {index!r} is not a valid entry of b64ndarrays", i) from None
        return load_ndarray(blob, f"constant (node {i})")

    def attrs(self, name: str, attrs: dict, i: int, node: dict):
        cls = ATTRS_TYPES.get(name)
        if cls is None:
            raise self.fail(f"unknown attrs type {name!r} (no Attrs class of that name is defined; "
                            f"import the module that defines it first)", i)
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(attrs) - fields)
        if unknown:
            raise self.fail(f"{name} has no field(s) {unknown}", i)
        return cls(**{k: _attr_value(self.ref(i, k, node)) for k in attrs})


def _attr_value(value):
    """Attrs hold tuples where JSON has arrays."""
    if isinstance(value, list):
        return tuple(_attr_value(v) for v in value)
    return value


def _attr_values(d: dict) -> dict:
    return {k: _attr_value(v) for k, v in d.items()}


def load_json(text: str, what: str = "load_json"):
    """The IR node saved by save_json (or by TVM's tvm.ir.save_json, for the node kinds Relay has).

    Loading never runs code from the text; a malformed document raises SerializationError.

    Parameters
    ----------
    text : str or bytes
        The JSON text.
    what : str, optional
        The name of the caller, used to open error messages. Defaults to "load_json".

    Returns
    -------
    node : object
        The IR node (expression, type, module, ...).
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise SerializationError(f"{what}: expected JSON text, got {type(text).__name__}")
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        raise SerializationError(f"{what}: not valid JSON ({err})") from None
    return _Reader(doc, what).run()


def load_meta_table(text: str, first_line: int = 0) -> dict:
    """The meta table of a TVM-style `#[metadata]` section (a JSON map of kind -> node list)."""
    table = load_json(text, f"metadata section (line {first_line})")
    if not isinstance(table, dict) or not all(isinstance(v, list) for v in table.values()):
        raise SerializationError(f"metadata section (line {first_line}): expected a map from kinds "
                                 f"such as relay.Constant to lists of nodes")
    return table


__all__ = ["save_json", "load_json", "load_meta_table"]
