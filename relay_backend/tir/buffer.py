"""Buffer: a named, typed, multi-dimensional view of memory that loads and stores index.

Shapes are tuples of PrimExpr (IntImm or symbolic Vars). Strides default to row-major;
`offset_of(indices)` flattens an index tuple to an element offset (what codegen emits).
"""
from ..errors import CompileError
from .expr import BufferLoad, PrimExpr, Var, convert

SCOPES = ("global", "local", "shared")


class Buffer:
    """A buffer `name` of `shape` and `dtype` whose base address is the handle Var `data`.

    scope: "global" (function arguments, heap temporaries), "local" (a small stack /
    register temporary), "shared" (GPU shared memory).
    """
    __slots__ = ("name", "shape", "dtype", "data", "strides", "scope")

    def __init__(self, name, shape, dtype="float32", data=None, strides=None, scope="global"):
        if scope not in SCOPES:
            raise CompileError(f"Buffer {name}: unknown scope {scope!r}; use one of {SCOPES}")
        self.name = name
        self.shape = tuple(convert(s, "int32") for s in shape)
        self.dtype = dtype
        self.data = data if data is not None else Var(name, "handle")
        self.strides = tuple(convert(s, "int32") for s in strides) if strides else None
        self.scope = scope

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def row_major_strides(self):
        """Strides (in elements) of a dense row-major layout of `shape`."""
        strides, acc = [], convert(1, "int32")
        for dim in reversed(self.shape):
            strides.append(acc)
            acc = dim * acc
        return tuple(reversed(strides))

    def effective_strides(self):
        return self.strides if self.strides is not None else self.row_major_strides()

    def offset_of(self, indices) -> PrimExpr:
        """The flat element offset of `indices` (unsimplified)."""
        if len(indices) != self.ndim:
            raise CompileError(f"buffer {self.name} has rank {self.ndim} but is indexed with "
                               f"{len(indices)} indices")
        if self.ndim == 0:
            return convert(0, "int32")
        total = None
        for idx, stride in zip(indices, self.effective_strides()):
            term = convert(idx, "int32") * stride
            total = term if total is None else total + term
        return total

    def size(self) -> PrimExpr:
        """The number of elements (product of shape)."""
        acc = convert(1, "int32")
        for dim in self.shape:
            acc = acc * dim
        return acc

    def vload(self, indices) -> BufferLoad:
        return BufferLoad(self, indices)

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        return BufferLoad(self, indices)

    def __repr__(self):
        dims = ", ".join(str(s) for s in self.shape)
        return f"Buffer({self.name}, ({dims}), {self.dtype}, {self.scope})"


def decl_buffer(shape, dtype="float32", name="buffer", strides=None, scope="global") -> Buffer:
    """A new Buffer (tvm.tir.decl_buffer's argument order)."""
    return Buffer(name, shape, dtype, strides=strides, scope=scope)
