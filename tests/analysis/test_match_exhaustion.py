"""unmatched_cases lists the values a match misses (cases modelled on TVM's
test_pass_unmatched_cases.py), and InferType warns about a non-exhaustive complete match."""
import warnings

import pytest

import relay_backend as relay
from relay_backend.analysis import unmatched_cases
from relay_backend.errors import RelayError
from relay_backend.ir.adt import (Clause, Constructor, Match, PatternConstructor, PatternTuple,
                                  PatternVar, PatternWildcard, TypeData)
from relay_backend.ir.types import GlobalTypeVar, TypeVar
from relay_backend.transform.match_warning import NonExhaustiveMatchWarning


def list_adt():
    mod = relay.IRModule()
    relay.Prelude(mod)
    _, cons, nil = mod.get_type("List")
    return mod, cons, nil


def test_empty_match_misses_everything():
    v = relay.Var("v")
    missing = unmatched_cases(Match(v, []))
    assert len(missing) == 1 and isinstance(missing[0], PatternWildcard)


def test_wildcard_and_var_match_everything():
    v, w = relay.Var("v"), relay.Var("w")
    assert unmatched_cases(Match(v, [Clause(PatternWildcard(), v)])) == []
    assert unmatched_cases(Match(v, [Clause(PatternVar(w), w)])) == []


def test_single_constructor_adt_nested():
    mod = relay.IRModule()
    box = GlobalTypeVar("box")
    a = TypeVar("a")
    box_ctor = Constructor("box", [a], box)
    mod.add_type_definition(TypeData(box, [a], [box_ctor]))
    v = relay.Var("v")
    nested = PatternConstructor(box_ctor, [PatternConstructor(box_ctor, [PatternWildcard()])])
    assert unmatched_cases(Match(v, [Clause(nested, v)]), mod) == []


def test_too_specific_match_misses_nil_and_singleton():
    mod, cons, nil = list_adt()
    v = relay.Var("v")
    two = PatternConstructor(cons, [PatternWildcard(),
                                    PatternConstructor(cons, [PatternWildcard(), PatternWildcard()])])
    missing = unmatched_cases(Match(v, [Clause(two, v)]), mod)
    kinds = sorted((p.constructor.name_hint,
                    p.patterns[1].constructor.name_hint if p.patterns else None) for p in missing)
    assert kinds == [("Cons", "Nil"), ("Nil", None)]
    # a wildcard clause afterwards covers the rest
    assert unmatched_cases(Match(v, [Clause(two, v), Clause(PatternWildcard(), v)]), mod) == []


def test_tuple_of_lists():
    mod, cons, nil = list_adt()
    v = relay.Var("v")
    nil_p = PatternConstructor(nil)
    cons_p = PatternConstructor(cons, [PatternWildcard(), PatternWildcard()])
    clauses = [Clause(PatternTuple([nil_p, nil_p]), v), Clause(PatternTuple([cons_p, cons_p]), v)]
    missing = unmatched_cases(Match(v, clauses), mod)
    names = sorted(tuple(f.constructor.name_hint for f in p.patterns) for p in missing)
    assert names == [("Cons", "Nil"), ("Nil", "Cons")]


def test_constructor_without_module_is_a_clear_error():
    _, cons, _ = list_adt()
    v = relay.Var("v")
    m = Match(v, [Clause(PatternConstructor(cons, [PatternWildcard(), PatternWildcard()]), v)])
    with pytest.raises(RelayError, match="pass the module"):
        unmatched_cases(m)


def _head_function(cons, nil, complete):
    mod_list = relay.IRModule()
    relay.Prelude(mod_list)
    lst, cons, nil = mod_list.get_type("List")
    x = relay.Var("x", relay.TypeCall(lst, [relay.TensorType((), "int32")]))
    h = relay.Var("h")
    body = Match(x, [Clause(PatternConstructor(cons, [PatternVar(h), PatternWildcard()]), h)],
                 complete=complete)
    mod_list["head_of"] = relay.Function([x], body)
    return mod_list


@pytest.mark.parametrize("complete", [True, False])
def test_infer_type_warns_for_complete_non_exhaustive_match(complete):
    mod = _head_function(None, None, complete)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        relay.transform.InferType()(mod)
    ours = [w for w in caught if issubclass(w.category, NonExhaustiveMatchWarning)]
    if complete:
        assert len(ours) == 1 and "Nil" in str(ours[0].message)
    else:
        assert ours == []
