"""Algebraic data types: TypeData declares a type and its Constructors; Match takes a value apart
with Clauses whose patterns are PatternConstructor / PatternVar / PatternWildcard / PatternTuple."""
from .expr import Expr, Var
from .types import GlobalTypeVar


class Constructor(Expr):
    """A constructor of an ADT (e.g. Cons). `tag` is its index, set by the TypeData."""

    def __init__(self, name_hint: str, inputs, belong_to: GlobalTypeVar, span=None):
        self.span = span
        self.name_hint = name_hint
        self.inputs = tuple(inputs)
        self.belong_to = belong_to
        self.tag = -1

    def __call__(self, *args):
        from .expr import Call
        return Call(self, args)


class TypeData:
    """`type header[type_vars] { constructors }`: the definition of an ADT."""

    def __init__(self, header: GlobalTypeVar, type_vars, constructors):
        self.header = header
        self.type_vars = tuple(type_vars)
        self.constructors = tuple(constructors)
        for tag, ctor in enumerate(self.constructors):
            ctor.tag = tag


class Pattern:
    """Base class of Match patterns."""


class PatternWildcard(Pattern):
    """`_`: matches anything, binds nothing."""


class PatternVar(Pattern):
    """Matches anything and binds it to `var`."""

    def __init__(self, var: Var):
        self.var = var


class PatternConstructor(Pattern):
    """Matches a value built by `constructor` whose fields match `patterns`."""

    def __init__(self, constructor: Constructor, patterns=None):
        self.constructor = constructor
        self.patterns = tuple(patterns or ())


class PatternTuple(Pattern):
    def __init__(self, patterns=None):
        self.patterns = tuple(patterns or ())


class Clause:
    """`lhs => rhs` inside a Match."""

    def __init__(self, lhs: Pattern, rhs: Expr):
        self.lhs = lhs
        self.rhs = rhs


class Match(Expr):
    """`match (data) { clauses }`; `complete` marks an exhaustive match (`match` vs `match?`)."""

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
