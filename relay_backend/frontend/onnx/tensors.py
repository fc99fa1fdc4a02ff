"""ONNX TensorProto -> numpy array, with the tensor checked against its own dims first.

A TensorProto says its shape (dims) and element type, and carries its data separately (raw_data,
a typed field such as float_data, or a reference to an external file). A hand-edited or truncated
file can make them disagree, or declare dims far too large to allocate; onnx.numpy_helper then
raises a bare ValueError or MemoryError. Initializers, Constant values and ConstantOfShape values
all come through `tensor_to_array`, which names the tensor and what is wrong instead.
"""
import numpy as np

from ...runtime.limits import check_tensor_size
from .common import InvalidModelError, onnx_dtype


def tensor_layout(tensor, what: str):
    """(dims, numpy dtype name, byte size) of `tensor`, checked: a known element type, no negative
    dim, and a size within the stated tensor limit (AllocationError otherwise)."""
    dtype = onnx_dtype(tensor.data_type, what)
    dims = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in dims):
        raise InvalidModelError(f"{what}: negative dimension in dims {dims}")
    return dims, dtype, check_tensor_size(dims, dtype, what)


def tensor_to_array(tensor, what: str) -> np.ndarray:
    """The value of `tensor` as a numpy array; `what` names it in errors ("initializer 'w'").

    Data kept in an external file must have been read already (load_model does this for a model
    given by path); it is never looked up relative to the working directory."""
    from onnx import TensorProto, helper, numpy_helper
    dims, dtype, nbytes = tensor_layout(tensor, what)
    if tensor.data_location == TensorProto.EXTERNAL:
        location = next((e.value for e in tensor.external_data if e.key == "location"), "")
        raise InvalidModelError(
            f"{what}: its data is in the external file {location!r}, which is not read for a model "
            "given in memory; pass the model's path to from_onnx (or load it with onnx.load(path)) so the "
            "file is read from the model's directory")
    if tensor.HasField("raw_data"):
        if len(tensor.raw_data) != nbytes:
            raise InvalidModelError(f"{what}: raw_data holds {len(tensor.raw_data)} bytes, but shape {dims} "
                                    f"{dtype} needs {nbytes} bytes")
    else:
        field = helper.tensor_dtype_to_field(tensor.data_type)
        count, want = len(getattr(tensor, field)), int(np.prod(dims, dtype=np.int64))
        if count != want:
            raise InvalidModelError(f"{what}: holds {count} value(s) in {field}, but shape {dims} needs {want}")
    try:
        return numpy_helper.to_array(tensor)
    except (ValueError, TypeError) as err:
        raise InvalidModelError(f"{what}: its data cannot be decoded ({err})") from err
