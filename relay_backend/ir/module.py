"""IRModule: global functions by GlobalVar, ADT definitions by GlobalTypeVar, and module attrs.

The API is tvm.IRModule's: `mod["main"] = fn`, `mod[GlobalTypeVar] = TypeData`, `update`,
`update_func`, `get_global_var(s)`, `get_global_type_var(s)`, `get_type`, `get_constructor`,
`from_expr`, `with_attr`/`get_attr`/`without_attr`, `import_from_std` (reads a `.rly` file
shipped in relay_backend/std/ with the parser, once per module), and the `functions` /
`type_definitions` dictionaries.
"""
import pathlib

from .adt import Constructor, TypeData
from .attrs import DictAttrs
from .expr import Expr, Function, GlobalVar
from .types import GlobalTypeVar

STD_DIR = pathlib.Path(__file__).resolve().parents[1] / "std"

# Set by relay_backend.transform when it is imported: type-checks a module in place. ir/ cannot
# import transform/, and import_from_std returns a type-checked module as TVM's does.
TYPE_CHECKER = {}


class IRModule:
    """A set of named functions and type definitions (tvm.IRModule)."""

    def __init__(self, functions=None, type_definitions=None, attrs=None):
        self.functions = {}        # GlobalVar -> Function
        self.type_definitions = {}  # GlobalTypeVar -> TypeData
        self.attrs = DictAttrs(attrs or {})
        self._gvars = {}           # name -> GlobalVar
        self._tvars = {}           # name -> GlobalTypeVar
        self._imported = set()     # std files already imported (import_from_std runs once each)
        for gv, fn in (functions or {}).items():
            self[gv] = fn
        for gtv, data in (type_definitions or {}).items():
            self[gtv] = data

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
        raise TypeError(f"IRModule key must be a str, GlobalVar or GlobalTypeVar, got {type(key).__name__}")

    def __setitem__(self, key, value) -> None:
        """mod[name or GlobalVar] = Function; mod[name or GlobalTypeVar] = TypeData."""
        if isinstance(value, TypeData):
            self._add_type(key, value)
            return
        if not isinstance(value, Function):
            raise TypeError(f"IRModule values must be relay Functions (or TypeData under a "
                            f"GlobalTypeVar), got {type(value).__name__}")
        gv = self._to_gvar(key, create=True)
        self._gvars[gv.name_hint] = gv
        self.functions[gv] = value

    def add(self, key, func) -> None:
        self[key] = func

    def update_func(self, var, func) -> None:
        """Replace (or add) the function of `var` (tvm IRModule.update_func)."""
        self[var] = func

    def update(self, other) -> None:
        """Add every function and type definition of `other` (an IRModule or a dict of functions)
        to this module, replacing those with the same name (tvm IRModule.update)."""
        if isinstance(other, dict):
            other = IRModule(other)
        for gtv, data in other.type_definitions.items():
            old = self._tvars.get(gtv.name_hint)
            if old is not None and old is not gtv:
                del self.type_definitions[old]
            self._add_type(gtv, data)
        for gv, fn in other.functions.items():
            old = self._gvars.get(gv.name_hint)
            if old is not None and old is not gv:
                del self.functions[old]
                del self._gvars[gv.name_hint]
            self[gv] = fn

    def __getitem__(self, key):
        if isinstance(key, GlobalTypeVar):
            if key not in self.type_definitions:
                raise KeyError(f"IRModule has no type {key.name_hint!r}; it has {sorted(self._tvars)}")
            return self.type_definitions[key]
        gv = self._to_gvar(key, create=False)
        if gv not in self.functions:
            raise KeyError(f"IRModule has no function {gv.name_hint!r}; it has {sorted(self._gvars)}")
        return self.functions[gv]

    def __contains__(self, key) -> bool:
        if isinstance(key, str):
            return key in self._gvars
        if isinstance(key, GlobalTypeVar):
            return key in self.type_definitions
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

    def functions_items(self) -> list:
        """The (GlobalVar, Function) pairs sorted by name (tvm IRModule.functions_items)."""
        return sorted(self.functions.items(), key=lambda item: item[0].name_hint)

    # --- type definitions --------------------------------------------------------------------
    def _add_type(self, key, data: TypeData) -> None:
        gtv = key if isinstance(key, GlobalTypeVar) else self._tvars.get(key) or GlobalTypeVar(str(key))
        if data.header is not gtv:
            data = TypeData(gtv, data.type_vars, data.constructors)
        old = self._tvars.get(gtv.name_hint)
        if old is not None and old is not gtv:
            del self.type_definitions[old]
        self._tvars[gtv.name_hint] = gtv
        self.type_definitions[gtv] = data

    def add_type_definition(self, data: TypeData) -> None:
        self._add_type(data.header, data)

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

    # --- attributes --------------------------------------------------------------------------
    def get_attr(self, attr_key: str):
        """The module attribute `attr_key`, or None (tvm IRModule.get_attr)."""
        return self.attrs.get(attr_key)

    def with_attr(self, attr_key: str, attr_value) -> "IRModule":
        """A copy of the module with attribute `attr_key` set (tvm IRModule.with_attr)."""
        new = self.copy()
        new.attrs = DictAttrs({**self.attrs, attr_key: attr_value})
        return new

    def with_attrs(self, attr_map) -> "IRModule":
        new = self.copy()
        new.attrs = DictAttrs({**self.attrs, **dict(attr_map)})
        return new

    def without_attr(self, attr_key: str) -> "IRModule":
        new = self.copy()
        new.attrs = DictAttrs({k: v for k, v in self.attrs.items() if k != attr_key})
        return new

    # --- construction and printing -----------------------------------------------------------
    @staticmethod
    def from_expr(expr: Expr, functions=None, type_defs=None) -> "IRModule":
        """A module whose `main` is `expr` (wrapped in a Function over its free vars if needed),
        with the given functions ({name or GlobalVar: Function}) and type definitions
        ({name or GlobalTypeVar: TypeData})."""
        mod = IRModule(functions, type_defs)
        if not isinstance(expr, Function):
            from .vars import free_vars
            expr = Function(free_vars(expr), expr)
        mod["main"] = expr
        return mod

    def import_from_std(self, file_to_import: str) -> "IRModule":
        """Add the definitions of relay_backend/std/<file_to_import> (e.g. "prelude.rly",
        "nat.rly") to this module, once; returns the module, type-checked."""
        path = STD_DIR / file_to_import
        if not path.is_file():
            known = sorted(p.name for p in STD_DIR.glob("*.rly"))
            raise KeyError(f"no standard library file {file_to_import!r}; available: {known}")
        return self._import(path)

    def _import(self, path) -> "IRModule":
        """Parse the Relay file at `path` against this module and add what it defines (once)."""
        from .parser import parse_module_text
        path = pathlib.Path(path)
        key = str(path.resolve())
        if key not in self._imported:
            self.update(parse_module_text(path.read_text(), str(path.name), init_module=self))
            self._imported.add(key)
        check = TYPE_CHECKER.get("infer")
        if check is not None:
            check(self)
        return self

    def copy(self) -> "IRModule":
        new = IRModule()
        new.functions = dict(self.functions)
        new.type_definitions = dict(self.type_definitions)
        new.attrs = DictAttrs(self.attrs)
        new._gvars = dict(self._gvars)
        new._tvars = dict(self._tvars)
        new._imported = set(self._imported)
        return new

    clone = copy

    def astext(self, show_meta_data: bool = False) -> str:
        from .printer import module_astext
        return module_astext(self, show_meta_data=show_meta_data)

    def __str__(self) -> str:
        return self.astext()

    __repr__ = __str__
