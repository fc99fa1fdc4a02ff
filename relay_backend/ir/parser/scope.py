"""Name tables, scopes, spans and located errors of one parse (the base of the IR builder).

`NameTable` holds what TVM's parser keeps while it reads a source: the local variables of each
open scope, the graph bindings (`%0 = ...;`), global functions, types and constructors (seeded
from an initial module), the symbolic dims seen so far, and the source name every Span and
ParseError refers to.
"""
from ...errors import ParseError
from ..expr import GlobalVar, Var
from ..module import IRModule
from ..span import SourceName, Span, caret_excerpt, source_line


class NameTable:
    """The names visible while one source is read, and how its errors point into it."""

    def __init__(self, source_name: str, init_module: IRModule = None, meta_table: dict = None,
                 implicit_free_vars: bool = False):
        self.source_name = source_name
        self.source = SourceName(source_name)   # one object shared by every span of this parse
        self.meta_table = meta_table or {}
        self.implicit_free_vars = implicit_free_vars
        self.locals = [{}]          # scopes of %name -> Var, innermost last
        self.graph = [{}]           # scopes of %N -> Expr
        self.type_scopes = []       # scopes of type parameter name -> TypeVar
        self.size_vars = {}         # symbolic dim name -> tir.SizeVar (one per name per parse)
        self.free_vars = {}         # implicitly created free vars (parse_expr only)
        self.globals = {}           # name -> GlobalVar
        self.global_uses = {}       # name -> first token using it
        self.types = {}             # name -> GlobalTypeVar
        self.type_uses = {}         # name -> first node naming it
        self.type_data = {}         # GlobalTypeVar -> TypeData (defined in the text or the module)
        self.ctors = {}             # name -> Constructor
        if init_module is not None:
            for gv in init_module.functions:
                self.globals[gv.name_hint] = gv
            for gtv, data in init_module.type_definitions.items():
                self.types[gtv.name_hint] = gtv
                self.type_data[gtv] = data
                for ctor in data.constructors:
                    self.ctors[ctor.name_hint] = ctor
        self.defined_globals = set(self.globals)
        self.new_types = set()      # names of the types this text defines
        self.new_globals = set()    # names of the functions this text defines

    # --- errors and spans -------------------------------------------------------------------
    def span(self, item) -> Span:
        """The Span of a tree (its meta) or a token; None when lark recorded no position."""
        meta = getattr(item, "meta", item)
        line = getattr(meta, "line", None)
        if line is None:
            return None
        return Span(self.source, line, meta.end_line, meta.column, meta.end_column)

    def error(self, message: str, item) -> ParseError:
        """A ParseError at `item` (a token or tree) with the offending line and a caret."""
        span = self.span(item)
        if span is None:
            return ParseError(f"{self.source_name}: {message}", self.source_name)
        text = f"{self.source_name}:{span.line}:{span.column}: {message}"
        line = source_line(self.source_name, span.line)
        if line is not None:
            width = span.end_column - span.column if span.end_line == span.line else 1
            text += "\n" + caret_excerpt(line, span.column, width)
        return ParseError(text, self.source_name, span.line, span.column)

    # --- scopes -----------------------------------------------------------------------------
    def push(self) -> None:
        self.locals.append({})
        self.graph.append({})

    def pop(self) -> None:
        self.locals.pop()
        self.graph.pop()

    def bind_local(self, token, type_tree=None) -> Var:
        ty = None if type_tree is None else self.type(type_tree)
        v = Var(str(token)[1:], ty, span=self.span(token))
        self.locals[-1][str(token)[1:]] = v
        return v

    def lookup_local(self, token) -> Var:
        name = str(token)[1:]
        for scope in reversed(self.locals):
            if name in scope:
                return scope[name]
        if self.implicit_free_vars:
            v = self.free_vars.get(name)
            if v is None:
                v = self.free_vars[name] = Var(name, span=self.span(token))
            return v
        raise self.error(f"undefined variable `%{name}`; bind it with a parameter, a `let`, or "
                         f"declare it with `free_var %{name}: <type>;`", token)

    def lookup_graph(self, token):
        for scope in reversed(self.graph):
            if str(token) in scope:
                return scope[str(token)]
        raise self.error(f"undefined graph binding `{token}`: bind it first with `{token} = ...;`",
                         token)

    def global_var(self, token) -> GlobalVar:
        name = str(token)[1:]
        gv = self.globals.get(name)
        if gv is None:
            gv = self.globals[name] = GlobalVar(name, span=self.span(token))
        self.global_uses.setdefault(name, token)
        return gv

    def check_names(self, globals_too: bool = True) -> None:
        """Every type name is an ADT defined somewhere, and (in a module) every @name used is
        defined."""
        for name, token in self.global_uses.items():
            if globals_too and name not in self.defined_globals:
                raise self.error(f"undefined global function `@{name}`", token)
        for name, item in self.type_uses.items():
            if self.types[name] not in self.type_data:
                raise self.error(f"undefined type `{name}`: not a dtype, a type parameter in scope "
                                 f"or a type defined in the module", item)


__all__ = ["NameTable"]
