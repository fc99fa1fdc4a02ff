"""Whether a primitive function only concatenates its parameters (for in-place concatenation).

The graph executor and AOT (te_compiler/inplace_concat.py) and the VM (vm/site_plan.py) let the
producers of such a concatenation's inputs write straight into their slices of its output; this
module only recognises the function: nested concatenations along one axis of the parameters, in
order, or one concatenation of a tuple parameter.
"""
from ..ir.expr import Call, Tuple
from ..ir.types import TensorType, TupleType
from ..op.registry import OpDef

CONCATENATE = "concatenate"


def pure_concatenation(prim):
    """(axis, number of input tensors) when the primitive function `prim` only concatenates its
    parameters' tensors, in order, along `axis` (its inputs flattened, a tuple parameter's fields
    one by one, as executors pass them); else None."""
    axis = _concat_axis(prim)
    return None if axis is None else (axis, _leaf_count(prim))


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


__all__ = ["pure_concatenation", "CONCATENATE"]
