"""Checking an operator's output size before its numpy reference allocates it.

FoldConstant and the debug interpreter run `op.ref` on shapes the program chose: `ones((2**20,
2**20))` type-checks but asks numpy for 4 TiB, which raises a bare MemoryError or, where the OS
overcommits, gets the process killed while the array is filled. `check_output_size` takes each
output's shape from the op's type relation (which doubles as its shape function) and checks it
with runtime.limits.check_tensor_size first, so the user gets an AllocationError naming the op.
"""
from ..errors import RelayError
from ..ir.types import TensorType, TupleType
from ..runtime.limits import check_tensor_size


def tensor_types(ty) -> list:
    """The TensorTypes of a (nested) tuple type, in order; other types hold no tensor we allocate."""
    out, stack = [], [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TensorType):
            out.append(t)
        elif isinstance(t, TupleType):
            stack.extend(reversed(t.fields))
    return out


def check_output_size(op, out_type, where: str) -> None:
    """AllocationError naming `where` and `op` if an output of type `out_type` is over the limit
    (outputs with dynamic (symbolic or Any) dims, or an unknown type (None), are skipped: no size
    is known yet; the concrete output is checked where it is allocated)."""
    tensors = tensor_types(out_type) if out_type is not None else []
    for i, ty in enumerate(tensors):
        if not ty.is_dynamic:
            which = "the output" if len(tensors) == 1 else f"output {i}"
            check_tensor_size(ty.shape, ty.dtype, f"{where}: {which} of {op.name}")


def output_type_from_args(op, arg_types, attrs):
    """The output type the op's relation gives for concrete argument types, or None if unknown."""
    if any(t is None for t in arg_types):
        return None
    try:
        return op.rel(arg_types, attrs)
    except RelayError:
        return None    # ill-typed: the reference or the caller reports it with more context


__all__ = ["check_output_size", "output_type_from_args", "tensor_types"]
