"""from_onnx: an ONNX ModelProto -> (IRModule, params), as tvm.relay.frontend.from_onnx.

The importer walks the (topologically sorted) graph once. Every expression a converter builds is
typed as it is made, with the ops' own type relations, and any call whose arguments are all
constants is folded right away with the ops' numpy references (transform.fold_constant's
evaluate_call). So shape-computing subgraphs (Shape -> Gather -> Concat -> Reshape) become
constants when input shapes are static, and converters can read the values they need.

Before any converter runs, the model and the arguments are checked (validate.py): value names
defined once, every node against its ONNX schema (input/output counts, required attributes,
attribute types), shape/dtype/opset arguments. A converter that still fails with a plain Python
error is reported as an InvalidModelError naming the node, never as a bare exception.

What cannot be imported is reported all at once: every unsupported op, and every node whose
attribute values or run-time inputs its converter rejects (see OnnxImporter._convert_all).

ONNX sequences and optionals become the Prelude's List and Option (adt.py): expressions the op
relations cannot type record their type with `typed`, and a model that uses them is imported into
a module holding the Prelude. Subgraphs (If branches, Loop and SequenceMap bodies) are converted
by `convert_subgraph`, seeing the enclosing graphs' values by name.
"""
import numpy as np

from ...errors import InputError, OpNotImplemented, RelayError
from ...ir.expr import Call, Constant, Function, Tuple, TupleGetItem, Var, var
from ...ir.module import IRModule
from ...ir.types import Any, TensorType, TupleType, is_any, is_static
from ...op.registry import OpDef
from ...progress import track
from ...runtime import ndarray as _nd
from ...runtime.limits import check_tensor_size
from ...transform.fold_constant import evaluate_call, is_foldable_op
from ..spans import node_span, set_span
from .bfloat16 import CARRIER as BFLOAT16_CARRIER
from .bfloat16 import check_use as check_bfloat16_use
from .bfloat16 import is_bfloat16_type, produces_bfloat16
from .common import (DynamicInputError, DynamicShapeError, InvalidModelError, NodeAttrs, NodeContext,
                     UndeclaredElementShapeError, const, iter_graphs, node_where, onnx_dtype)
from .inference import inferred_types
from .loading import load_model
from .tensors import tensor_to_array
from .validate import check_arguments, check_node_schemas, check_opset_argument, check_opset_known, \
    check_value_names

MIN_OPSET = 1  # per-op limits live in the converter table (e.g. broadcasting binary ops need 7+)


class Converter:
    """One table row: the function and the schema versions (since_version) it implements."""

    def __init__(self, fn, min_version: int = 1, max_version: int = 22):
        self.fn, self.min_version, self.max_version = fn, min_version, max_version


DEFAULT_DOMAINS = ("", "ai.onnx")


def table_key(node) -> str:
    """The converter table's key of a node: its op_type in the default domain, else
    "<domain>.<op_type>" (e.g. "com.microsoft.QLinearAdd", onnxruntime's contrib ops)."""
    domain = node.domain or ""
    return node.op_type if domain in DEFAULT_DOMAINS else f"{domain}.{node.op_type}"


def _schema_version(op_type: str, opset: int):
    import onnx
    try:
        return onnx.defs.get_schema(op_type, opset, "").since_version
    except Exception:  # onnx.defs.SchemaError: no such op at this opset
        return None


class OnnxImporter:
    """The state of one ONNX import: the value table (ONNX name -> Relay expression) and the
    typing and folding memo the converters use (from_onnx makes one).

    Parameters
    ----------
    table : dict
        The converters, by ONNX op type (frontend.onnx.converters.CONVERTERS).
    shape : dict of str to tuple, optional
        {input name: shape} overriding the declared shapes. Defaults to None.
    dtype : str or dict, optional
        The dtype of inputs without a declared type. Defaults to "float32".
    opset : int, optional
        The opset to import with; None (the default) uses the model's.
    freeze_params : bool, optional
        Whether initializers become constants (True, the default) or parameters.
    bind_inputs : dict, optional
        {graph input name: value} imported as constants (for subgraphs whose inputs are
        known). Defaults to None.
    """

    def __init__(self, table, shape=None, dtype="float32", opset=None, freeze_params=True, bind_inputs=None):
        self.table = table
        self.bind_inputs = dict(bind_inputs or {})  # graph input name -> value, imported as a constant
        self.shape = shape  # checked against the model's inputs by import_model
        self.dtype = dtype
        self.opset_override = check_opset_argument(opset)
        self.freeze_params = freeze_params
        self._memo = {}  # id(expr) -> (expr, normalized expr, type); holding expr keeps the id alive
        self._adt = None  # the AdtKit (List, Option), made when the model first uses a sequence or optional
        self.structure = {}  # id(expr) -> (expr, StaticSequence | StaticOptional), see adt.py
        self.bfloat16_names = set()  # ONNX values holding bfloat16 bits (uint16), see bfloat16.py

    @property
    def adt(self):
        """The AdtKit whose module becomes the imported module once a sequence or optional appears."""
        if self._adt is None:
            from .adt import AdtKit
            self._adt = AdtKit()
        return self._adt

    def typed(self, expr, ty):
        """Record the type of `expr`, which the op relations cannot type (an ADT value, a match, an
        If, a let-bound loop); returns `expr`. Such expressions are never folded.

        Parameters
        ----------
        expr : Expr
            The expression built.
        ty : Type
            Its type, as the importer knows it.

        Returns
        -------
        expr : Expr
            `expr` itself.
        """
        self._memo[id(expr)] = (expr, expr, ty)
        return expr

    # --- typing and folding ----------------------------------------------------------------------
    def normalize(self, expr):
        """An expression with its constant calls folded (memoized); its type is recorded too.

        Parameters
        ----------
        expr : Expr
            An expression a converter built.

        Returns
        -------
        expr : Expr
            The folded expression.
        """
        return self._visit(expr)[0]

    def type_of(self, expr):
        """The type of an expression a converter built (inferred once, memoized with normalize).

        Parameters
        ----------
        expr : Expr
            The expression.

        Returns
        -------
        type : Type
            Its inferred type.
        """
        return self._visit(expr)[1]

    def _visit(self, expr):
        hit = self._memo.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1], hit[2]
        # explicit stack: a converter may build a long chain before asking for a type
        stack = [(expr, False)]
        while stack:
            e, ready = stack.pop()
            hit = self._memo.get(id(e))
            if hit is not None and hit[0] is e:
                continue
            kids = self._children(e)
            if not ready and any(self._memo.get(id(k), (None,))[0] is not k for k in kids):
                stack.append((e, True))
                stack.extend((k, False) for k in kids)
                continue
            new, ty = self._normalize_one(e, [self._memo[id(k)][1] for k in kids],
                                          [self._memo[id(k)][2] for k in kids])
            self._memo[id(e)] = (e, new, ty)
            if new is not e:
                self._memo[id(new)] = (new, new, ty)
        hit = self._memo[id(expr)]
        return hit[1], hit[2]

    @staticmethod
    def _children(e):
        if isinstance(e, Call):
            return list(e.args)
        if isinstance(e, Tuple):
            return list(e.fields)
        if isinstance(e, TupleGetItem):
            return [e.tuple_value]
        return []

    def _normalize_one(self, e, kids, kid_types):
        if isinstance(e, Var):
            return e, e.type_annotation
        if isinstance(e, Constant):
            arr = e.data.view_numpy()
            return e, TensorType(arr.shape, str(arr.dtype))
        if isinstance(e, Tuple):
            new = e if all(a is b for a, b in zip(kids, e.fields)) else Tuple(kids)
            return new, TupleType(kid_types)
        if isinstance(e, TupleGetItem):
            tup = kids[0]
            if isinstance(tup, Tuple):
                return tup.fields[e.index], kid_types[0].fields[e.index]
            new = e if tup is e.tuple_value else TupleGetItem(tup, e.index)
            return new, kid_types[0].fields[e.index]
        if isinstance(e, Call) and isinstance(e.op, OpDef):
            new = e if all(a is b for a, b in zip(kids, e.args)) else Call(e.op, kids, e.attrs, e.type_args)
            ty = e.op.rel(kid_types, e.attrs)
            if is_foldable_op(e.op) and all(_is_const(k) for k in kids):
                _check_static_size(ty, f"constant folding of {e.op.name}")  # before numpy allocates it
                folded = evaluate_call(new)
                if folded is not None:
                    return folded, self._visit(folded)[1] if not isinstance(folded, Constant) else \
                        TensorType(folded.data.shape, folded.data.dtype)
            return new, ty
        raise RelayError(f"ONNX importer: cannot type an expression of kind {type(e).__name__}")

    # --- the model -----------------------------------------------------------------------------
    def _opset(self, model) -> int:
        return model_opset(model) if self.opset_override is None else self.opset_override

    def check_supported(self, graph, opset: int) -> dict:
        """The ops of a graph this importer cannot convert, found before any conversion.

        Raises at once only for an opset below MIN_OPSET or beyond the installed onnx; import_model
        reports the ops together with every node-level problem (unsupported attribute values,
        run-time inputs).

        Parameters
        ----------
        graph : onnx.GraphProto
            The model's graph (subgraphs are searched too).
        opset : int
            The opset the model is imported with.

        Returns
        -------
        problems : dict
            {(domain, op_type): why it cannot be converted}; empty when every op can be.
        """
        if opset < MIN_OPSET:
            raise OpNotImplemented(f"from_onnx: the model uses ONNX opset {opset}; supported opsets are "
                                   f"{MIN_OPSET} and later (convert it with onnx.version_converter)")
        check_opset_known(opset, "from_onnx: the model uses ONNX")
        problems = {}
        for node in _all_nodes(graph):
            key = (node.domain or "", node.op_type)
            if key not in problems:
                why = self.unsupported_reason(node, opset)
                if why is not None:
                    problems[key] = why
        return problems

    def unsupported_reason(self, node, opset: int):
        """Why this importer cannot convert `node`'s operator (None when it can).

        Parameters
        ----------
        node : onnx.NodeProto
            The node whose operator is looked up (its domain and op_type).
        opset : int
            The model's opset for the node's domain, which picks the operator's schema version.

        Returns
        -------
        reason : str or None
            A one-line reason naming the operator, or None when a converter accepts it.
        """
        if node.domain not in DEFAULT_DOMAINS:
            if table_key(node) in self.table:   # a contrib op with a converter: no schema check
                return None
            return f"{node.domain}.{node.op_type} (custom domain {node.domain!r})"
        conv = self.table.get(node.op_type)
        since = _schema_version(node.op_type, opset)
        if conv is None:
            return node.op_type
        if since is None:
            return f"{node.op_type} (not defined at opset {opset})"
        if not conv.min_version <= since <= conv.max_version:
            return (f"{node.op_type} (opset {opset} uses version {since}; supported versions "
                    f"{conv.min_version}..{conv.max_version})")
        return None

    def import_model(self, model):
        """Convert an ONNX model into a Relay module and its params (what from_onnx returns).

        Parameters
        ----------
        model : onnx.ModelProto or bytes or str or os.PathLike
            The model, its serialized bytes, or the path of a .onnx file.

        Returns
        -------
        result : tuple
            (IRModule, params): the typed module whose main takes the graph inputs (then the
            initializers when freeze_params is False), and {initializer name: NDArray} for those.
        """
        model = load_model(model)
        graph = model.graph
        self.shape, self.dtype = check_arguments(graph, self.shape, self.dtype)
        opset = self._opset(model)
        check_value_names(graph)
        unsupported_ops = self.check_supported(graph, opset)
        check_node_schemas(graph, opset)
        values, params, param_vars = {}, {}, []
        for init in graph.initializer:
            arr = tensor_to_array(init, f"initializer {init.name!r}")
            if self.freeze_params:
                values[init.name] = const(arr)
            else:
                v = var(init.name, shape=arr.shape, dtype=str(arr.dtype))
                values[init.name] = v
                params[init.name] = _nd.array(arr)
                param_vars.append(v)
        input_vars = []
        for inp in graph.input:
            if inp.name in values:
                continue
            if is_bfloat16_type(inp.type):
                self.bfloat16_names.add(inp.name)
            if inp.name in self.bind_inputs:
                values[inp.name] = const(self.bind_inputs[inp.name])
                continue
            v = self._input_var(inp)
            values[inp.name] = v
            input_vars.append(v)
        self._convert_all(model, values, opset, unsupported_ops)
        outs = []
        for out in graph.output:
            if out.name not in values:
                raise InvalidModelError(f"from_onnx: graph output {out.name!r} is not produced by any node")
            outs.append(self.normalize(values[out.name]))
        body = outs[0] if len(outs) == 1 else Tuple(outs)
        func = Function(input_vars + param_vars, body)
        from ...transform import InferType
        if self._adt is None or not _uses_adts(func):
            return InferType()(IRModule.from_expr(func)), params
        mod = self._adt.mod
        mod["main"] = func
        return InferType()(mod), params

    def _input_var(self, inp):
        tt = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            return self._adt_input_var(inp)
        dtype = self.dtype.get(inp.name, "float32") if isinstance(self.dtype, dict) else self.dtype
        if is_bfloat16_type(inp.type):
            dtype = BFLOAT16_CARRIER
        elif tt.elem_type:
            declared = onnx_dtype(tt.elem_type, f"graph input {inp.name!r}")
            if not (isinstance(self.dtype, dict) and inp.name in self.dtype):
                dtype = declared
        if inp.name in self.shape:
            shape = self.shape[inp.name]
        elif tt.HasField("shape"):
            shape = tuple(int(d.dim_value) if d.HasField("dim_value") else Any() for d in tt.shape.dim)
            if any(not is_any(d) and d < 0 for d in shape):
                raise InvalidModelError(f"from_onnx: graph input {inp.name!r} declares a negative dimension "
                                        f"in its shape {shape}")
        else:
            raise InputError(f"from_onnx: graph input {inp.name!r} has no declared shape; pass "
                             f"shape={{{inp.name!r}: (...)}}")
        return var(inp.name, shape=shape, dtype=dtype)

    def _adt_input_var(self, inp):
        """The variable of a sequence- or optional-typed graph input (List[...] / Option[...])."""
        from .adt import onnx_value_type
        what = f"from_onnx: graph input {inp.name!r}"
        ty = onnx_value_type(lambda: self.adt, inp.type, what, self.shape.get(inp.name))
        if ty is None:
            raise UndeclaredElementShapeError(f"{what} is a sequence or optional whose element shape is not "
                                              f"declared; pass the element shape as shape={{{inp.name!r}: (...)}} "
                                              "(None for a dynamic dimension)")
        return var(inp.name, ty)

    def convert_subgraph(self, graph, outer_values, opset, input_exprs):
        """The output expressions of `graph` (an If branch, a Loop or SequenceMap body) with its
        inputs bound to `input_exprs`; names of the enclosing graphs (`outer_values`) are visible.

        Parameters
        ----------
        graph : onnx.GraphProto
            The subgraph converted.
        outer_values : Mapping
            Value name -> expression of the enclosing graphs, which the subgraph may read.
        opset : int
            The opset the model is imported with, which picks each converter's version.
        input_exprs : list of Expr
            The expressions bound to the subgraph's declared inputs, in order.

        Returns
        -------
        outputs : list of Expr
            One expression per output of the subgraph.
        """
        import collections
        check_node_schemas(graph, opset)
        values = collections.ChainMap({}, outer_values)
        for init in graph.initializer:
            values[init.name] = const(tensor_to_array(init, f"initializer {init.name!r} of subgraph {graph.name!r}"))
        if len(input_exprs) != len(graph.input):
            raise InvalidModelError(f"subgraph {graph.name!r} declares {len(graph.input)} inputs, but its node gives "
                                    f"it {len(input_exprs)}")
        for inp, expr in zip(graph.input, input_exprs):
            values[inp.name] = expr
        for node in graph.node:
            why = self.unsupported_reason(node, opset)
            if why is not None:
                raise OpNotImplemented(f"{node_where(node, opset)}: operator {why} is not supported (inside "
                                       f"subgraph {graph.name!r})")
            self._convert_node(node, values, opset)
        outs = []
        for out in graph.output:
            if out.name not in values or values[out.name] is None:
                raise InvalidModelError(f"subgraph {graph.name!r}: output {out.name!r} is not produced by any node")
            outs.append(self.normalize(values[out.name]))
        return outs

    def _convert_all(self, model, values, opset, unsupported_ops):
        """Convert every node; collect what is unsupported and raise it all at once.

        A node that cannot be converted (an unsupported op, attribute value or run-time input)
        is recorded, and its outputs become placeholder variables typed by ONNX shape inference
        (run in a child process, see inference.py), so the nodes after it are still checked. Their
        failures that may be consequences of the placeholder (a value or static shape that is
        unknown, a type error) are not reported separately but counted as unchecked; their
        unsupported attributes are reported."""
        failed, tainted = [], set()  # tainted: ONNX value names that derive from a placeholder
        unchecked, inferred = 0, None
        consumed = {name for node in model.graph.node for name in _reads(node)}
        for node in track(model.graph.node, desc="import ONNX", unit="node"):
            reads = _reads(node)
            is_tainted = any(n in tainted for n in reads if n)
            if any(n and n in values and values[n] is None for n in reads):
                unchecked += 1  # an input we could not even type: skip the node
                err = None
            elif (node.domain or "", node.op_type) in unsupported_ops:
                err = None
            else:
                try:
                    self._convert_node(node, values, opset)
                    if is_tainted:
                        tainted.update(n for n in node.output if n)
                    continue
                except OpNotImplemented as e:
                    err = e
                except Exception:  # noqa: BLE001 - after a placeholder input, any failure may be its fault
                    if not is_tainted:
                        raise
                    err = None
                if err is not None and is_tainted and isinstance(err, (DynamicInputError, DynamicShapeError)):
                    err = None
                if err is None:
                    unchecked += 1
                else:
                    failed.append(err)
            if not any(name in consumed for name in node.output if name):
                continue  # no later node reads its outputs: nothing to type
            if inferred is None:
                inferred = inferred_types(model)
            for name in node.output:
                if name:
                    values[name] = self._placeholder(name, inferred.get(name))
                    tainted.add(name)
        if not failed and not unsupported_ops:
            return
        if len(failed) == 1 and not unsupported_ops and not unchecked:
            raise failed[0]
        parts = []
        if unsupported_ops:
            parts.append(f"{len(unsupported_ops)} operator(s) in this model are not supported: "
                         + ", ".join(sorted(unsupported_ops.values())))
        if failed:
            parts.append(f"{len(failed)} node(s) use unsupported attributes or inputs:\n  - "
                         + "\n  - ".join(str(e) for e in failed))
        msg = "from_onnx: " + ";\n".join(parts)
        if unchecked:
            msg += (f"\n({unchecked} node(s) that depend on these could not be checked; more problems may "
                    "appear once these are fixed)")
        only_dynamic = not unsupported_ops and all(isinstance(e, DynamicInputError) for e in failed)
        raise (DynamicInputError if only_dynamic else OpNotImplemented)(msg)

    @staticmethod
    def _placeholder(name, tensor_type):
        """A variable standing for the output of a node that could not be converted (None: untyped)."""
        if tensor_type is None:
            return None
        shape, elem = tensor_type
        try:
            dtype = onnx_dtype(elem, name)
        except OpNotImplemented:
            return None
        return var(f"unconverted:{name}", shape=shape, dtype=dtype)

    def _convert_node(self, node, values, opset):
        conv = self.table[table_key(node)]
        where = node_where(node, opset)
        inputs = []
        for name in node.input:
            if name == "":
                inputs.append(None)
            elif name not in values:
                raise InvalidModelError(f"{where}: reads {name!r}, which no earlier node, initializer or graph "
                                        "input produces (is the graph topologically sorted?)")
            else:
                inputs.append(values[name])
        check_bfloat16_use(node, self.bfloat16_names, where)
        try:
            attrs = NodeAttrs(node)
            since = _schema_version(node.op_type, opset) if (node.domain or "") in DEFAULT_DOMAINS else 1
            ctx = NodeContext(self, node, attrs, opset, since, values)
            out = conv.fn(ctx, inputs)
            unread = attrs.unread()
            if unread:
                raise ctx.fail(f"attribute(s) {unread} are not supported by this importer")
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            outs = [self.normalize(o) if o is not None else None for o in outs]
            set_span(outs, node_span(node.name or f"{node.op_type}:{node.output[0]}"), inputs)
        except RelayError as err:
            if str(err).startswith(where):
                raise
            raise _prefixed(err, where) from err
        except (ArithmeticError, LookupError, TypeError, ValueError) as err:
            # the last line of defence: the schema check has passed, so a converter that still fails
            # like this met input values or attributes it did not expect; name the node, keep the cause
            raise InvalidModelError(f"{where}: cannot be converted ({type(err).__name__}: {err}); its input "
                                    "values or attributes are probably invalid for this operator") from err
        missing = [name for name in node.output[len(outs):] if name]
        if missing:
            raise OpNotImplemented(f"{where}: output(s) {missing} are not supported by this importer (it "
                                   f"produces the first {len(outs)})")
        if produces_bfloat16(node, self.bfloat16_names):
            self.bfloat16_names.update(name for name in node.output if name)
        for name, expr in zip(node.output, outs):
            if name:
                values[name] = expr


def model_opset(model) -> int:
    """The version of the default ONNX domain that `model` imports (1 when it names none)."""
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    return 1


def _is_const(e) -> bool:
    return isinstance(e, Constant) or (isinstance(e, Tuple) and all(_is_const(f) for f in e.fields))


def _uses_adts(func) -> bool:
    """Whether `func` builds, matches or takes ADT values or calls a global function (so it needs
    the module holding the Prelude), rather than being plain dataflow over tensors."""
    from ...ir.adt import Constructor, Match
    from ...ir.expr import GlobalVar
    from ...ir.functor import all_nodes_post_order
    from ...ir.types import TypeCall
    if any(isinstance(p.type_annotation, TypeCall) for p in func.params):
        return True
    return any(isinstance(node, (Constructor, GlobalVar, Match)) for node in all_nodes_post_order(func))


def _reads(node) -> list:
    """The value names `node` reads: its inputs and, for If / Loop / SequenceMap, every name the
    nodes of its subgraphs read (a subgraph may use the enclosing graphs' values by name)."""
    names = list(node.input)
    for attr in node.attribute:
        for graph in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
            names.extend(name for sub in _all_nodes(graph) for name in sub.input)
    return names


def _all_nodes(graph):
    """Every node, including those inside subgraph attributes (If / Loop bodies)."""
    for each in iter_graphs(graph):
        yield from each.node


def _prefixed(err, where: str):
    """`err` as the same kind of RelayError with `where` in front of its message (the nearest class of
    errors.py when its own class takes more than a message, like UnifyError)."""
    message = f"{where}: {err}"
    if not any("__init__" in vars(cls) for cls in type(err).__mro__ if cls.__module__ != "builtins"):
        return type(err)(message)
    for cls in type(err).__mro__:
        if cls.__module__ == RelayError.__module__ and issubclass(cls, RelayError):
            return cls(message)
    return RelayError(message)


def _check_static_size(ty, what: str):
    """check_tensor_size for every fully static tensor in `ty` (a TensorType or TupleType)."""
    for field in (ty.fields if isinstance(ty, TupleType) else [ty]):
        if isinstance(field, TensorType) and all(is_static(d) for d in field.shape):
            check_tensor_size(field.shape, field.dtype, what)


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params=True):
    """Convert an ONNX model to a Relay module and its params (tvm.relay.frontend.from_onnx).

    Invalid input raises a RelayError naming what is wrong: SerializationError for bytes that
    are not a model, InputError for a missing file or a bad argument, InvalidModelError (an
    InputError) for a model that breaks the ONNX standard, OpNotImplemented for what this
    importer does not support.

    Parameters
    ----------
    model : onnx.ModelProto or bytes or str or os.PathLike
        The model, its serialized bytes, or a path to it (external data files are read from
        the model's directory only).
    shape : dict of str to tuple, optional
        {input name: shape} overriding the shapes the model declares (needed for symbolic
        dims when shape-computing subgraphs must fold). Defaults to None.
    dtype : str or dict of str to str, optional
        The dtype of inputs without a declared type, for all or by input name. Defaults to
        "float32".
    opset : int, optional
        The opset to import with, overriding the model's; None (the default) uses the
        model's.
    freeze_params : bool, optional
        If True (the default), initializers become constants of main; if False, they become
        parameters of main, returned in `params`.

    Returns
    -------
    result : tuple
        (IRModule, params), params being {name: NDArray} (empty when frozen).
    """
    from .converters import CONVERTERS
    return OnnxImporter(CONVERTERS, shape, dtype, opset, freeze_params).import_model(model)
