"""IRModule: global functions by GlobalVar and ADT definitions by GlobalTypeVar."""
from .adt import Constructor, TypeData
from .expr import Expr, Function, GlobalVar
from .node import Node
from .types import GlobalTypeVar


class IRModule(Node):
    """A set of named functions and type definitions (tvm.IRModule)."""

    def __init__(self, functions=None, type_definitions=None):
        self.functions = {}        # GlobalVar -> Function
        self.type_definitions = {}  # GlobalTypeVar -> TypeData
        self._gvars = {}           # name -> GlobalVar
        self._tvars = {}           # name -> GlobalTypeVar
        for gv, fn in (functions or {}).items():
            self[gv] = fn
        for gtv, data in (type_definitions or {}).items():
            self.add_type_definition(data if data.header is gtv else TypeData(gtv, data.type_vars, data.constructors))

    # --- functions ---------------------------------------------------------------------------
    def _to_gvar(self, key, create: bool) -> GlobalVar:
        if isinstance(key, GlobalVar):
            existing = self._gvars.get(key.name_hint)
            if existing is not None and existing is not key:
                raise ValueError(f"IRModule already has a different GlobalVar named {key.name_hint!r}")
            return key
        if isinstance(key, str):
            if key in self._gvars:
                return self._gvars[key]
            if create:
                return GlobalVar(key)
            raise KeyError(f"IRModule has no function {key!r}; it has {sorted(self._gvars)}")
        raise TypeError(f"IRModule key must be a str or GlobalVar, got {type(key).__name__}")

    def __setitem__(self, key, func: Expr) -> None:
        if not isinstance(func, Function):
            raise TypeError(f"IRModule values must be relay Functions, got {type(func).__name__}")
        gv = self._to_gvar(key, create=True)
        self._gvars[gv.name_hint] = gv
        self.functions[gv] = func

    def add(self, key, func) -> None:
        self[key] = func

    update_func = __setitem__

    def __getitem__(self, key):
        if isinstance(key, GlobalTypeVar):
            return self.type_definitions[key]
        gv = self._to_gvar(key, create=False)
        if gv not in self.functions:
            raise KeyError(f"IRModule has no function {gv.name_hint!r}; it has {sorted(self._gvars)}")
        return self.functions[gv]

    def __contains__(self, key) -> bool:
        if isinstance(key, str):
            return key in self._gvars
        return key in self.functions

    def __delitem__(self, key) -> None:
        gv = self._to_gvar(key, create=False)
        del self.functions[gv]
        del self._gvars[gv.name_hint]

    def get_global_var(self, name: str) -> GlobalVar:
        return self._to_gvar(name, create=False)

    def get_global_vars(self) -> list:
        return list(self.functions)

    def items(self):
        return self.functions.items()

    # --- type definitions --------------------------------------------------------------------
    def add_type_definition(self, data: TypeData) -> None:
        self._tvars[data.header.name_hint] = data.header
        self.type_definitions[data.header] = data

    def get_global_type_var(self, name: str) -> GlobalTypeVar:
        if name not in self._tvars:
            raise KeyError(f"IRModule has no type {name!r}; it has {sorted(self._tvars)}")
        return self._tvars[name]

    def get_global_type_vars(self) -> list:
        return list(self.type_definitions)

    def get_type(self, name: str) -> tuple:
        """(GlobalTypeVar, *constructors) of the ADT called `name`, e.g. (List, Cons, Nil)."""
        gtv = self.get_global_type_var(name)
        return (gtv, *self.type_definitions[gtv].constructors)

    def get_constructor(self, tag: int, type_name: str = None) -> Constructor:
        for data in self.type_definitions.values():
            if type_name is not None and data.header.name_hint != type_name:
                continue
            if 0 <= tag < len(data.constructors):
                return data.constructors[tag]
        raise KeyError(f"no constructor with tag {tag}")

    # --- construction and printing -----------------------------------------------------------
    @staticmethod
    def from_expr(expr: Expr, functions=None, type_defs=None) -> "IRModule":
        """A module whose `main` is `expr` (wrapped in a Function over its free vars if needed)."""
        mod = IRModule(functions, type_defs)
        if not isinstance(expr, Function):
            from .vars import free_vars
            expr = Function(free_vars(expr), expr)
        mod["main"] = expr
        return mod

    def copy(self) -> "IRModule":
        new = IRModule()
        new.functions = dict(self.functions)
        new.type_definitions = dict(self.type_definitions)
        new._gvars = dict(self._gvars)
        new._tvars = dict(self._tvars)
        return new

    def astext(self, show_meta_data: bool = False) -> str:
        from .printer import module_astext
        return module_astext(self, show_meta_data=show_meta_data)

    def __str__(self) -> str:
        return self.astext()

    __repr__ = __str__
