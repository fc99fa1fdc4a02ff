"""The VM's memory dialect: the operators ManifestAlloc writes and the VM compiler turns into
instructions (TVM's relay.op.memory and relay.op.vm, as `VMCompiler.optimize` shows them).

    memory.alloc_storage(size, shape, alignment, dtype_hint=, device_type=)   -> Storage[]
    memory.alloc_tensor(storage, offset, shape, dtype=, const_shape=)          -> Tensor
    vm.shape_of(tensor)                                                         -> Tensor[(ndim), int64]
    vm.shape_func(fn, (inputs...), (outputs...), is_inputs=)                    -> (outputs...)
    vm.invoke_tvm_op(fn, (inputs...), (outputs...))                             -> the outputs
    vm.reshape_tensor(tensor, newshape, newshape=)                              -> Tensor
    vm.check_shapes(fn, (inputs...), shapes=)                                   -> (inputs...)

`fn` is a fused primitive function; its kernel runs destination-passing style, writing the
tensors of `outputs`. Where TVM's invoke_tvm_op and shape_func return `()` and later code names
the output tensors through their let variables, here they return the outputs they wrote, so
programs stay in graph form and every use of a kernel's result depends on the call that wrote
it (no let-sequencing is needed to keep the call). The shape function of this build computes
the output shapes and also their byte sizes (TVM computes sizes with further fused kernels).
`vm.check_shapes` is this build's own: when a primitive's inputs have `Any` dims but its output
is static, its kernel was compiled for `shapes`, so the inputs pass through this check (the
type relations replayed on their run-time shapes) before the kernel or reshape uses them.

These operators are not in the op registry: users never write them, the debug interpreter
does not run them, and they exist between ManifestAlloc and bytecode generation only. Their
type relations let InferType check the manifested module, as TVM re-runs it.
"""
import dataclasses

from ..errors import TypeInferenceError
from ..ir.attrs import Attrs
from ..ir.expr import Call, Op
from ..ir.types import Any, FuncType, GlobalTypeVar, TensorType, TupleType, TypeCall, type_to_str

STORAGE_TYPE = TypeCall(GlobalTypeVar("Storage"), [])


@dataclasses.dataclass(frozen=True)
class AllocStorageAttrs(Attrs):
    """The dtype a storage is meant for and the device it lives on (1 = cpu)."""
    dtype_hint: str = "float32"
    device_type: int = 1


@dataclasses.dataclass(frozen=True)
class AllocTensorAttrs(Attrs):
    """The dtype of the tensor and, when known at compile time, its shape."""
    dtype: str = "float32"
    const_shape: tuple = ()


@dataclasses.dataclass(frozen=True)
class ShapeOfAttrs(Attrs):
    dtype: str = "int64"


@dataclasses.dataclass(frozen=True)
class ShapeFuncAttrs(Attrs):
    """Per flat input: 1 when the shape function reads the input's data, 0 when its shape."""
    is_inputs: tuple = ()


@dataclasses.dataclass(frozen=True)
class CheckShapesAttrs(Attrs):
    """The static flat output shapes the primitive was compiled for."""
    shapes: tuple = ()


@dataclasses.dataclass(frozen=True)
class ReshapeTensorAttrs(Attrs):
    """The new shape (`Any` dims as -1 when computed at run time)."""
    newshape: tuple = ()


def _tensor(t, what: str) -> TensorType:
    if not isinstance(t, TensorType):
        raise TypeInferenceError(f"{what} must be a tensor, got {type_to_str(t)}")
    return t


def _fields(t, what: str) -> list:
    if not isinstance(t, TupleType):
        raise TypeInferenceError(f"{what} must be a tuple, got {type_to_str(t)}")
    return list(t.fields)


def _alloc_storage_rel(arg_types, attrs):
    _tensor(arg_types[0], "memory.alloc_storage: size")
    return STORAGE_TYPE


def _alloc_tensor_rel(arg_types, attrs):
    if arg_types[0] != STORAGE_TYPE:
        raise TypeInferenceError(f"memory.alloc_tensor: storage must be Storage[], got {type_to_str(arg_types[0])}")
    shape = _tensor(arg_types[2], "memory.alloc_tensor: shape")
    if attrs.const_shape or len(shape.shape) == 1 and shape.shape[0] == 0:
        return TensorType(tuple(attrs.const_shape), attrs.dtype)
    return TensorType(tuple(Any() for _ in range(int(shape.shape[0]))), attrs.dtype)


def _shape_of_rel(arg_types, attrs):
    return TensorType((len(_tensor(arg_types[0], "vm.shape_of: data").shape),), attrs.dtype)


def _outputs_rel(name):
    def rel(arg_types, attrs):
        if not isinstance(arg_types[0], FuncType):
            raise TypeInferenceError(f"{name}: the callee must be a primitive function, got "
                                     f"{type_to_str(arg_types[0])}")
        _fields(arg_types[1], f"{name}: inputs")
        outs = _fields(arg_types[2], f"{name}: outputs")
        return outs[0] if len(outs) == 1 and name == "vm.invoke_tvm_op" else TupleType(outs)
    return rel


def _check_shapes_rel(arg_types, attrs):
    if not isinstance(arg_types[0], FuncType):
        raise TypeInferenceError(f"vm.check_shapes: the callee must be a primitive function, got "
                                 f"{type_to_str(arg_types[0])}")
    return TupleType(_fields(arg_types[1], "vm.check_shapes: inputs"))


def _reshape_tensor_rel(arg_types, attrs):
    data = _tensor(arg_types[0], "vm.reshape_tensor: data")
    return TensorType(tuple(Any() if d < 0 else d for d in attrs.newshape), data.dtype)


class DialectOp(Op):
    """An operator of the memory dialect: a name, input names, a type relation, attrs class."""

    def __init__(self, name: str, inputs, rel, attrs_type):
        super().__init__(name)
        self.input_names = tuple(inputs)
        self.num_inputs = len(self.input_names)
        self.rel = rel
        self.attrs_type = attrs_type

    def __call__(self, *args, attrs=None) -> Call:
        if attrs is None and self.attrs_type is not None:
            attrs = self.attrs_type()
        return Call(self, args, attrs)

    def __repr__(self) -> str:
        return f"Op({self.name})"


ALLOC_STORAGE = DialectOp("memory.alloc_storage", ("size", "shape", "alignment"), _alloc_storage_rel,
                          AllocStorageAttrs)
ALLOC_TENSOR = DialectOp("memory.alloc_tensor", ("storage", "offset", "shape"), _alloc_tensor_rel,
                         AllocTensorAttrs)
SHAPE_OF = DialectOp("vm.shape_of", ("data",), _shape_of_rel, ShapeOfAttrs)
SHAPE_FUNC = DialectOp("vm.shape_func", ("func", "inputs", "outputs"), _outputs_rel("vm.shape_func"),
                       ShapeFuncAttrs)
INVOKE_TVM_OP = DialectOp("vm.invoke_tvm_op", ("func", "inputs", "outputs"), _outputs_rel("vm.invoke_tvm_op"),
                          None)
RESHAPE_TENSOR = DialectOp("vm.reshape_tensor", ("data", "shape"), _reshape_tensor_rel, ReshapeTensorAttrs)
CHECK_SHAPES = DialectOp("vm.check_shapes", ("func", "inputs"), _check_shapes_rel, CheckShapesAttrs)
DIALECT_OPS = {op.name: op for op in (ALLOC_STORAGE, ALLOC_TENSOR, SHAPE_OF, SHAPE_FUNC, INVOKE_TVM_OP,
                                      RESHAPE_TENSOR, CHECK_SHAPES)}


__all__ = ["DialectOp", "DIALECT_OPS", "STORAGE_TYPE", "ALLOC_STORAGE", "ALLOC_TENSOR", "SHAPE_OF",
           "SHAPE_FUNC", "INVOKE_TVM_OP", "RESHAPE_TENSOR", "CHECK_SHAPES", "AllocStorageAttrs",
           "AllocTensorAttrs", "ShapeOfAttrs", "ShapeFuncAttrs", "CheckShapesAttrs", "ReshapeTensorAttrs"]
