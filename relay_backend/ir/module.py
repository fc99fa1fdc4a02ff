"""IRModule: global functions by GlobalVar, ADT definitions by GlobalTypeVar, and module attrs.

The API is tvm.IRModule's (v0.18):

    mod["main"] = fn / mod[gv] = fn            add or replace a function (a str names a new
                                               GlobalVar, or the existing one of that name)
    mod[GlobalTypeVar or name] = TypeData      add or replace an ADT definition
    mod["f"], mod[gv], mod[gtv]                look up; `in`, `del mod["f"]`
    update(other), update_func(gv, fn)         merge a module / dict; replace one function
    get_global_var(s), get_global_type_var(s), get_type("List") -> (List, Cons, Nil),
    get_constructor(tag), functions_items(), replace_global_vars({old: new})
    from_expr(expr, functions, type_defs)      a module whose main is expr
    get_attr / with_attr / with_attrs / without_attr, global_infos / update_global_info
    import_from_std("prelude.rly")             read a .rly file of relay_backend/std/ with the
                                               parser (once per module), then type-check

`functions` and `type_definitions` are read-only views (as TVM's Maps): change a module with
the methods above, which keep its names and definitions consistent. A missing name is a
ModuleLookupError (also a KeyError); a wrong key or value is an IRConstructionError.
"""
import pathlib
from collections.abc import Mapping

from ..errors import IRConstructionError, ModuleLookupError
from .adt import Constructor, TypeData
from .attrs import DictAttrs
from .expr import Expr, Function, GlobalVar
from .node import Node
from .types import GlobalTypeVar

STD_DIR = pathlib.Path(__file__).resolve().parents[1] / "std"

class DefinitionsView(Mapping):
    """A read-only view of a module's functions or type definitions (tvm's Map): reading works
    as a dict's; writing says which IRModule method to use."""

    def __init__(self, table: dict, how: str):
        self._table = table
        self._how = how

    def __getitem__(self, key):
        return self._table[key]

    def __iter__(self):
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __setitem__(self, key, value):
        raise IRConstructionError(f"IRModule definitions are read-only here; {self._how}")

    __delitem__ = __setitem__

    def __repr__(self) -> str:
        return repr(self._table)


# Set by relay_backend.transform when it is imported: type-checks a module in place. ir/ cannot
# import transform/, and import_from_std returns a type-checked module as TVM's does.
TYPE_CHECKER = {}


class IRModule(Node):
    """A set of named functions and type definitions (tvm.IRModule).

    Parameters
    ----------
    functions : dict, optional
        GlobalVar (or name) -> Function, the module's functions; "main" is the entry point.
        Defaults to None (empty).
    type_definitions : dict, optional
        GlobalTypeVar -> TypeData, the algebraic data types it defines. Defaults to None.
    attrs : dict, optional
        Module attributes (e.g. the executor chosen for it). Defaults to None.
    global_infos : dict, optional
        name -> list of global information entries, as TVM's GlobalInfo lists. Defaults to None.
    """

    def __init__(self, functions=None, type_definitions=None, attrs=None, global_infos=None):
        self._functions = {}        # GlobalVar -> Function
        self._type_definitions = {}  # GlobalTypeVar -> TypeData
        self.attrs = DictAttrs(attrs or {})
        self.global_infos = dict(global_infos or {})   # name -> [info] (tvm's GlobalInfo lists)
        self._gvars = {}           # name -> GlobalVar
        self._tvars = {}           # name -> GlobalTypeVar
        self._imported = set()     # std files already imported (import_from_std runs once each)
        for gtv, data in dict(type_definitions or {}).items():
            self[gtv] = data
        for gv, fn in dict(functions or {}).items():
            self[gv] = fn

    # --- read-only views ---------------------------------------------------------------------
    @property
    def functions(self):
        """GlobalVar -> Function (read-only; use mod[gv] = fn, update_func or del mod[gv])."""
        return DefinitionsView(self._functions, "use mod[gv] = fn, mod.update_func(gv, fn) or del mod[gv]")

    @property
    def type_definitions(self):
        """GlobalTypeVar -> TypeData (read-only; use mod[gtv] = TypeData)."""
        return DefinitionsView(self._type_definitions, "use mod[global_type_var] = TypeData(...)")

    # --- functions ---------------------------------------------------------------------------
    def _to_gvar(self, key, create: bool) -> GlobalVar:
        if isinstance(key, GlobalVar):
            existing = self._gvars.get(key.name_hint)
            if existing is not None and existing is not key:
                raise IRConstructionError(
                    f"IRModule already has a different GlobalVar named @{key.name_hint}; use "
                    f"mod.get_global_var({key.name_hint!r}) (or mod[{key.name_hint!r}] = fn)")
            return key
        if isinstance(key, str):
            if key in self._gvars:
                return self._gvars[key]
            if create:
                return GlobalVar(key)
            raise ModuleLookupError(f"IRModule has no function @{key}; it has {sorted(self._gvars)}")
        raise IRConstructionError(f"an IRModule key must be a str, GlobalVar or GlobalTypeVar, got "
                                  f"{type(key).__name__}")

    def __setitem__(self, key, value) -> None:
        """mod[name or GlobalVar] = Function; mod[name or GlobalTypeVar] = TypeData."""
        if isinstance(value, TypeData) or isinstance(key, GlobalTypeVar):
            self._add_type(key, value)
            return
        if not isinstance(value, Function):
            raise IRConstructionError(f"IRModule values must be relay Functions (or TypeData under a "
                                      f"GlobalTypeVar), got {type(value).__name__}")
        gv = self._to_gvar(key, create=True)
        self._gvars[gv.name_hint] = gv
        self._functions[gv] = value

    def add(self, key, func) -> None:
        """Add or replace a function: the same as mod[key] = func.

        Parameters
        ----------
        key : str or GlobalVar
            The function's name (a new GlobalVar, or the existing one of that name) or GlobalVar.
        func : Function
            The function; a TypeData is added as a type definition instead.
        """
        self[key] = func

    def update_func(self, var, func) -> None:
        """Replace (or add) the function of one GlobalVar (tvm IRModule.update_func).

        Parameters
        ----------
        var : GlobalVar or str
            The function's GlobalVar, or its name.
        func : Function
            The new definition.
        """
        self[var] = func

    def update(self, other) -> None:
        """Add every function and type definition of another module, replacing those with the same
        name (tvm IRModule.update).

        Parameters
        ----------
        other : IRModule or dict
            The module to merge in, or a dict {name or GlobalVar: Function}.
        """
        if isinstance(other, dict):
            other = IRModule(other)
        if not isinstance(other, IRModule):
            raise IRConstructionError(f"IRModule.update takes an IRModule or a dict of functions, got "
                                      f"{type(other).__name__}")
        for gtv, data in other.type_definitions.items():
            self._add_type(gtv, data)
        for gv, fn in other.functions.items():
            old = self._gvars.get(gv.name_hint)
            if old is not None and old is not gv:
                del self._functions[old]
                del self._gvars[gv.name_hint]
            self[gv] = fn

    def __getitem__(self, key):
        if isinstance(key, GlobalTypeVar):
            if key not in self._type_definitions:
                raise ModuleLookupError(f"IRModule has no type {key.name_hint}; it has {sorted(self._tvars)}")
            return self._type_definitions[key]
        gv = self._to_gvar(key, create=False)
        if gv not in self._functions:
            raise ModuleLookupError(f"IRModule has no function @{gv.name_hint}; it has {sorted(self._gvars)}")
        return self._functions[gv]

    def __contains__(self, key) -> bool:
        if isinstance(key, str):
            return key in self._gvars
        if isinstance(key, GlobalTypeVar):
            return key in self._type_definitions
        return key in self._functions

    def __delitem__(self, key) -> None:
        gv = self._to_gvar(key, create=False)
        if gv not in self._functions:
            raise ModuleLookupError(f"IRModule has no function @{gv.name_hint}")
        del self._functions[gv]
        del self._gvars[gv.name_hint]

    def get_global_var(self, name: str) -> GlobalVar:
        """The GlobalVar of a function (tvm IRModule.get_global_var).

        Parameters
        ----------
        name : str
            The function's name, e.g. "main".

        Returns
        -------
        gv : GlobalVar
            Its GlobalVar; a ModuleLookupError names the functions there are when it has none.
        """
        if not isinstance(name, str):
            raise IRConstructionError(f"get_global_var takes a name, got {type(name).__name__}")
        return self._to_gvar(name, create=False)

    def get_global_vars(self) -> list:
        """Every function's GlobalVar, sorted by name (as TVM's)."""
        return sorted(self._functions, key=lambda gv: gv.name_hint)

    def items(self):
        """The (GlobalVar, Function) pairs, in the order the functions were added (as dict.items).

        Returns
        -------
        items : dict_items
            A live view of the module's functions.
        """
        return self._functions.items()

    def functions_items(self) -> list:
        """The (GlobalVar, Function) pairs sorted by name (tvm IRModule.functions_items)."""
        return sorted(self._functions.items(), key=lambda item: item[0].name_hint)

    def replace_global_vars(self, replacements) -> "IRModule":
        """A copy with GlobalVars renamed or replaced everywhere, definitions and references
        (tvm IRModule.replace_global_vars).

        Parameters
        ----------
        replacements : dict
            {old name or GlobalVar: new name or GlobalVar}; a new name makes a fresh GlobalVar.

        Returns
        -------
        mod : IRModule
            The renamed copy; this module is not changed.
        """
        from .functor import ExprMutator
        mapping = {}
        for old, new in dict(replacements).items():
            old_gv = self.get_global_var(old) if isinstance(old, str) else old
            mapping[old_gv] = GlobalVar(new) if isinstance(new, str) else new

        class _Rename(ExprMutator):
            def visit_global_var(self, gv):
                return mapping.get(gv, gv)

        new = self.copy()
        new._functions, new._gvars = {}, {}
        for gv, fn in self._functions.items():
            new[mapping.get(gv, gv)] = _Rename().visit(fn) if isinstance(fn, Function) else fn
        return new

    # --- type definitions --------------------------------------------------------------------
    def _add_type(self, key, data) -> None:
        if not isinstance(data, TypeData):
            raise IRConstructionError(f"a GlobalTypeVar must map to a TypeData, got {type(data).__name__}")
        if isinstance(key, str):
            key = self._tvars.get(key, data.header) if key == data.header.name_hint else None
        if key is not data.header:
            name = getattr(key, "name_hint", key)
            raise IRConstructionError(f"TypeData of {data.header.name_hint} added under {name!r}: the key "
                                      f"must be the TypeData's header (its constructors belong to it)")
        old = self._tvars.get(key.name_hint)
        if old is not None and old is not key:
            del self._type_definitions[old]
        self._tvars[key.name_hint] = key
        self._type_definitions[key] = data

    def add_type_definition(self, data: TypeData) -> None:
        """Add (or replace) an algebraic data type, under its own header GlobalTypeVar.

        Parameters
        ----------
        data : TypeData
            The definition: its header and its constructors.
        """
        self._add_type(data.header, data)

    def get_global_type_var(self, name: str) -> GlobalTypeVar:
        """The GlobalTypeVar of an ADT defined in the module.

        Parameters
        ----------
        name : str
            The type's name, e.g. "List".

        Returns
        -------
        gtv : GlobalTypeVar
            Its header; a ModuleLookupError names the types there are when it has none.
        """
        if name not in self._tvars:
            raise ModuleLookupError(f"IRModule has no type {name!r}; it has {sorted(self._tvars)}")
        return self._tvars[name]

    def get_global_type_vars(self) -> list:
        """Every ADT's GlobalTypeVar, sorted by name."""
        return sorted(self._type_definitions, key=lambda gtv: gtv.name_hint)

    def get_type(self, name: str) -> tuple:
        """The header and constructors of an ADT, e.g. (List, Cons, Nil) for "List"
        (tvm IRModule.get_type).

        Parameters
        ----------
        name : str
            The type's name.

        Returns
        -------
        definition : tuple
            (GlobalTypeVar, *constructors), the constructors in tag order.
        """
        gtv = self.get_global_type_var(name)
        return (gtv, *self._type_definitions[gtv].constructors)

    def get_constructor(self, tag: int, type_name: str = None) -> Constructor:
        """The constructor with a given tag (tvm IRModule.get_constructor).

        Parameters
        ----------
        tag : int
            Its index among the constructors of its ADT.
        type_name : str, optional
            The ADT to look in, needed when several define that tag; None (the default) takes the
            first ADT that does.

        Returns
        -------
        constructor : Constructor
            The constructor; a ModuleLookupError when none has the tag.
        """
        for data in self._type_definitions.values():
            if type_name is not None and data.header.name_hint != type_name:
                continue
            if 0 <= tag < len(data.constructors):
                return data.constructors[tag]
        raise ModuleLookupError(f"no constructor with tag {tag}"
                                + (f" in type {type_name}" if type_name else ""))

    # --- attributes --------------------------------------------------------------------------
    def get_attr(self, attr_key: str):
        """A module attribute (tvm IRModule.get_attr).

        Parameters
        ----------
        attr_key : str
            The attribute's name, e.g. "executor".

        Returns
        -------
        value : object
            Its value, or None when the module does not have it.
        """
        return self.attrs.get(attr_key)

    def with_attr(self, attr_key: str, attr_value) -> "IRModule":
        """A copy of the module with one attribute set (tvm IRModule.with_attr).

        Parameters
        ----------
        attr_key : str
            The attribute's name.
        attr_value : object
            Its value.

        Returns
        -------
        mod : IRModule
            The copy; this module is not changed.
        """
        new = self.copy()
        new.attrs = DictAttrs({**self.attrs, attr_key: attr_value})
        return new

    def with_attrs(self, attr_map) -> "IRModule":
        """A copy of the module with several attributes set at once (tvm IRModule.with_attrs).

        Parameters
        ----------
        attr_map : dict or DictAttrs
            {name: value} for each attribute to set; the others are kept.

        Returns
        -------
        mod : IRModule
            The copy; this module is not changed.
        """
        new = self.copy()
        new.attrs = DictAttrs({**self.attrs, **dict(attr_map)})
        return new

    def without_attr(self, attr_key: str) -> "IRModule":
        """A copy of the module without one attribute (tvm IRModule.without_attr).

        Parameters
        ----------
        attr_key : str
            The attribute to drop; a name the module does not have is ignored.

        Returns
        -------
        mod : IRModule
            The copy; this module is not changed.
        """
        new = self.copy()
        new.attrs = DictAttrs({k: v for k, v in self.attrs.items() if k != attr_key})
        return new

    def update_global_info(self, name: str, global_info) -> None:
        """Set one list of global information entries (tvm IRModule.update_global_info).

        Parameters
        ----------
        name : str
            The list's name.
        global_info : iterable
            Its entries; they replace any list of that name.
        """
        self.global_infos[name] = list(global_info)

    # --- construction and printing -----------------------------------------------------------
    @staticmethod
    def from_expr(expr: Expr, functions=None, type_defs=None) -> "IRModule":
        """A module whose "main" is an expression (tvm IRModule.from_expr).

        Parameters
        ----------
        expr : Expr
            The entry point; an expression that is not a Function is wrapped in one whose
            parameters are its free variables.
        functions : dict, optional
            {name or GlobalVar: Function}, more functions to add. Defaults to None.
        type_defs : dict, optional
            {name or GlobalTypeVar: TypeData}, type definitions to add. Defaults to None.

        Returns
        -------
        mod : IRModule
            The new module.
        """
        if not isinstance(expr, Expr):
            raise IRConstructionError(f"IRModule.from_expr takes a relay expression, got {type(expr).__name__}")
        mod = IRModule(functions, type_defs)
        if not isinstance(expr, Function):
            from .vars import free_vars
            expr = Function(free_vars(expr), expr)
        mod["main"] = expr
        return mod

    def import_from_std(self, file_to_import: str) -> "IRModule":
        """Add the definitions of a standard library file shipped in relay_backend/std (tvm
        IRModule.import_from_std); each file is read once per module.

        Parameters
        ----------
        file_to_import : str
            The bare name of the file, e.g. "prelude.rly" or "nat.rly" (never a path).

        Returns
        -------
        mod : IRModule
            This module, with the definitions added and type-checked.
        """
        known = sorted(p.name for p in STD_DIR.glob("*.rly"))
        if file_to_import not in known:   # a bare name of a shipped file, never a path
            raise ModuleLookupError(f"no standard library file {file_to_import!r}; available: {known}")
        return self._import(STD_DIR / file_to_import)

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
        """A new module with the same definitions and attributes (the nodes are shared)."""
        new = IRModule()
        new._functions = dict(self._functions)
        new._type_definitions = dict(self._type_definitions)
        new.attrs = DictAttrs(self.attrs)
        new.global_infos = dict(self.global_infos)
        new._gvars = dict(self._gvars)
        new._tvars = dict(self._tvars)
        new._imported = set(self._imported)
        return new

    clone = copy

    def astext(self, show_meta_data: bool = False) -> str:
        """The module as Relay text: its type definitions, then `def @name(...)` per function.

        Parameters
        ----------
        show_meta_data : bool, optional
            If True, end with the metadata section holding the values of large constants (else
            they print as meta[relay.Constant][i] references). Defaults to False.

        Returns
        -------
        text : str
            The text, starting with the version header.
        """
        from .printer import module_astext
        return module_astext(self, show_meta_data=show_meta_data)

    def __str__(self) -> str:
        return self.astext()

    __repr__ = __str__
