"""ONNX bfloat16 tensors, as onnx's numpy_helper hands them over: uint16 arrays holding the bit
patterns (the top 16 bits of the float32 value).

Relay has no bfloat16 arithmetic here, so such a tensor is only carried and converted: a bfloat16
graph input becomes a uint16 variable, Cast / CastLike convert bfloat16 bits to float32 and back
(float32 -> bfloat16 keeps the top 16 bits, i.e. truncates toward zero, as ONNX's reference and node
tests do for opsets up to 22, whose Cast spec names no rounding for bfloat16; onnxruntime and TVM
round to nearest even instead; NaN always becomes the quiet NaN 0x7FC0, never an infinity)
and Identity passes them on. Any other op reading a bfloat16 value is refused with OpNotImplemented
before it runs, so the bits are never used as integers. The importer tracks bfloat16 values by
their ONNX names.
"""
import numpy as np

from ... import op as _op
from ...errors import OpNotImplemented
from .common import const

BFLOAT16 = 16          # onnx.TensorProto.BFLOAT16
CARRIER = "uint16"     # the dtype of the bits in Relay
PASS_THROUGH = ("Cast", "CastLike", "Identity")


def is_bfloat16_type(type_proto) -> bool:
    """Whether an ONNX TypeProto is a bfloat16 tensor."""
    return type_proto.HasField("tensor_type") and type_proto.tensor_type.elem_type == BFLOAT16


def to_float32(bits):
    """float32 values of bfloat16 bits (exact: the bits are the float32's top half)."""
    return _op.reinterpret(_op.left_shift(_op.cast(bits, "uint32"), const(np.uint32(16))), "float32")


def from_float32(values):
    """bfloat16 bits of float32 values: the top 16 bits (truncation); NaN -> 0x7FC0."""
    top = _op.right_shift(_op.reinterpret(values, "uint32"), const(np.uint32(16)))
    return _op.where(_op.isnan(values), const(np.uint16(0x7FC0)), _op.cast(top, CARRIER))


def check_use(node, bfloat16_names, where: str):
    """Refuse a node other than Cast / CastLike / Identity that reads a bfloat16 value."""
    read = [name for name in node.input if name in bfloat16_names]
    if read and node.op_type not in PASS_THROUGH:
        raise OpNotImplemented(f"{where}: reads bfloat16 tensor(s) {read}; bfloat16 is supported only as the "
                               f"input or output of {', '.join(PASS_THROUGH)}; cast it to float32 first")


def produces_bfloat16(node, bfloat16_names) -> bool:
    """Whether `node`'s output is a bfloat16 value (a Cast to it, a CastLike of one, an Identity of one)."""
    if node.op_type == "Cast":
        return any(a.name == "to" and a.i == BFLOAT16 for a in node.attribute)
    if node.op_type == "CastLike":
        return len(node.input) > 1 and node.input[1] in bfloat16_names
    return node.op_type == "Identity" and node.input[0] in bfloat16_names
