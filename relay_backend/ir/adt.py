"""Algebraic data types: TypeData declares a type and its Constructors; Match takes a value apart
with Clauses whose patterns are PatternConstructor / PatternVar / PatternWildcard / PatternTuple."""
from .expr import Expr, Var
from .node import Node
from .types import GlobalTypeVar


class Constructor(Expr):
    """A constructor of an algebraic data type (e.g. Cons of List).

    Calling it builds the value: `cons(x, xs)` is `Call(cons, [x, xs])`. Its `tag`, its index
    among the type's constructors, is set by the TypeData that lists it.

    Parameters
    ----------
    name_hint : str
        The constructor's name, for printing and for lookup in a module.
    inputs : list of Type
        The types of the fields it takes, which may mention the type's type variables.
    belong_to : GlobalTypeVar
        The data type it builds values of.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """

    def __init__(self, name_hint: str, inputs, belong_to: GlobalTypeVar, span=None):
        self.span = span
        self.name_hint = name_hint
        self.inputs = tuple(inputs)
        self.belong_to = belong_to
        self.tag = -1

    def __call__(self, *args):
        from .expr import Call
        return Call(self, args)


class TypeData(Node):
    """The definition of an algebraic data type: `type header[type_vars] { constructors }`.

    Parameters
    ----------
    header : GlobalTypeVar
        The name of the type, as the module knows it.
    type_vars : list of TypeVar
        The type's type parameters (e.g. the element type of List).
    constructors : list of Constructor
        The ways to build a value of the type; their order gives their tags.
    """

    def __init__(self, header: GlobalTypeVar, type_vars, constructors):
        self.header = header
        self.type_vars = tuple(type_vars)
        self.constructors = tuple(constructors)
        for tag, ctor in enumerate(self.constructors):
            ctor.tag = tag


class Pattern(Node):
    """Base class of Match patterns."""


class PatternWildcard(Pattern):
    """`_`: matches anything, binds nothing."""


class PatternVar(Pattern):
    """A pattern that matches any value and binds it to a variable.

    Parameters
    ----------
    var : Var
        The variable the matched value is bound to in the clause's body.
    """

    def __init__(self, var: Var):
        self.var = var


class PatternConstructor(Pattern):
    """A pattern that matches a value built by one constructor whose fields match sub-patterns.

    Parameters
    ----------
    constructor : Constructor
        The constructor the value must have been built with.
    patterns : list of Pattern, optional
        One pattern per field of the constructor; None (the default) for a constructor
        without fields.
    """

    def __init__(self, constructor: Constructor, patterns=None):
        self.constructor = constructor
        self.patterns = tuple(patterns or ())


class PatternTuple(Pattern):
    """A pattern that matches a tuple whose fields match sub-patterns.

    Parameters
    ----------
    patterns : list of Pattern, optional
        One pattern per field of the tuple. Defaults to None (the empty tuple).
    """
    def __init__(self, patterns=None):
        self.patterns = tuple(patterns or ())


class Clause(Node):
    """One arm of a Match: `lhs => rhs`.

    Parameters
    ----------
    lhs : Pattern
        The pattern the matched value is tested against.
    rhs : Expr
        The expression evaluated when the pattern matches, with the pattern's variables bound.
    """

    def __init__(self, lhs: Pattern, rhs: Expr):
        self.lhs = lhs
        self.rhs = rhs


class Match(Expr):
    """Take a value of an algebraic data type apart: `match (data) { clauses }`.

    The clauses are tried in order; the first whose pattern matches is evaluated.

    Parameters
    ----------
    data : Expr
        The value to match.
    clauses : list of Clause
        The arms, tried in order.
    complete : bool, optional
        True (the default) for `match`, which must cover every value (the analysis checks
        it); False for `match?`, which may leave values unmatched.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """

    def __init__(self, data: Expr, clauses, complete: bool = True, span=None):
        self.span = span
        self.data = data
        self.clauses = tuple(clauses)
        self.complete = complete


def pattern_vars(pattern: Pattern) -> list:
    """The Vars a pattern binds, left to right."""
    out, stack = [], [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, PatternVar):
            out.append(p.var)
        elif isinstance(p, (PatternConstructor, PatternTuple)):
            stack.extend(reversed(p.patterns))
    return out
