"""Reading the Relay text format: `parse_module_text(text)` -> IRModule, `parse_expr_text(text)` -> Expr.

The grammar (relay.lark, shipped with the package) is parsed by lark's LALR(1) parser with a
contextual lexer; builder.py turns the tree into IR. These functions do not type-check: the
public `relay_backend.parse` (relay_backend/parser.py) runs InferType afterwards, as TVM's
parser does. Syntax errors, undefined names and bad literals raise ParseError with the source
name, line and column, the offending line and a caret.
"""
import pathlib
import threading

import lark

from ...errors import ParseError
from ..span import caret_excerpt, register_source
from .builder import Builder
from .metadata import MetadataError, parse_metadata, split_metadata

GRAMMAR_PATH = pathlib.Path(__file__).with_name("relay.lark")
SUPPORTED_VERSION = '"0.0.5"'

_LARK = None
_LARK_LOCK = threading.Lock()


def _parser() -> lark.Lark:
    """The LALR parser for relay.lark, built once per process (about half a second)."""
    global _LARK
    with _LARK_LOCK:
        if _LARK is None:
            _LARK = lark.Lark(GRAMMAR_PATH.read_text(), start=["start_module", "start_expr"],
                              parser="lalr", lexer="contextual", propagate_positions=True,
                              maybe_placeholders=True)
    return _LARK


def _located(source_name: str, text: str, line: int, column: int, message: str) -> ParseError:
    lines = text.split("\n")
    where = f"{source_name}:{line}:{column}: {message}"
    if 1 <= line <= len(lines):
        where += "\n" + caret_excerpt(lines[line - 1], column)
    return ParseError(where, source_name, line, column)


def _describe_expected(expected) -> str:
    names = sorted(expected)
    pretty = {"RPAR": "`)`", "LPAR": "`(`", "RBRACE": "`}`", "LBRACE": "`{`", "SEMICOLON": "`;`",
              "COMMA": "`,`", "LOCAL": "a variable `%x`", "IDENT": "a name", "EQUAL": "`=`",
              "COLON": "`:`", "RSQB": "`]`", "LSQB": "`[`", "INT": "an integer"}
    shown = [pretty.get(n, n.lower() if n.isupper() else n) for n in names[:8]]
    return ", ".join(shown) + (", ..." if len(names) > 8 else "")


def _syntax_tree(text: str, start: str, source_name: str):
    try:
        return _parser().parse(text, start=start)
    except lark.exceptions.UnexpectedToken as err:
        tok = err.token
        if tok.type == "$END":
            raise _located(source_name, text, err.line if err.line > 0 else text.count("\n") + 1,
                           max(err.column, 1), "unexpected end of input; expected "
                           + _describe_expected(err.expected)) from None
        raise _located(source_name, text, tok.line, tok.column,
                       f"unexpected `{tok}`; expected {_describe_expected(err.expected)}") from None
    except lark.exceptions.UnexpectedCharacters as err:
        char = text[err.pos_in_stream] if err.pos_in_stream < len(text) else "end of input"
        raise _located(source_name, text, err.line, err.column,
                       f"unexpected character `{char}`") from None
    except lark.exceptions.UnexpectedEOF as err:
        raise _located(source_name, text, text.count("\n") + 1, 1,
                       "unexpected end of input; expected " + _describe_expected(err.expected)) from None


def _prepare(text: str, source_name: str, init_meta_table):
    """(program text, meta table): the metadata section split off and read."""
    if not isinstance(text, str):
        raise ParseError(f"{source_name}: the Relay text must be a str, got {type(text).__name__}",
                         source_name)
    register_source(source_name, text)
    program, section, line = split_metadata(text)
    table = {}
    if section is not None:
        try:
            table = parse_metadata(section, line)
        except MetadataError as err:
            raise _located(source_name, text, err.line, 1, f"metadata: {err}") from None
    for kind, nodes in (init_meta_table or {}).items():
        table[kind] = list(table.get(kind, [])) + list(nodes)
    return program, table


def _check_version(tree, text: str, source_name: str) -> None:
    first = tree.children[0] if tree.children else None
    if isinstance(first, lark.Token) and first.type == "VERSION":
        version = str(first).split("=", 1)[1].rstrip("]").strip()
        if version != SUPPORTED_VERSION:
            raise _located(source_name, text, first.line, first.column,
                           f"invalid semantic version {version}; this parser reads "
                           f"#[version = {SUPPORTED_VERSION}]")


def parse_module_text(text: str, source_name: str = "from_string", init_module=None,
                      init_meta_table: dict = None):
    """The IRModule a Relay text defines (not type-checked).

    Names of `init_module`'s functions, types and constructors are visible to the text (so a
    file may use the Prelude's List); the result holds only what the text defines."""
    program, table = _prepare(text, source_name, init_meta_table)
    tree = _syntax_tree(program, "start_module", source_name)
    _check_version(tree, text, source_name)
    return Builder(source_name, init_module, table).module(tree)


def parse_expr_text(text: str, source_name: str = "from_string", init_module=None,
                    init_meta_table: dict = None):
    """The expression a Relay text denotes (not type-checked). A variable the text uses without
    binding it becomes a free variable (one per name), so `astext()` of any expression reads
    back; `free_var %x: T;` declares one with a type."""
    from ..drive import drive
    program, table = _prepare(text, source_name, init_meta_table)
    tree = _syntax_tree(program, "start_expr", source_name)
    _check_version(tree, text, source_name)
    builder = Builder(source_name, init_module, table, implicit_free_vars=True)
    expr = drive(builder.expr(tree.children[-1]))
    builder.check_names(globals_too=False)
    return expr


__all__ = ["parse_module_text", "parse_expr_text", "GRAMMAR_PATH"]
