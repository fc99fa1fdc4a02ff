"""te.extern: a stage whose body is a tir statement written by hand (TVM's te.extern), for
kernels that are not one expression per output element: sorts, greedy suppression, scans and
compactions (the vision ops). fcompute(input_buffers, output_buffers) -> Stmt, usually built
with tir.ir_builder.

Lowering (te/lower.py) gives the stage's placeholder buffers the real buffers of its inputs
and outputs; its inputs are always materialized (a schedule cannot inline a stage an extern
reads from memory), and schedules leave the stage alone (it is not a ComputeOp).
"""
from ..errors import CompileError
from ..tir.buffer import Buffer
from ..tir.stmt import Stmt
from .tensor import Operation, Tensor


class ExternOp(Operation):
    """Outputs computed by `body`, which reads `input_placeholders` and writes
    `output_placeholders` (Buffers standing for the inputs' and outputs' memory)."""

    def __init__(self, name, tag, attrs, inputs, input_placeholders, output_placeholders, body):
        self.name = name
        self.tag = tag
        self.attrs = dict(attrs or {})
        self.inputs = list(inputs)
        self.input_placeholders = list(input_placeholders)
        self.output_placeholders = list(output_placeholders)
        self.body = body
        self.outputs = [Tensor(self, k, b.shape, b.dtype) for k, b in enumerate(self.output_placeholders)]

    @property
    def num_outputs(self):
        return len(self.outputs)

    def input_tensors(self):
        return list(self.inputs)


def extern(shape, inputs, fcompute, name="extern", dtype=None, tag="", attrs=None):
    """Tensor(s) of `shape` (one shape, or a list for several outputs) computed by the statement
    fcompute(input_buffers, output_buffers); `dtype` is one dtype or one per output (default:
    the first input's)."""
    multi = bool(shape) and isinstance(shape[0], (list, tuple))
    shapes = list(shape) if multi else [shape]
    if dtype is None:
        if not inputs:
            raise CompileError(f"te.extern {name}: give dtype= when there are no inputs")
        dtype = inputs[0].dtype
    dtypes = list(dtype) if isinstance(dtype, (list, tuple)) else [dtype] * len(shapes)
    if len(dtypes) != len(shapes):
        raise CompileError(f"te.extern {name}: {len(shapes)} output shapes but {len(dtypes)} dtypes")
    in_bufs = [Buffer(f"{name}_in{k}", t.shape, t.dtype) for k, t in enumerate(inputs)]
    out_bufs = [Buffer(f"{name}_out{k}", s, d) for k, (s, d) in enumerate(zip(shapes, dtypes))]
    body = fcompute(in_bufs, out_bufs)
    if not isinstance(body, Stmt):
        raise CompileError(f"te.extern {name}: fcompute must return a tir statement, got {type(body).__name__}")
    op = ExternOp(name, tag, attrs, inputs, in_bufs, out_bufs, body)
    return op.outputs if multi else op.outputs[0]


__all__ = ["ExternOp", "extern"]
