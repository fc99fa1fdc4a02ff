"""Static tensor arrays (tvm.relay.prelude.StaticTensorArrayOps): tensor arrays whose elements
have one known shape (dims may still be `Any`), so results keep static shapes where they can.

For a dtype and shape, e.g. ("float32", (2, 3)), the ADT `static_tensor_float32_2_3_t` has the
constructors `tensor_nil_float32_2_3` and `tensor_constructor_float32_2_3(Tensor[(2, 3),
float32])`, and every function is named `<canonical>_float32_2_3` (TVM's scheme: "any" for an
`Any` dim, "scalar" for shape (), a "batch1_" part when batch_dim is 1). Besides the list-level
functions of array_common.py:

    tensor_take(t, lower, upper)   rows [lower, upper): an array of shape (?, 3)
    tensor_concatenate(x, y)       joined on axis 0: shape (?, 3)
    tensor_expand_dims(t)          a new leading axis: shape (?, 2, 3) (1 with batch_dim=1)
    tensor_array_unstack(t)        the rows of a Tensor[(2, 3)] as an array of shape (3,)
    tensor_get_data(t)             the Tensor[(2, 3), float32] inside an element

Operations whose results have another shape define (or reuse) the array of that shape.
"""
from ..errors import InputError
from ..ir.adt import Clause, Constructor, Match, PatternConstructor, PatternVar, TypeData
from ..ir.expr import Function, Var
from ..ir.dims import dim_to_str, is_static, shape_to_str
from ..ir.types import Any, GlobalTypeVar, TensorType, TypeCall, is_any
from ..op.creation import arange
from ..op.transform import concatenate, expand_dims, take
from .array_common import INT32, TensorArrayBase


def _shape_str(shape) -> str:
    """The shape part of a definition's name, read back by get_tensor_array_shape: ints and
    `any`; a size variable has no such spelling, so it is refused (use relay.Any())."""
    for d in shape:
        if not (is_any(d) or is_static(d)):
            raise InputError(f"static tensor array: shape {shape_to_str(shape)} has the symbolic dim "
                             f"{dim_to_str(d)}; give an int or relay.Any() for each dim")
    return "_".join("any" if is_any(d) else str(int(d)) for d in shape)


def get_name_static(canonical: str, dtype: str, shape, batch_dim=None, extra_shapes=None) -> str:
    """The module name of a static tensor array definition (TVM's naming scheme)."""
    shape_str = _shape_str(shape)
    for name, extra in (extra_shapes or {}).items():
        shape_str += f"_{name}_{_shape_str(extra)}"
    shape_str = shape_str or "scalar"
    if canonical == "tensor_t":
        return f"static_tensor_{dtype}_{shape_str}_t"
    if batch_dim == 1 and canonical not in ("tensor_constructor", "tensor_nil"):
        return f"{canonical}_{dtype}_batch1_{shape_str}"
    return f"{canonical}_{dtype}_{shape_str}"


def get_tensor_array_shape(expr, dtype: str, prelude):
    """The static element shape of the tensor array `expr` evaluates to (a tuple of ints and
    Any), or None when it is a dynamic tensor array. The expression is typed against the
    prelude's module (which is not changed)."""
    from ..ir.module import IRModule
    from ..ir.vars import free_vars
    from ..transform import InferType
    mod = IRModule(dict(prelude.mod.functions), dict(prelude.mod.type_definitions))
    mod["main"] = Function(free_vars(expr), expr)
    ty = InferType()(mod)["main"].body.checked_type
    if not (isinstance(ty, TypeCall) and ty.args and isinstance(ty.args[0], TypeCall)):
        raise InputError(f"get_tensor_array_shape: the expression is not a tensor array (its type is {ty})")
    name = ty.args[0].func.name_hint
    prefix = f"static_tensor_{dtype}_"
    if not name.startswith(prefix):
        return None
    dims = name[len(prefix):-len("_t")]
    if dims == "scalar":
        return ()
    return tuple(Any() if d in ("any", "?") else int(d) for d in dims.split("_"))


class StaticTensorArrayOps(TensorArrayBase):
    """The static tensor array of one dtype and element shape; `register()` adds all of it."""

    def __init__(self, prelude, dtype: str, shape, batch_dim=None):
        super().__init__(prelude, dtype)
        self.shape = tuple(shape)
        self.batch_dim = batch_dim

    def get_name(self, canonical: str, extra_shapes=None) -> str:
        return get_name_static(canonical, self.dtype, self.shape, self.batch_dim, extra_shapes)

    @property
    def tensor_type_var(self) -> GlobalTypeVar:
        return self.mod.get_global_type_var(get_name_static("tensor_t", self.dtype, self.shape))

    @property
    def single_element_stack(self) -> bool:
        return self.batch_dim == 1

    def ops_for(self, shape) -> "StaticTensorArrayOps":
        """The static tensor array of another element shape (its ADT defined if new)."""
        ops = StaticTensorArrayOps(self.prelude, self.dtype, shape, self.batch_dim)
        ops.define_tensor_adt()
        return ops

    def output_ops(self, kind: str) -> "StaticTensorArrayOps":
        if kind == "rows":
            return self.ops_for((Any(),) + self.shape[1:])
        new_axis = 1 if self.batch_dim == 1 else Any()
        return self.ops_for((new_axis,) + self.shape)

    def _unwrap(self, value, body_of) -> Match:
        """match value { tensor_constructor(%t) => body_of(%t) }."""
        t = Var("t")
        return Match(value, [Clause(PatternConstructor(self.get_ctor("tensor_constructor"), [PatternVar(t)]),
                                    body_of(t))], False)

    # --- the ADT and the tensor-level functions -------------------------------------------------
    def define_tensor_adt(self) -> None:
        """static_tensor_<dtype>_<shape>_t: nil, or one tensor of the shape."""
        name = get_name_static("tensor_t", self.dtype, self.shape)
        if self.has_type(name):
            return
        gtv = GlobalTypeVar(name)
        nil = Constructor(get_name_static("tensor_nil", self.dtype, self.shape), [], gtv)
        full = Constructor(get_name_static("tensor_constructor", self.dtype, self.shape),
                           [TensorType(self.shape, self.dtype)], gtv)
        self.mod[gtv] = TypeData(gtv, [], [nil, full])

    def define_tensor_take(self) -> None:
        """tensor_take(t, lower, upper): rows [lower, upper) (not for scalars)."""
        if not self.shape or self.is_cached("tensor_take"):
            return
        out = self.output_ops("rows")
        t, lower, upper = Var("tensor", self.tensor_type_var()), Var("lower", INT32), Var("upper", INT32)
        rows = arange(lower, upper, dtype="int32")
        body = self._unwrap(t, lambda x: out.get_ctor("tensor_constructor")(take(x, rows, axis=0)))
        self.define("tensor_take", [t, lower, upper], body, out.tensor_type_var())

    def define_tensor_concatenate(self) -> None:
        """tensor_concatenate(x, y): joined on axis 0 (not for scalars)."""
        if not self.shape or self.is_cached("tensor_concatenate"):
            return
        out = self.output_ops("rows")
        x, y = Var("x", self.tensor_type_var()), Var("y", self.tensor_type_var())
        body = self._unwrap(x, lambda first: self._unwrap(y, lambda second: out.get_ctor("tensor_constructor")(
            concatenate([first, second], axis=0))))
        self.define("tensor_concatenate", [x, y], body, out.tensor_type_var())

    def define_tensor_expand_dims(self) -> None:
        """tensor_expand_dims(t): a new leading axis (Any, so stacked results concatenate)."""
        if self.is_cached("tensor_expand_dims"):
            return
        out = self.output_ops("stacked")
        x = Var("x", self.tensor_type_var())
        body = self._unwrap(x, lambda t: out.get_ctor("tensor_constructor")(expand_dims(t, 0, 1)))
        self.define("tensor_expand_dims", [x], body, out.tensor_type_var())

    def define_tensor_array_unstack(self) -> None:
        """tensor_array_unstack(t): the rows of a Tensor[shape] (not for scalars)."""
        if not self.shape:
            return
        element = self.ops_for(self.shape[1:])
        self.define_unstack("tensor_array_unstack", TensorType(self.shape, self.dtype), element,
                            element.get_ctor("tensor_constructor"))

    def define_tensor_array_scatter(self, indices_shape=None, force_update=False) -> None:
        extra = {"indices": indices_shape} if indices_shape is not None else None
        if force_update or not self.is_cached("tensor_array_scatter", extra):
            super().define_tensor_array_scatter(indices_shape)

    def define_tensor_array_split(self, value_shape=None, lengths_shape=None, force_update=False) -> None:
        """tensor_array_split(ta, value, lengths) (not for scalars); value_shape gives the value
        a static shape of its own."""
        if not self.shape or (self.is_cached("tensor_array_split") and not force_update):
            return
        value_ops = self.ops_for(value_shape) if value_shape is not None else self
        super().define_tensor_array_split(value_ops, lengths_shape)

    def define_tensor_array_concat(self) -> None:
        if self.shape and not self.is_cached("tensor_array_concat"):
            super().define_tensor_array_concat()

    def define_tensor_get_data(self) -> None:
        """tensor_get_data(t): the tensor inside an element."""
        t = Var("tensor", self.tensor_type_var())
        self.define("tensor_get_data", [t], self._unwrap(t, lambda x: x), TensorType(self.shape, self.dtype))

    REGISTER_STEPS = TensorArrayBase.REGISTER_STEPS + ("define_tensor_get_data",)


__all__ = ["StaticTensorArrayOps", "get_name_static", "get_tensor_array_shape"]
