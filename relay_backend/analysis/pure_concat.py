"""Whether a primitive function only concatenates its parameters (for in-place concatenation).

The graph executor and AOT (te_compiler/inplace_concat.py) and the VM (vm/site_plan.py) let the
producers of such a concatenation's inputs write straight into their slices of its output; this
module recognises the function (nested concatenations along one axis of the parameters, in
order, or one concatenation of a tuple parameter) and gives the slices its inputs would occupy
in its output (`slice_offsets`), the layout rule both executors apply.
"""
import math

from ..ir.expr import Call, Tuple
from ..ir.types import TensorType, TupleType
from ..op.registry import OpDef
from ..runtime.ndarray import ALIGNMENT

CONCATENATE = "concatenate"


def pure_concatenation(prim):
    """(axis, number of input tensors) when the primitive function `prim` only concatenates its
    parameters' tensors, in order, along `axis` (its inputs flattened, a tuple parameter's fields
    one by one, as executors pass them); else None."""
    axis = _concat_axis(prim)
    return None if axis is None else (axis, _leaf_count(prim))


def slice_offsets(out, axis: int, parts) -> list:
    """The byte offset of each input's slice in the output when concatenating `parts` ((shape,
    dtype, nbytes) per input, in order) along `axis` into `out` (shape, dtype, nbytes) lays the
    inputs back to back in its bytes, each starting ALIGNMENT-aligned (kernels
    take aligned buffers): every axis before `axis` has extent 1, every input has the output's
    dtype and rank and its extents off `axis`, and the inputs fill the output exactly; else None
    (the concatenation must copy)."""
    out_shape, out_dtype, out_bytes = out
    out_shape, rank = tuple(int(d) for d in out_shape), len(out_shape)
    if not rank:
        return None
    axis %= rank
    if math.prod(out_shape[:axis]) != 1:
        return None
    offsets, extent, start = [], 0, 0
    for shape, dtype, nbytes in parts:
        shape = tuple(int(d) for d in shape)
        if str(dtype) != str(out_dtype) or len(shape) != rank or shape[:axis] != out_shape[:axis] or \
                shape[axis + 1:] != out_shape[axis + 1:] or start % ALIGNMENT:
            return None
        offsets.append(start)
        start += int(nbytes)
        extent += shape[axis]
    return offsets if extent == out_shape[axis] and start == int(out_bytes) else None


def _concat_axis(prim):
    """The concatenation axis when `prim` only concatenates its parameters, in order: nested
    concatenations along one axis (they lay their operands back to back all the same) of the
    parameters, or one concatenation of its one tuple parameter (unfused code); else None."""
    body = prim.body
    if not isinstance(body.checked_type, TensorType):
        return None
    rank = len(body.checked_type.shape)
    if _is_concat(body) and len(prim.params) == 1 and body.args[0] is prim.params[0] and \
            isinstance(prim.params[0].checked_type, TupleType) and len(prim.params[0].checked_type.fields) > 1:
        return int(body.attrs.axis) % rank
    leaves, axes, stack = [], set(), [body]
    while stack:
        node = stack.pop()
        if _is_concat(node) and isinstance(node.args[0], Tuple):
            axes.add(int(node.attrs.axis) % rank)
            stack.extend(reversed(node.args[0].fields))
        else:
            leaves.append(node)
    if len(axes) != 1 or len(leaves) < 2 or len(leaves) != len(prim.params) or \
            any(leaf is not param for leaf, param in zip(leaves, prim.params)):
        return None
    return axes.pop()


def _is_concat(node) -> bool:
    return isinstance(node, Call) and isinstance(node.op, OpDef) and node.op.name == CONCATENATE \
        and len(node.args) == 1


def _leaf_count(prim) -> int:
    """How many tensors the parameters of `prim` hold (a tuple parameter holds its fields)."""
    count = 0
    for param in prim.params:
        ty = param.checked_type
        count += len(ty.fields) if isinstance(ty, TupleType) and \
            all(isinstance(f, TensorType) for f in ty.fields) else 1
    return count


__all__ = ["slice_offsets", "pure_concatenation", "CONCATENATE"]
