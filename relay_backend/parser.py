"""Reading Relay text: `relay.parse`, `relay.fromtext`, `relay.parse_expr` (and the tvm.parser form).

    mod = relay.parse('''
    #[version = "0.0.5"]
    def @main(%x: Tensor[(2, 3), float32]) {
      nn.relu(%x)
    }
    ''')

`parse` reads a module and type-checks it (InferType), as TVM's parser does, so a type error
in the text is reported with the line and column of the expression at fault. Everything
`astext()` prints reads back: `parse(mod.astext(show_meta_data=True))` is structurally equal to
`mod`. The grammar and the tree-to-IR builder live in ir/parser/.
"""
from .ir.parser import parse_expr_text, parse_module_text
from .transform.infer_type import InferType


def parse(source: str, source_name: str = "from_string", init_module=None, init_meta_table=None):
    """The type-checked IRModule that Relay text defines (tvm.relay.parse).

    Parameters
    ----------
    source : str
        The Relay text, starting with its version header (#[version = "0.0.5"]).
    source_name : str, optional
        The name of the source in spans and error messages. Defaults to "from_string".
    init_module : IRModule, optional
        A module whose functions, types and constructors the text may use; the result then
        holds both, as TVM's ParseModule with an initial module does. Defaults to None.
    init_meta_table : dict, optional
        {"relay.Constant": [Constant, ...]} appended to the text's metadata, for text printed
        without its metadata section. Defaults to None.

    Returns
    -------
    mod : IRModule
        The parsed, type-checked module.
    """
    mod = parse_module_text(source, source_name, init_module, init_meta_table)
    if init_module is not None:
        merged = init_module.copy()
        merged.update(mod)
        mod = merged
    return InferType()(mod)


def fromtext(source: str, source_name: str = "from_string"):
    """The same as parse (tvm.relay.fromtext).

    Parameters
    ----------
    source : str
        The Relay text.
    source_name : str, optional
        The name of the source in spans and error messages. Defaults to "from_string".

    Returns
    -------
    mod : IRModule
        The parsed, type-checked module.
    """
    return parse(source, source_name)


def parse_expr(source: str, source_name: str = "from_string"):
    """The expression that Relay text denotes, not type-checked (tvm.relay.parse_expr).

    Variables the text uses without binding become free variables, one per name.

    Parameters
    ----------
    source : str
        The Relay text of one expression.
    source_name : str, optional
        The name of the source in spans and error messages. Defaults to "from_string".

    Returns
    -------
    expr : Expr
        The expression.
    """
    return parse_expr_text(source, source_name)


__all__ = ["parse", "fromtext", "parse_expr"]
