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
from ..docstrings import shared_parameters
from ..errors import ModuleLookupError
from ..ir.module import IRModule
from .static_tensor_array import StaticTensorArrayOps, get_name_static, get_tensor_array_shape
from .tensor_array import TENSOR_ARRAY_DTYPES, TensorArrayOps

GLOBAL_DEFS = ("id", "compose", "flip", "hd", "tl", "nth", "update", "map", "foldl", "foldr",
               "foldr1", "concat", "filter", "zip", "rev", "map_accuml", "map_accumr", "unfoldl",
               "unfoldr", "sum", "length", "tmap", "size", "iterate")

# the parameters the name lookups share (shared_parameters completes their docstrings)
NAME_PARAMETERS = {
    "canonical": ("str", 'The definition\'s name without dtype or shape, e.g. "tensor_array_read".'),
    "dtype": ("str", 'The element dtype of a per-dtype definition, e.g. "float32".'),
    "shape": ("tuple", "The element shape of a static tensor array (ints, or Any for a dim known only "
                       "at run time)."),
    "batch_dim": ("int", "1 for the batch-1 variants of the static functions TVM names "
                         "*_batch1_*; None for the others."),
}


class Prelude:
    """Relay's standard library (List, Option, Tree, map, foldl, nth, tensor arrays, ...) loaded
    into a module (tvm.relay.prelude.Prelude); its definitions are attributes (p.cons,
    p.map, p.nil, ...). Loading twice is a no-op.

    Parameters
    ----------
    mod : IRModule, optional
        The module to load the definitions into; None (the default) makes a new one.
    """

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
    @shared_parameters(NAME_PARAMETERS)
    def get_name(canonical: str, dtype: str) -> str:
        """The module name of a per-dtype definition, e.g. ("tensor_array_read", "float32") ->
        "tensor_array_read_float32" (the ADT "tensor_t" is named "tensor_<dtype>_t").

        Returns
        -------
        name : str
            The name.
        """
        if canonical == "tensor_t":
            return f"tensor_{dtype}_t"
        return f"{canonical}_{dtype}"

    @shared_parameters(NAME_PARAMETERS)
    def get_global_var(self, canonical: str, dtype: str = None):
        """The GlobalVar of a Prelude function ("map"), or with a dtype of a per-dtype one
        ("tensor_array_read", "float32").

        Parameters
        ----------
        dtype : str, optional
            The element dtype of a per-dtype function; None (the default) for a plain one.

        Returns
        -------
        gv : GlobalVar
            The function's GlobalVar.
        """
        return self.mod.get_global_var(canonical if dtype is None else self.get_name(canonical, dtype))

    @shared_parameters(NAME_PARAMETERS)
    def get_type(self, canonical: str, dtype: str = None):
        """Without a dtype, the header and constructors of an ADT by name (get_type("List") ->
        (List, Cons, Nil), as IRModule.get_type); with one, the GlobalTypeVar of a per-dtype ADT
        (TVM's get_type("tensor_t", "float32")).

        Parameters
        ----------
        dtype : str, optional
            The element dtype of a per-dtype ADT; None (the default) for a plain one.

        Returns
        -------
        result : tuple or GlobalTypeVar
            (GlobalTypeVar, *constructors), or the per-dtype ADT's GlobalTypeVar.
        """
        if dtype is None:
            return self.mod.get_type(canonical)
        return self.mod.get_global_type_var(self.get_name(canonical, dtype))

    @shared_parameters(NAME_PARAMETERS)
    def get_ctor(self, ty_name: str, canonical: str, dtype: str = None):
        """A constructor of an ADT.

        Parameters
        ----------
        ty_name : str
            The ADT's module name, e.g. "List" or "tensor_float32_t".
        canonical : str
            The constructor's name, e.g. "Cons", or its canonical name with `dtype`.
        dtype : str, optional
            With it, the constructor's name is get_name(canonical, dtype). Defaults to None.

        Returns
        -------
        constructor : Constructor
            The constructor; a ModuleLookupError when the ADT has none of that name.
        """
        name = canonical if dtype is None else self.get_name(canonical, dtype)
        for ctor in self.mod.get_type(ty_name)[1:]:
            if ctor.name_hint == name:
                return ctor
        raise ModuleLookupError(f"ADT {ty_name} has no constructor {name!r}")

    @shared_parameters(NAME_PARAMETERS)
    def get_tensor_ctor(self, canonical: str, dtype: str):
        """A constructor of the dynamic tensor ADT of a dtype, e.g. ("tensor2", "float32") for the
        rank-2 float32 tensor.

        Returns
        -------
        constructor : Constructor
            The constructor.
        """
        return self.get_ctor(self.get_name("tensor_t", dtype), canonical, dtype)

    # --- static tensor arrays (StaticTensorArrayOps registers them) ------------------------------
    @staticmethod
    @shared_parameters(NAME_PARAMETERS)
    def get_name_static(canonical: str, dtype: str, shape, batch_dim=None) -> str:
        """The module name of a static tensor array definition (TVM's scheme, e.g.
        "tensor_array_read_float32_2_3" for shape (2, 3)).

        Returns
        -------
        name : str
            The name.
        """
        return get_name_static(canonical, dtype, shape, batch_dim)

    @shared_parameters(NAME_PARAMETERS)
    def get_global_var_static(self, canonical: str, dtype: str, shape, batch_dim=None):
        """The GlobalVar of a static tensor array function (after StaticTensorArrayOps registered it).

        Returns
        -------
        gv : GlobalVar
            The function's GlobalVar.
        """
        return self.mod.get_global_var(get_name_static(canonical, dtype, shape, batch_dim))

    @shared_parameters(NAME_PARAMETERS)
    def get_type_static(self, canonical: str, dtype: str, shape):
        """The GlobalTypeVar of a static tensor array ADT (after StaticTensorArrayOps registered it).

        Returns
        -------
        gtv : GlobalTypeVar
            The ADT's header.
        """
        return self.mod.get_global_type_var(get_name_static(canonical, dtype, shape))

    @shared_parameters(NAME_PARAMETERS)
    def get_ctor_static(self, ty_name: str, name: str, dtype: str, shape):
        """A constructor of a static tensor array ADT.

        Parameters
        ----------
        ty_name : str
            The ADT's canonical name, e.g. "tensor_t".
        name : str
            The constructor's canonical name, e.g. "tensor_constructor".

        Returns
        -------
        constructor : Constructor
            The constructor.
        """
        return self.get_ctor(get_name_static(ty_name, dtype, shape), get_name_static(name, dtype, shape))

    @shared_parameters(NAME_PARAMETERS)
    def get_tensor_ctor_static(self, name: str, dtype: str, shape):
        """A constructor of the static tensor ADT of a dtype and shape.

        Parameters
        ----------
        name : str
            The constructor's canonical name, e.g. "tensor_constructor" or "tensor_nil".

        Returns
        -------
        constructor : Constructor
            The constructor.
        """
        return self.get_ctor_static("tensor_t", name, dtype, shape)


__all__ = ["Prelude", "TensorArrayOps", "StaticTensorArrayOps", "get_tensor_array_shape",
           "GLOBAL_DEFS"]
