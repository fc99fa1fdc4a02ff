"""Shape functions of primitive functions with dynamic (Any or symbolic) dims: a small shape
interpreter.

A ShapeProgram is the primitive's body flattened into nodes (parameters, constants, op calls,
tuples, tuple projections). Running it replays each op's type relation `op.rel(arg_types,
attrs)` on concrete TensorTypes built from the run-time input shapes, which is exactly the
op's shape function for data-independent ops. An op that declares `shape_func(attrs,
input_arrays) -> Type` (a data-dependent output shape) is given the input *data* instead; such
an op's inputs must be parameters of the primitive (their state is then "data", else "shape").

Programs serialize to JSON (op names, attrs as plain values), so an Executable carries them
without pickle; the VM calls one through InvokePacked like a kernel:
`program(*input_shapes_or_data, *out_shapes, *out_nbytes)` fills int64 tensors in place.

A *shape check* is the same program with `expected` output shapes: the kernel of a primitive
whose inputs have `Any` dims but whose output is static was compiled for one output shape and
reads its inputs by that shape, so before it runs the VM calls `check(*input_tensors)` (no
outputs), which replays the relations on the inputs' real shapes and raises InputError when
an op rejects them or the output shape differs from the compiled one.
"""
import dataclasses

import numpy as np

from ..errors import CompileError, ExecutionError, InputError, RelayError, SerializationError
from ..ir.expr import Call, Constant, Tuple, TupleGetItem, Var
from ..ir.functor import post_order
from ..ir.types import TensorType, TupleType, type_to_str
from ..op.registry import OpDef, get as get_op
from .bytecode import SUPPORTED_DTYPES

STATE_DATA, STATE_SHAPE = 1, 2


def flatten_types(ty) -> list:
    if isinstance(ty, TensorType):
        return [ty]
    if isinstance(ty, TupleType):
        return [t for f in ty.fields for t in flatten_types(f)]
    raise CompileError(f"the VM can pass only tensors and tuples of tensors to kernels, got {type_to_str(ty)}")


def _template(ty, counter) -> object:
    """The nesting of a param type with flat input indices at the leaves: 3 or [3, [4, 5]]."""
    if isinstance(ty, TensorType):
        counter[0] += 1
        return counter[0] - 1
    return [_template(f, counter) for f in ty.fields]


# ------------------------------------------------------------------ attrs as JSON values

def _encode_value(v, where):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    if isinstance(v, (tuple, list)):
        return [_encode_value(x, where) for x in v]
    raise CompileError(f"{where}: attribute value {v!r} ({type(v).__name__}) cannot be stored in a VM "
                       f"shape function")


def _decode_value(v):
    return tuple(_decode_value(x) for x in v) if isinstance(v, list) else v


def encode_attrs(attrs, where) -> object:
    if attrs is None:
        return None
    if not dataclasses.is_dataclass(attrs):
        raise CompileError(f"{where}: attrs {attrs!r} are not a dataclass and cannot be serialized")
    return {f.name: _encode_value(getattr(attrs, f.name), where) for f in dataclasses.fields(attrs)}


def decode_attrs(op: OpDef, data):
    if data is None:
        return None
    if op.attrs_type is None or not isinstance(data, dict):
        raise SerializationError(f"shape function: attrs {data!r} do not fit op {op.name}")
    try:
        return op.attrs_type(**{k: _decode_value(v) for k, v in data.items()})
    except (TypeError, ValueError, RelayError) as err:
        raise SerializationError(f"shape function: bad attrs {data!r} for {op.name}: {err}") from err


# ------------------------------------------------------------------ the program

class ShapeProgram:
    """Output shapes of one primitive function as a function of its input shapes (or data)."""

    def __init__(self, name, input_dtypes, input_states, nodes, outputs, expected=None):
        self.name = name
        self.input_dtypes = list(input_dtypes)     # per flat input
        self.input_states = list(input_states)     # STATE_SHAPE or STATE_DATA per flat input
        self.nodes = nodes                         # list of tuples, see from_function
        self.outputs = outputs                     # node index of the body
        # a shape check: the static flat output shapes the kernel was compiled for (else None)
        self.expected = None if expected is None else [tuple(int(d) for d in e) for e in expected]
        self._ops = {}

    @staticmethod
    def from_function(func, name: str, expected=None) -> "ShapeProgram":
        """Flatten a typed primitive function's body into shape-program nodes (a shape check when
        `expected`, the static flat output shapes, is given)."""
        index, nodes, dtypes, states = {}, [], [], []
        counter = [0]
        for p in func.params:
            ty = p.checked_type if p._checked_type_ is not None else p.type_annotation
            flat = flatten_types(ty)
            dtypes.extend(t.dtype for t in flat)
            states.extend(STATE_SHAPE for _ in flat)
            index[p] = len(nodes)
            nodes.append(("param", _template(ty, counter)))
        for node in post_order(func.body):
            if node in index:
                continue
            if isinstance(node, Constant):
                nodes.append(("const", list(node.data.shape), node.data.dtype))
            elif isinstance(node, Tuple):
                nodes.append(("tuple", [index[f] for f in node.fields]))
            elif isinstance(node, TupleGetItem):
                nodes.append(("get", index[node.tuple_value], node.index))
            elif isinstance(node, Call) and isinstance(node.op, OpDef):
                op = node.op
                if op.shape_func is not None:
                    for a in node.args:
                        if not (isinstance(a, Var) and a in func.params):
                            raise CompileError(f"{name}: {op.name} has a data-dependent output shape, so "
                                               f"its inputs must be inputs of the fused function; run "
                                               f"FuseOps so that {op.name} starts its group")
                        tmpl = nodes[index[a]][1]
                        for k in (tmpl if isinstance(tmpl, list) else [tmpl]):
                            states[k] = STATE_DATA
                nodes.append(("call", op.name, encode_attrs(node.attrs, f"{name}: {op.name}"),
                              [index[a] for a in node.args]))
            elif isinstance(node, Var):
                raise CompileError(f"{name}: free variable %{node.name_hint} in a primitive function")
            else:
                raise CompileError(f"{name}: cannot compute shapes through a {type(node).__name__}")
            index[node] = len(nodes) - 1
        return ShapeProgram(name, dtypes, states, nodes, index[func.body], expected)

    # -- running
    def _op(self, name):
        op = self._ops.get(name)
        if op is None:
            op = self._ops[name] = get_op(name)
        return op

    def output_types(self, inputs) -> list:
        """Flat output TensorTypes for flat inputs (shape tuples, or arrays for data inputs)."""
        values = []
        for node in self.nodes:
            kind = node[0]
            if kind == "param":
                values.append(self._param(node[1], inputs))
            elif kind == "const":
                values.append(TensorType(tuple(node[1]), node[2]))
            elif kind == "tuple":
                values.append(TupleType([values[i] for i in node[1]]))
            elif kind == "get":
                values.append(values[node[1]].fields[node[2]])
            else:
                values.append(self._call(node, values, inputs))
        outs = flatten_types(values[self.outputs])
        for t in outs:
            if t.is_dynamic:
                raise ExecutionError(f"{self.name}: output shape {type_to_str(t)} is still unknown for "
                                     f"inputs {self._describe(inputs)}; the op needs a shape_func")
        return outs

    def _param(self, tmpl, inputs):
        if isinstance(tmpl, list):
            return TupleType([self._param(t, inputs) for t in tmpl])
        value = inputs[tmpl]
        shape = value.shape if self.input_states[tmpl] == STATE_DATA else value
        return TensorType(tuple(int(d) for d in shape), self.input_dtypes[tmpl])

    def _call(self, node, values, inputs):
        _, op_name, attrs_json, args = node
        op = self._op(op_name)
        attrs = decode_attrs(op, attrs_json)
        if op.shape_func is not None:
            data = [inputs[self.nodes[i][1]] for i in args]
            return op.shape_func(attrs, data)
        try:
            return op.rel([values[i] for i in args], attrs)
        except RelayError as err:
            raise InputError(f"{self.name}: {op_name} rejects the run-time input shapes "
                             f"{self._describe(inputs)}: {err}") from err

    def _describe(self, inputs) -> str:
        return ", ".join(str(tuple(v.shape) if s == STATE_DATA else tuple(v))
                         for v, s in zip(inputs, self.input_states))

    def __call__(self, *args):
        """VM calling convention: inputs (shape tensors or data), then out shapes, out sizes.

        A shape check takes the input tensors themselves and nothing else."""
        try:
            if self.expected is not None:
                self._check(args)
            else:
                self._fill(args)
        except RelayError:
            raise
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as err:
            raise ExecutionError(f"{self.name}: the shape function failed on its arguments "
                                 f"({type(err).__name__}: {err})") from err

    def _fill(self, args) -> None:
        n = len(self.input_states)
        ins = [a.view_numpy() if s == STATE_DATA else tuple(int(d) for d in a.view_numpy())
               for a, s in zip(args[:n], self.input_states)]
        outs = self.output_types(ins)
        m = len(outs)
        if len(args) != n + 2 * m:
            raise ExecutionError(f"{self.name}: expected {n} inputs and {2 * m} outputs, got {len(args)} arguments")
        for t, shape_out, size_out in zip(outs, args[n:n + m], args[n + m:]):
            dst = shape_out.view_numpy()
            if dst.shape != (len(t.shape),):
                raise ExecutionError(f"{self.name}: output rank {len(t.shape)} does not match the "
                                     f"allocated shape tensor {dst.shape}")
            dst[...] = t.shape
            size_out.view_numpy()[...] = int(np.prod(t.shape, dtype=np.int64)) * np.dtype(t.dtype).itemsize

    def _check(self, args) -> None:
        n = len(self.input_states)
        if len(args) != n:
            raise InputError(f"{self.name}: expected {n} input tensors, got {len(args)} arguments")
        ins = []
        for i, (a, s) in enumerate(zip(args, self.input_states)):
            shape = getattr(a, "shape", None)
            if shape is None:
                raise InputError(f"{self.name}: input {i} is a {type(a).__name__}, not a tensor")
            ins.append(a.view_numpy() if s == STATE_DATA else tuple(int(d) for d in shape))
        outs = self.output_types(ins)
        got = [tuple(int(d) for d in t.shape) for t in outs]
        if got != self.expected:
            show = (lambda shapes: ", ".join(str(s) for s in shapes))
            raise InputError(f"{self.name}: the run-time input shapes {self._describe(ins)} give output "
                             f"shape(s) {show(got)}, but the kernel was compiled for {show(self.expected)}")

    # -- serialization
    def to_json(self) -> dict:
        out = {"name": self.name, "input_dtypes": self.input_dtypes, "input_states": self.input_states,
               "nodes": [list(n) for n in self.nodes], "outputs": self.outputs}
        if self.expected is not None:
            out["expected"] = [list(e) for e in self.expected]
        return out

    @staticmethod
    def from_json(obj) -> "ShapeProgram":
        """A program from its JSON form; every node is validated (kinds, node and input indices in
        range and pointing backwards, known ops, attrs, supported dtypes), so a running program
        never indexes outside its own tables."""
        try:
            states = [int(s) for s in obj["input_states"]]
            dtypes = [str(d) for d in obj["input_dtypes"]]
            if len(states) != len(dtypes) or any(s not in (STATE_DATA, STATE_SHAPE) for s in states):
                raise ValueError("input_states / input_dtypes do not match")
            for d in dtypes:
                _check_dtype(d)
            nodes = [tuple(n) for n in obj["nodes"]]
            for k, n in enumerate(nodes):
                _check_node(k, n, len(states))
            expected = obj.get("expected")
            if expected is not None:
                expected = [[_nonneg(d, "expected dim") for d in e] for e in expected]
            prog = ShapeProgram(str(obj["name"]), dtypes, states, nodes, int(obj["outputs"]), expected)
            if not 0 <= prog.outputs < len(nodes):
                raise ValueError("output index out of range")
            return prog
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, RelayError) as err:
            raise SerializationError(f"malformed VM shape function {str(obj)[:200]}: {err}") from err


def _nonneg(v, what) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ValueError(f"{what} {v!r} is not a non-negative int")
    return v


def _check_dtype(d) -> None:
    if d not in SUPPORTED_DTYPES:
        raise ValueError(f"dtype {d!r} is not one of {sorted(SUPPORTED_DTYPES)}")


def _check_template(tmpl, n_inputs) -> None:
    if isinstance(tmpl, list):
        for t in tmpl:
            _check_template(t, n_inputs)
    elif _nonneg(tmpl, "input index") >= n_inputs:
        raise ValueError(f"input index {tmpl} out of range ({n_inputs} inputs)")


def _check_node(k: int, node: tuple, n_inputs: int) -> None:
    """ValueError unless node `k` is well formed and refers only to earlier nodes."""
    def earlier(i):
        if _nonneg(i, "node index") >= k:
            raise ValueError(f"node {k} refers to node {i}, which does not precede it")
        return i
    kind = node[0] if node else None
    if kind == "param" and len(node) == 2:
        _check_template(node[1], n_inputs)
    elif kind == "const" and len(node) == 3:
        for d in node[1]:
            _nonneg(d, "const dim")
        _check_dtype(node[2])
    elif kind == "tuple" and len(node) == 2:
        for i in node[1]:
            earlier(i)
    elif kind == "get" and len(node) == 3:
        earlier(node[1])
        _nonneg(node[2], "field index")
    elif kind == "call" and len(node) == 4:
        op = get_op(node[1])
        decode_attrs(op, node[2])
        for i in node[3]:
            earlier(i)
    else:
        raise ValueError(f"node {k} {str(node)[:80]} is not a known node kind with its fields")


__all__ = ["ShapeProgram", "flatten_types", "STATE_DATA", "STATE_SHAPE"]
