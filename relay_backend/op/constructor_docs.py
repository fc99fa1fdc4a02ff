"""Numpydoc docstrings for the operator constructors that a factory builds from a table.

A table row (op/tensor.py's elementwise ops, op/reduce.py's reductions) declares an op's input
names and attrs but no prose, so the factory that turns a row into `relay.exp(data)` asks
`constructor_doc` for its docstring: a one-line summary, then a Parameters section with one entry
per constructor parameter (its meaning looked up by name in PARAMETER_MEANINGS, its default read
from the signature) and a Returns section, in the layout of TVM's docstrings:

    Parameters
    ----------
    data : relay.Expr
        The input tensor.

A new row therefore gets a full docstring for free; a parameter name the table has not seen
before is an error at import, so a row can never ship an undocumented parameter.
"""
import inspect

from ..docstrings import complete_doc, section
from ..errors import OpDefinitionError, RelayError

# parameter name -> (type, meaning): the names the table-built constructors take
PARAMETER_MEANINGS = {
    "data": ("relay.Expr", "The input tensor."),
    "lhs": ("relay.Expr", "The left operand. Its shape is broadcast against `rhs` by numpy's rules."),
    "rhs": ("relay.Expr", "The right operand. Its shape is broadcast against `lhs` by numpy's rules."),
    "axis": ("None or int or tuple of int",
             "The axis or axes to reduce over; negative values count from the last axis. None "
             "reduces over every axis."),
    "keepdims": ("bool", "If True, each reduced axis stays in the result with length 1, so the "
                         "result broadcasts against `data`; if False it is removed."),
    "exclude": ("bool", "If True, the reduction runs over every axis that is *not* in `axis` "
                        "instead."),
}
RESULT = ("result", "relay.Expr", "The call of the operator: an expression for the output tensor.")


def constructor_doc(summary: str, constructor, meanings=None, result=RESULT) -> str:
    """The numpydoc docstring of a table-built constructor.

    Parameters
    ----------
    summary : str
        The description that opens the docstring (what the op computes). It may carry a
        Parameters section of its own for the entries that differ from the tables'.
    constructor : callable
        The constructor; its signature gives the parameter names, their order and defaults.
    meanings : dict, optional
        name -> (type, meaning) overriding or extending PARAMETER_MEANINGS for this op.
    result : tuple of str
        The (name, type, meaning) of the Returns entry.

    Returns
    -------
    doc : str
        The docstring, ready for `constructor.__doc__`.
    """
    try:
        return complete_doc(summary, constructor, {**PARAMETER_MEANINGS, **(meanings or {})}, result)
    except RelayError as err:
        raise OpDefinitionError(f"{summary.splitlines()[0]!r}: {err} (PARAMETER_MEANINGS in "
                                f"op/constructor_docs.py, or meanings=)") from None


def documented(meanings=None, result=RESULT):
    """Decorator: complete a constructor's docstring with the Parameters and Returns sections
    constructor_doc builds (so constructors sharing parameters share their text).

    Parameters
    ----------
    meanings, result
        Passed on to constructor_doc (the extra parameter meanings, the Returns entry).

    Returns
    -------
    decorate : callable
        Takes the constructor and returns it with its docstring completed.
    """
    def decorate(constructor):
        constructor.__doc__ = constructor_doc(inspect.getdoc(constructor), constructor, meanings, result)
        return constructor
    return decorate


__all__ = ["constructor_doc", "documented", "section", "PARAMETER_MEANINGS", "RESULT"]
