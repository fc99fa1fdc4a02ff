"""The Relay Prelude (tvm.relay.prelude): standard ADTs and functions, read from Relay text.

`Prelude(mod)` imports relay_backend/std/prelude.rly into `mod` with the parser
(`mod.import_from_std("prelude.rly")`, once per module) and then adds the tensor arrays for the
common dtypes, as TVM's does:

    List[A]   = Cons(A, List[A]) | Nil         Option[A] = Some(A) | None
    Tree[A]   = Rose(A, List[Tree[A]])

    id compose flip hd tl nth update length map foldl foldr foldr1 sum concat filter zip rev
    map_accuml map_accumr unfoldl unfoldr tmap size iterate

Each function is an attribute (`p.map` is the GlobalVar, so `p.map(f, xs)` builds a call) and
`p.get_global_var("map")`. The ADTs are `p.mod.get_type("List")` -> (List, Cons, Nil); the
attributes `l, cons, nil`, `optional, some, none` and `tree, rose` name them too. Tensor arrays:
`p.get_global_var("tensor_array_read", "float32")`, `p.get_type("tensor_t", "float32")`,
`p.get_tensor_ctor("tensor2", "float32")`, and StaticTensorArrayOps for fixed shapes.
Peano numbers live in std/nat.rly: `p.mod.import_from_std("nat.rly")`.
"""
from ..errors import ModuleLookupError
from ..ir.module import IRModule
from .static_tensor_array import StaticTensorArrayOps, get_name_static, get_tensor_array_shape
from .tensor_array import TENSOR_ARRAY_DTYPES, TensorArrayOps

GLOBAL_DEFS = ("id", "compose", "flip", "hd", "tl", "nth", "update", "map", "foldl", "foldr",
               "foldr1", "concat", "filter", "zip", "rev", "map_accuml", "map_accumr", "unfoldl",
               "unfoldr", "sum", "length", "tmap", "size", "iterate")


class Prelude:
    """The standard definitions in `mod` (a new IRModule if None); loading twice is a no-op."""

    def __init__(self, mod: IRModule = None):
        self.mod = mod if mod is not None else IRModule()
        self.load_prelude()

    def load_prelude(self) -> None:
        """Parse std/prelude.rly into the module and register the tensor arrays."""
        self.mod.import_from_std("prelude.rly")
        for name in GLOBAL_DEFS:
            setattr(self, name, self.mod.get_global_var(name))
        self.l, self.cons, self.nil = self.mod.get_type("List")
        self.optional, self.some, self.none = self.mod.get_type("Option")
        self.tree, self.rose = self.mod.get_type("Tree")
        for dtype in TENSOR_ARRAY_DTYPES:
            TensorArrayOps(self, dtype).register()

    # --- names (TVM's scheme: "<canonical>_<dtype>", the ADT "tensor_<dtype>_t") ----------------
    @staticmethod
    def get_name(canonical: str, dtype: str) -> str:
        """The module name of a per-dtype definition, e.g. ("tensor_array_read", "float32") ->
        "tensor_array_read_float32"."""
        if canonical == "tensor_t":
            return f"tensor_{dtype}_t"
        return f"{canonical}_{dtype}"

    def get_global_var(self, canonical: str, dtype: str = None):
        """The GlobalVar of a Prelude function ("map"), or of a per-dtype one with `dtype`."""
        return self.mod.get_global_var(canonical if dtype is None else self.get_name(canonical, dtype))

    def get_type(self, canonical: str, dtype: str = None):
        """With a dtype, the GlobalTypeVar of a per-dtype ADT (TVM's get_type("tensor_t",
        "float32")); without, (GlobalTypeVar, *constructors) of an ADT by name, e.g.
        get_type("List") -> (List, Cons, Nil), as IRModule.get_type."""
        if dtype is None:
            return self.mod.get_type(canonical)
        return self.mod.get_global_type_var(self.get_name(canonical, dtype))

    def get_ctor(self, ty_name: str, canonical: str, dtype: str = None):
        """The constructor `canonical` (per-dtype name with `dtype`) of the ADT `ty_name`."""
        name = canonical if dtype is None else self.get_name(canonical, dtype)
        for ctor in self.mod.get_type(ty_name)[1:]:
            if ctor.name_hint == name:
                return ctor
        raise ModuleLookupError(f"ADT {ty_name} has no constructor {name!r}")

    def get_tensor_ctor(self, canonical: str, dtype: str):
        """A constructor of the dynamic tensor ADT of `dtype`, e.g. ("tensor2", "float32")."""
        return self.get_ctor(self.get_name("tensor_t", dtype), canonical, dtype)

    # --- static tensor arrays (StaticTensorArrayOps registers them) ------------------------------
    @staticmethod
    def get_name_static(canonical: str, dtype: str, shape, batch_dim=None) -> str:
        return get_name_static(canonical, dtype, shape, batch_dim)

    def get_global_var_static(self, canonical: str, dtype: str, shape, batch_dim=None):
        return self.mod.get_global_var(get_name_static(canonical, dtype, shape, batch_dim))

    def get_type_static(self, canonical: str, dtype: str, shape):
        return self.mod.get_global_type_var(get_name_static(canonical, dtype, shape))

    def get_ctor_static(self, ty_name: str, name: str, dtype: str, shape):
        return self.get_ctor(get_name_static(ty_name, dtype, shape), get_name_static(name, dtype, shape))

    def get_tensor_ctor_static(self, name: str, dtype: str, shape):
        return self.get_ctor_static("tensor_t", name, dtype, shape)


__all__ = ["Prelude", "TensorArrayOps", "StaticTensorArrayOps", "get_tensor_array_shape",
           "GLOBAL_DEFS"]
