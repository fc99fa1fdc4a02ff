"""Tensors and the operations that produce them: placeholder and compute (extern: te/extern.py).

A Tensor is output `value_index` of an Operation. `A[i, j]` builds a tir ProducerLoad, so a
compute's body is an ordinary tir expression over its axis Vars; lowering (te/lower.py)
turns those loads into BufferLoads.
"""
import inspect

from ..errors import CompileError
from ..tir import expr as E
from ..tir.functor import walk


class Tensor:
    """Output `value_index` of `op`, with `shape` (tuple of PrimExpr) and `dtype`."""
    __slots__ = ("op", "value_index", "shape", "dtype")

    def __init__(self, op, value_index, shape, dtype):
        self.op = op
        self.value_index = value_index
        self.shape = tuple(E.convert(s, "int32") for s in shape)
        self.dtype = dtype

    @property
    def name(self):
        return self.op.name if self.op.num_outputs == 1 else f"{self.op.name}.v{self.value_index}"

    @property
    def ndim(self):
        return len(self.shape)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        indices = tuple(i.var if isinstance(i, E.IterVar) else i for i in indices)
        if len(indices) != self.ndim:
            shape = tuple(map(str, self.shape))
            raise CompileError(f"tensor {self.name} of rank {self.ndim} (shape {shape}) indexed "
                               f"with {len(indices)} indices")
        return E.ProducerLoad(self, indices)

    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other

    def __repr__(self):
        return f"Tensor({self.name}, ({', '.join(map(str, self.shape))}), {self.dtype})"


class Operation:
    """Base of operations; `outputs` are its Tensors."""
    num_outputs = 1

    def output(self, k=0):
        return self.outputs[k]

    def input_tensors(self):
        return []


class PlaceholderOp(Operation):
    """An input: data supplied by the caller."""

    def __init__(self, name, shape, dtype):
        self.name = name
        self.tag = ""
        self.attrs = {}
        self.outputs = [Tensor(self, 0, shape, dtype)]

    @property
    def shape(self):
        return self.outputs[0].shape


class ComputeOp(Operation):
    """Element (axis vars) of output k = body[k]; body entries are all Reduce or none are."""

    def __init__(self, name, tag, attrs, axis, body):
        self.name = name
        self.tag = tag
        self.attrs = dict(attrs or {})
        self.axis = list(axis)
        self.set_body(body)
        shape = [iv.dom.extent for iv in self.axis]
        self.outputs = [Tensor(self, k, shape, b.dtype) for k, b in enumerate(self.body)]

    @property
    def num_outputs(self):
        return len(self.body)

    def set_body(self, body):
        body = list(body)
        reduces = [isinstance(b, E.Reduce) for b in body]
        if any(reduces) and not all(reduces):
            raise CompileError(f"compute {self.name}: a multi-output body must be all reductions "
                               "or none")
        for b in body:
            for n in walk(b):
                if isinstance(n, E.Reduce) and not any(n is x for x in body):
                    raise CompileError(
                        f"compute {self.name}: a reduction must be the whole body, not nested in "
                        f"`{b}`; compute the reduction in its own te.compute")
        if all(reduces) and body:
            first = body[0]
            if any(b.combiner is not first.combiner for b in body[1:]):
                raise CompileError(f"compute {self.name}: outputs reduce with different "
                                   "reducers; use one comm_reducer over a tuple")
            self.reduce_axis = list(first.axis)
        else:
            self.reduce_axis = []
        self.body = body

    @property
    def is_reduction(self):
        return bool(self.body) and isinstance(self.body[0], E.Reduce)

    def input_tensors(self):
        seen, out = set(), []
        for b in self.body:
            for n in walk(b):
                if isinstance(n, E.ProducerLoad) and id(n.producer) not in seen:
                    seen.add(id(n.producer))
                    out.append(n.producer)
        return out


def placeholder(shape, dtype="float32", name="placeholder") -> Tensor:
    """An input tensor of `shape` (ints or symbolic Vars from te.var)."""
    if isinstance(shape, (int, E.PrimExpr)):
        shape = (shape,)
    return PlaceholderOp(name, shape, dtype).outputs[0]


def _axis_names(fcompute, ndim):
    try:
        params = list(inspect.signature(fcompute).parameters.values())
    except (TypeError, ValueError):
        params = []
    required = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.default is p.empty]
    if len(required) == ndim:
        return [p.name for p in required], False
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return [f"i{k}" for k in range(ndim)], True
    raise CompileError(f"te.compute: fcompute takes {len(required)} arguments but the shape has "
                       f"{ndim} dimensions; take one index per dimension (or *indices)")


def compute(shape, fcompute, name="compute", tag="", attrs=None):
    """A tensor whose element at index vars (i, j, ...) is fcompute(i, j, ...).

    fcompute may return a tuple for several outputs (then a list of Tensors is returned).
    """
    if isinstance(shape, (int, E.PrimExpr)):
        shape = (shape,)
    shape = [E.convert(s, "int32") for s in shape]
    names, _ = _axis_names(fcompute, len(shape))
    axis = [E.IterVar(E.Range(0, s), E.Var(n, "int32"), "data") for n, s in zip(names, shape)]
    result = fcompute(*[iv.var for iv in axis])
    body = list(result) if isinstance(result, (tuple, list)) else [result]
    body = [E.convert(b) for b in body]
    op = ComputeOp(name, tag, attrs, axis, body)
    return op.outputs if len(op.outputs) > 1 else op.outputs[0]
