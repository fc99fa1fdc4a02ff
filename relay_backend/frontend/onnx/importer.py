"""from_onnx: an ONNX ModelProto -> (IRModule, params), as tvm.relay.frontend.from_onnx.

The importer walks the (topologically sorted) graph once. Every expression a converter builds is
typed as it is made, with the ops' own type relations, and any call whose arguments are all
constants is folded right away with the ops' numpy references (transform.fold_constant's
evaluate_call). So shape-computing subgraphs (Shape -> Gather -> Concat -> Reshape) become
constants when input shapes are static, and converters can read the values they need.
"""
import numpy as np

from ...errors import InputError, OpNotImplemented, RelayError, TypeInferenceError
from ...ir.expr import Call, Constant, Function, Tuple, TupleGetItem, Var, var
from ...ir.module import IRModule
from ...ir.types import Any, TensorType, TupleType
from ...op.registry import OpDef
from ...runtime import ndarray as _nd
from ...transform.fold_constant import evaluate_call, is_foldable_op
from .common import NodeAttrs, NodeContext, const, onnx_dtype

MIN_OPSET = 1  # per-op limits live in the converter table (e.g. broadcasting binary ops need 7+)


class Converter:
    """One table row: the function and the schema versions (since_version) it implements."""

    def __init__(self, fn, min_version: int = 1, max_version: int = 22):
        self.fn, self.min_version, self.max_version = fn, min_version, max_version


def _schema_version(op_type: str, opset: int):
    import onnx
    try:
        return onnx.defs.get_schema(op_type, opset, "").since_version
    except Exception:  # onnx.defs.SchemaError: no such op at this opset
        return None


class OnnxImporter:
    """Holds the value table (ONNX name -> relay Expr) and the typing/folding memo."""

    def __init__(self, table, shape=None, dtype="float32", opset=None, freeze_params=True, bind_inputs=None):
        self.table = table
        self.bind_inputs = dict(bind_inputs or {})  # graph input name -> value, imported as a constant
        self.shape = dict(shape or {})
        self.dtype = dtype
        self.opset_override = opset
        self.freeze_params = freeze_params
        self._memo = {}  # id(expr) -> (expr, normalized expr, type); holding expr keeps the id alive

    # --- typing and folding ----------------------------------------------------------------------
    def normalize(self, expr):
        """`expr` with constant calls folded (memoized); its type is recorded too."""
        return self._visit(expr)[0]

    def type_of(self, expr):
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
            if is_foldable_op(e.op) and all(_is_const(k) for k in kids):
                folded = evaluate_call(new)
                if folded is not None:
                    return folded, self._visit(folded)[1] if not isinstance(folded, Constant) else \
                        TensorType(folded.data.shape, folded.data.dtype)
            ty = e.op.rel(kid_types, e.attrs)
            return new, ty
        raise RelayError(f"ONNX importer: cannot type an expression of kind {type(e).__name__}")

    # --- the model -----------------------------------------------------------------------------
    def _opset(self, model) -> int:
        if self.opset_override is not None:
            return int(self.opset_override)
        for imp in model.opset_import:
            if imp.domain in ("", "ai.onnx"):
                return int(imp.version)
        return MIN_OPSET if not model.opset_import else 1

    def check_supported(self, graph, opset: int) -> None:
        """One OpNotImplemented naming every unsupported op (and opset) of the model at once."""
        if opset < MIN_OPSET:
            raise OpNotImplemented(f"from_onnx: the model uses ONNX opset {opset}; supported opsets are "
                                   f"{MIN_OPSET} and later (convert it with onnx.version_converter)")
        problems = {}
        for node in _all_nodes(graph):
            key = (node.domain or "", node.op_type)
            if key in problems:
                continue
            if node.domain not in ("", "ai.onnx"):
                problems[key] = f"{node.domain}.{node.op_type} (custom domain {node.domain!r})"
                continue
            conv = self.table.get(node.op_type)
            since = _schema_version(node.op_type, opset)
            if conv is None:
                problems[key] = node.op_type
            elif since is None:
                problems[key] = f"{node.op_type} (not defined at opset {opset})"
            elif not conv.min_version <= since <= conv.max_version:
                problems[key] = (f"{node.op_type} (opset {opset} uses version {since}; supported versions "
                                 f"{conv.min_version}..{conv.max_version})")
        if problems:
            raise OpNotImplemented(f"from_onnx: {len(problems)} operator(s) in this model are not supported: "
                                   + ", ".join(sorted(problems.values())))

    def import_model(self, model):
        import onnx
        from onnx import numpy_helper
        if isinstance(model, (str, bytes)) and not isinstance(model, onnx.ModelProto):
            model = onnx.load(model) if isinstance(model, str) else onnx.load_from_string(model)
        if not isinstance(model, onnx.ModelProto):
            raise InputError(f"from_onnx: expected an onnx.ModelProto (or a path), got {type(model).__name__}")
        graph = model.graph
        opset = self._opset(model)
        self.check_supported(graph, opset)
        values, params, param_vars = {}, {}, []
        for init in graph.initializer:
            arr = numpy_helper.to_array(init)
            onnx_dtype(init.data_type, f"initializer {init.name!r}")
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
            if inp.name in self.bind_inputs:
                values[inp.name] = const(self.bind_inputs[inp.name])
                continue
            v = self._input_var(inp)
            values[inp.name] = v
            input_vars.append(v)
        for node in graph.node:
            self._convert_node(node, values, opset)
        outs = []
        for out in graph.output:
            if out.name not in values:
                raise InputError(f"from_onnx: graph output {out.name!r} is not produced by any node")
            outs.append(self.normalize(values[out.name]))
        body = outs[0] if len(outs) == 1 else Tuple(outs)
        func = Function(input_vars + param_vars, body)
        from ...transform import InferType
        return InferType()(IRModule.from_expr(func)), params

    def _input_var(self, inp):
        tt = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            raise OpNotImplemented(f"from_onnx: graph input {inp.name!r} is not a tensor "
                                   "(sequences, maps and optionals are not supported)")
        dtype = self.dtype.get(inp.name, "float32") if isinstance(self.dtype, dict) else self.dtype
        if tt.elem_type:
            declared = onnx_dtype(tt.elem_type, f"graph input {inp.name!r}")
            if not (isinstance(self.dtype, dict) and inp.name in self.dtype):
                dtype = declared
        if inp.name in self.shape:
            shape = tuple(int(d) if d is not None and int(d) >= 0 else Any() for d in self.shape[inp.name])
        elif tt.HasField("shape"):
            shape = tuple(int(d.dim_value) if d.HasField("dim_value") else Any() for d in tt.shape.dim)
        else:
            raise InputError(f"from_onnx: graph input {inp.name!r} has no declared shape; pass "
                             f"shape={{{inp.name!r}: (...)}}")
        return var(inp.name, shape=shape, dtype=dtype)

    def _convert_node(self, node, values, opset):
        conv = self.table[node.op_type]
        inputs = []
        for name in node.input:
            if name == "":
                inputs.append(None)
            elif name not in values:
                raise InputError(f"from_onnx: node {node.name or node.op_type!r} reads {name!r}, which no "
                                 "earlier node or graph input produces (is the graph topologically sorted?)")
            else:
                inputs.append(values[name])
        attrs = NodeAttrs(node)
        ctx = NodeContext(self, node, attrs, opset, _schema_version(node.op_type, opset))
        try:
            out = conv.fn(ctx, inputs)
            unread = attrs.unread()
            if unread:
                raise ctx.fail(f"attribute(s) {unread} are not supported by this importer")
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            outs = [self.normalize(o) if o is not None else None for o in outs]
        except TypeInferenceError as err:
            raise TypeInferenceError(f"{ctx.where()}: {err}") from err
        for name, expr in zip(node.output, outs):
            if name:
                values[name] = expr


def _is_const(e) -> bool:
    return isinstance(e, Constant) or (isinstance(e, Tuple) and all(_is_const(f) for f in e.fields))


def _all_nodes(graph):
    """Every node, including those inside subgraph attributes (If / Loop bodies)."""
    stack = list(graph.node)
    while stack:
        node = stack.pop()
        yield node
        for a in node.attribute:
            if a.HasField("g"):
                stack.extend(a.g.node)
            stack.extend(n for g in a.graphs for n in g.node)


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params=True):
    """Convert an ONNX model to (IRModule, params), as tvm.relay.frontend.from_onnx.

    shape: {input name: shape} overrides the declared shapes (needed for symbolic dims when
    shape-computing subgraphs must fold); dtype: str or {input name: dtype} for inputs without
    a declared type; opset: override the model's opset; freeze_params: initializers become
    constants (True) or parameters of main returned in `params` (False).
    """
    from .converters import CONVERTERS
    return OnnxImporter(CONVERTERS, shape, dtype, opset, freeze_params).import_model(model)
