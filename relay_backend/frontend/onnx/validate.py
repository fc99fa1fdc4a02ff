"""Checks of an ONNX model and of from_onnx's arguments, done before any converter runs.

`check_node_schemas` is the guard for the whole class of malformed-node bugs: every node of the
standard domain has its input and output counts, its required attributes and the types of its
attributes checked against onnx.defs' schema for the opset in force. A converter therefore only
sees nodes of the shape their schema promises (Add has two inputs, Concat an INT axis, MaxPool a
kernel_shape), and a malformed node is reported by name instead of surfacing as a TypeError deep
inside a converter. `check_value_names` checks that every value is defined once (ONNX graphs are
in SSA form), `check_arguments` the shape / dtype / opset arguments of from_onnx.
"""
import numbers

import numpy as np

from ...errors import InputError, OpNotImplemented, RelayError
from ...ir.types import Any
from .common import ONNX_DTYPES, InvalidModelError, node_where


def _raise_all(problems, what: str):
    if problems:
        raise InvalidModelError(f"from_onnx: {len(problems)} {what}:\n  - " + "\n  - ".join(problems))


# --- from_onnx arguments ---------------------------------------------------------------------------
def check_opset_argument(opset):
    """`opset` (from_onnx's override) as an int, or None; an InputError names a bad value."""
    if opset is None:
        return None
    if isinstance(opset, bool) or not isinstance(opset, numbers.Integral):
        raise InputError(f"from_onnx: opset={opset!r} is not an integer; pass the ONNX opset number, e.g. opset=13")
    if int(opset) < 1:
        raise InputError(f"from_onnx: opset={opset!r}; ONNX opsets start at 1")
    check_opset_known(int(opset), f"from_onnx: opset={opset!r} asks for", InputError)
    return int(opset)


def check_opset_known(opset: int, what: str, error=OpNotImplemented):
    """Raise `error` when the installed onnx package has no schemas for `opset` (a newer model)."""
    import onnx
    newest = onnx.defs.onnx_opset_version()
    if opset > newest:
        raise error(f"{what} opset {opset}, but the installed onnx {onnx.__version__} defines opsets only up "
                    f"to {newest}; upgrade onnx, or convert the model with onnx.version_converter")


def _graph_input_names(graph) -> list:
    inits = {t.name for t in graph.initializer}
    return [i.name for i in graph.input if i.name not in inits]


def _dtype_name(value):
    """The numpy dtype name `value` stands for if it is one ONNX inputs can have, else None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        name = np.dtype(value).name
    except TypeError:
        return None
    return name if name in ONNX_DTYPES.values() else None


def _shape_of(value, size_vars: dict):
    """The shape `value` gives, or None if it is not one: ints; None, -1 or Any() for a dynamic dim;
    a size variable or an integer tir expression on them (te.size_var("n"), n * 2) for a symbolic
    dim; a name ("n") for the int32 size variable of that name, one per name across the call (so
    two inputs sharing "n" must get the same size at run time)."""
    from ...ir.dims import normalize_dim
    from ...tir import expr as tir_expr
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, np.ndarray)):
        return None
    dims = []
    for dim in list(value):
        if dim is None or isinstance(dim, Any):
            dims.append(Any())
        elif isinstance(dim, numbers.Integral) and not isinstance(dim, bool):
            dims.append(int(dim) if int(dim) >= 0 else Any())
        elif isinstance(dim, str) and dim.isidentifier():
            if dim not in size_vars:
                from ...te import size_var
                size_vars[dim] = size_var(dim)
            dims.append(size_vars[dim])
        elif isinstance(dim, tir_expr.PrimExpr) and str(getattr(dim, "dtype", "")).startswith("int"):
            try:
                dims.append(normalize_dim(dim, "from_onnx shape"))
            except RelayError:
                return None
        else:
            return None
    return tuple(dims)


def check_arguments(graph, shape, dtype):
    """(shape as {input: tuple of int | Any}, dtype as a name or {input: name}) after checking that
    every name is a graph input and every value is a shape / a supported dtype."""
    names = _graph_input_names(graph)
    if shape is None:
        shape = {}
    if not isinstance(shape, dict):
        raise InputError(f"from_onnx: shape={shape!r} must be a dict {{input name: shape}}; the model's inputs "
                         f"are {names}")
    for key in shape:
        if key not in names:
            raise InputError(f"from_onnx: shape names {key!r}, which is not an input of the model; its inputs "
                             f"are {names}")
    size_vars = {}  # a name used in several shapes stands for one size variable
    checked_shape = {key: _shape_of(value, size_vars) for key, value in shape.items()}
    for key, dims in checked_shape.items():
        if dims is None:
            raise InputError(f"from_onnx: shape[{key!r}]={shape[key]!r} is not a shape; give a tuple of ints "
                             "(None, -1 or relay.Any() for a dimension left dynamic; a size variable "
                             "(te.size_var / tir.Var) or a name such as 'n' for a symbolic one)")
    supported = sorted(set(ONNX_DTYPES.values()))
    if isinstance(dtype, dict):
        checked_dtype = {}
        for key, value in dtype.items():
            if key not in names:
                raise InputError(f"from_onnx: dtype names {key!r}, which is not an input of the model; its inputs "
                                 f"are {names}")
            checked_dtype[key] = _dtype_name(value)
            if checked_dtype[key] is None:
                raise InputError(f"from_onnx: dtype[{key!r}]={value!r} is not a supported dtype ({supported})")
        return checked_shape, checked_dtype
    if _dtype_name(dtype) is None:
        raise InputError(f"from_onnx: dtype={dtype!r} must be a dtype name ({supported}) or a dict "
                         "{input name: dtype name}")
    return checked_shape, _dtype_name(dtype)


# --- the graph ---------------------------------------------------------------------------------------
def _describe(node) -> str:
    return f"node {node.name or '<unnamed>'!r} ({node.op_type})"


def check_value_names(graph):
    """Every value defined once: no duplicate graph inputs or initializers, no node output that
    another node, a graph input or an initializer already defines; and at least one graph output."""
    problems = []
    inputs, inits, writers = set(), set(), {}
    for value in graph.input:
        if value.name in inputs:
            problems.append(f"graph input {value.name!r} is declared twice")
        inputs.add(value.name)
    for tensor in graph.initializer:
        if tensor.name in inits:
            problems.append(f"initializer {tensor.name!r} is declared twice")
        inits.add(tensor.name)
    for node in graph.node:
        for name in node.output:
            if not name:
                continue
            if name in writers:
                problems.append(f"{_describe(node)} writes {name!r}, which {writers[name]} already writes")
            elif name in inputs or name in inits:
                kind = "a graph input" if name in inputs else "an initializer"
                problems.append(f"{_describe(node)} writes {name!r}, which is {kind}")
            writers[name] = _describe(node)
    if not graph.output:
        problems.append("the graph has no outputs")
    _raise_all(problems, "problem(s) with the model's value names (each value must be defined exactly once)")
    if graph.sparse_initializer:
        raise OpNotImplemented(f"from_onnx: sparse initializers ({[s.values.name for s in graph.sparse_initializer]})"
                               " are not supported; store them as dense initializers")


# --- nodes against their schemas ------------------------------------------------------------------------
def _count_range(low: int, high: int) -> str:
    if low == high:
        return str(low)
    return f"at least {low}" if high >= 2 ** 31 - 1 else f"{low} to {high}"


def _attr_type_name(code: int) -> str:
    import onnx
    try:
        return onnx.AttributeProto.AttributeType.Name(int(code))
    except ValueError:
        return f"type {int(code)}"


def schema_problems(node, schema) -> list:
    """What is wrong with `node` against `schema` (an onnx.defs.OpSchema): counts, empty required
    inputs, missing required attributes, attributes of the wrong type, untyped or repeated ones."""
    from onnx.defs import OpSchema
    problems = []
    n_in, n_out = len(node.input), len(node.output)
    if not schema.min_input <= n_in <= schema.max_input:
        problems.append(f"has {n_in} input(s), but its schema (version {schema.since_version}) needs "
                        f"{_count_range(schema.min_input, schema.max_input)}")
    for i, name in enumerate(node.input):
        formal = schema.inputs[min(i, len(schema.inputs) - 1)] if schema.inputs else None
        if not name and formal is not None and formal.option != OpSchema.FormalParameterOption.Optional:
            problems.append(f"input {i} ({formal.name}) is required but its name is empty")
    if not schema.min_output <= n_out <= schema.max_output:
        problems.append(f"has {n_out} output(s), but its schema (version {schema.since_version}) allows "
                        f"{_count_range(schema.min_output, schema.max_output)}")
    seen = {}
    for attr in node.attribute:
        seen[attr.name] = seen.get(attr.name, 0) + 1
        declared = schema.attributes.get(attr.name)
        if attr.type == 0:
            problems.append(f"attribute {attr.name!r} has no type (AttributeProto.type is UNDEFINED)")
        elif declared is not None and int(attr.type) != int(declared.type):
            problems.append(f"attribute {attr.name!r} is {_attr_type_name(attr.type)}, but the schema wants "
                            f"{_attr_type_name(declared.type)}")
    problems.extend(f"attribute {name!r} is given {count} times" for name, count in seen.items() if count > 1)
    problems.extend(f"required attribute {name!r} is missing" for name, declared in schema.attributes.items()
                    if declared.required and name not in seen)
    return problems


def check_node_schemas(graph, opset: int):
    """Check every standard-domain node of `graph` against its ONNX schema at `opset`; raise one
    InvalidModelError listing every node that breaks it. Ops with no schema at this opset are
    skipped here (check_supported reports them as unsupported)."""
    import onnx
    problems = []
    for node in graph.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        try:
            schema = onnx.defs.get_schema(node.op_type, opset, "")
        except onnx.defs.SchemaError:
            continue
        found = schema_problems(node, schema)
        if found:
            problems.append(f"{node_where(node, opset)}: " + "; ".join(found))
    _raise_all(problems, "node(s) do not match their ONNX schema")


def validate_model(model, opset: int):
    """The structural checks (value names, node schemas) on their own, for callers that must say
    what is wrong with a model before converting it (the ONNX Backend)."""
    check_value_names(model.graph)
    check_node_schemas(model.graph, opset)
