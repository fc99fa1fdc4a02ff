"""unmatched_cases (tvm.relay.analysis.unmatched_cases): the values a Match does not handle.

Candidates start as one wildcard. Each candidate is tried against the clauses in order: a
clause that clashes with it is skipped; a clause that matches it covers it; a clause that needs
the candidate to be more specific (a constructor or tuple pattern against a wildcard) expands
the candidate's wildcards one level, into every constructor of the ADT, and the expansions are
tried again. A candidate no clause covers is returned, so the result lists representative
unhandled patterns (e.g. `Nil` for a match that only handles `Cons(_, _)`).
"""
import itertools

from ..errors import RelayError
from ..ir.adt import Match, PatternConstructor, PatternTuple, PatternVar, PatternWildcard

MATCH, CLASH, UNSPECIFIED = 0, 1, 2


def _check_fields(patterns, candidates) -> int:
    result = MATCH
    for pat, cand in zip(patterns, candidates):
        sub = check_pattern(pat, cand)
        if sub == CLASH:
            return CLASH
        if sub == UNSPECIFIED:
            result = UNSPECIFIED
    return result


def check_pattern(pattern, candidate) -> int:
    """MATCH if every value `candidate` describes matches `pattern`, CLASH if none does,
    UNSPECIFIED if the candidate is too general to tell."""
    if isinstance(pattern, (PatternWildcard, PatternVar)):
        return MATCH
    if isinstance(pattern, PatternConstructor):
        if not isinstance(candidate, PatternConstructor):
            return UNSPECIFIED
        if pattern.constructor is not candidate.constructor:
            return CLASH
        return _check_fields(pattern.patterns, candidate.patterns)
    if isinstance(pattern, PatternTuple):
        if not isinstance(candidate, PatternTuple):
            return UNSPECIFIED
        return _check_fields(pattern.patterns, candidate.patterns)
    raise RelayError(f"unmatched_cases: unknown pattern {type(pattern).__name__}")


def _constructors(ctor, mod):
    if mod is None or ctor.belong_to not in mod.type_definitions:
        raise RelayError(f"unmatched_cases: the ADT {ctor.belong_to.name_hint} of constructor "
                         f"{ctor.name_hint} is not defined; pass the module holding it as mod=")
    return mod.type_definitions[ctor.belong_to].constructors


def expand_wildcards(pattern, candidate, mod) -> list:
    """The candidates `candidate` splits into, one level deeper where `pattern` looks."""
    if isinstance(pattern, PatternConstructor):
        if isinstance(candidate, PatternWildcard):
            return [PatternConstructor(c, [PatternWildcard() for _ in c.inputs])
                    for c in _constructors(pattern.constructor, mod)]
        return [PatternConstructor(candidate.constructor, list(fields))
                for fields in _field_products(pattern.patterns, candidate.patterns, mod)]
    if isinstance(pattern, PatternTuple):
        if isinstance(candidate, PatternWildcard):
            return [PatternTuple([PatternWildcard() for _ in pattern.patterns])]
        return [PatternTuple(list(fields))
                for fields in _field_products(pattern.patterns, candidate.patterns, mod)]
    return [candidate]


def _field_products(patterns, candidates, mod):
    options = [expand_wildcards(p, c, mod) for p, c in zip(patterns, candidates)]
    return itertools.product(*options)


def unmatched_cases(match: Match, mod=None) -> list:
    """Patterns describing the values no clause of a match handles
    (tvm.relay.analysis.unmatched_cases).

    Parameters
    ----------
    match : Match
        The match expression.
    mod : IRModule, optional
        The module defining the ADTs the patterns take apart. Defaults to None.

    Returns
    -------
    patterns : list of Pattern
        The unhandled cases; [] when the match is exhaustive.
    """
    if not isinstance(match, Match):
        raise RelayError(f"unmatched_cases expects a relay Match, got {type(match).__name__}")
    candidates, failures = [PatternWildcard()], []
    while candidates:
        cand = candidates.pop()
        for clause in match.clauses:
            result = check_pattern(clause.lhs, cand)
            if result == CLASH:
                continue
            if result == UNSPECIFIED:
                candidates.extend(expand_wildcards(clause.lhs, cand, mod))
            break
        else:
            failures.append(cand)
    return failures


__all__ = ["unmatched_cases"]
