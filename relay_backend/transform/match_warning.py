"""The non-exhaustive match warning InferType gives: a `match` (complete=True) whose clauses miss
some values warns with the patterns it misses (analysis.unmatched_cases); `match?`
(complete=False) declares that partiality is intended and is not checked. Relay makes this an
error; here it is a warning so programs that never reach the missing case still run.
"""
import warnings

from ..analysis.match_exhaustion import unmatched_cases
from ..errors import RelayError
from ..ir.adt import PatternConstructor, PatternTuple, PatternVar
from ..ir.excerpt import excerpt


class NonExhaustiveMatchWarning(UserWarning):
    """A complete `match` does not handle every value of its type."""


def _pattern_text(p) -> str:
    if isinstance(p, PatternConstructor):
        inner = ", ".join(_pattern_text(q) for q in p.patterns)
        return f"{p.constructor.name_hint}({inner})" if p.patterns else p.constructor.name_hint
    if isinstance(p, PatternTuple):
        return "(" + ", ".join(_pattern_text(q) for q in p.patterns) + ")"
    if isinstance(p, PatternVar):
        return f"%{p.var.name_hint}"
    return "_"


def warn_unmatched(match, mod) -> None:
    """Warn if `match` misses cases; silent when its ADT is unknown (InferType reports that)."""
    try:
        missing = unmatched_cases(match, mod)
    except RelayError:  # a malformed match is InferType's to report, not ours
        return
    if missing:
        cases = ", ".join(_pattern_text(p) for p in missing)
        warnings.warn(f"match expression does not handle the following cases: {cases} "
                      f"(in `{excerpt(match)}`); add clauses for them or write `match?` "
                      f"(complete=False) if they cannot happen", NonExhaustiveMatchWarning,
                      stacklevel=2)


__all__ = ["warn_unmatched", "NonExhaustiveMatchWarning"]
