"""The Prelude is Relay text: std/prelude.rly and std/nat.rly read by the parser through
IRModule.import_from_std, typed as TVM's, and printed text of the whole Prelude reads back."""
import pytest

import relay_backend as relay
from relay_backend.errors import ModuleLookupError
from relay_backend.prelude import GLOBAL_DEFS

# TVM v0.18's types of the Prelude functions, as relay_backend prints types
EXPECTED_TYPES = {
    "id": "fn [A](A) -> A",
    "compose": "fn [A, B, C](fn (B) -> C, fn (A) -> B) -> fn (A) -> C",
    "flip": "fn [A, B, C](fn (A, B) -> C) -> fn (B, A) -> C",
    "hd": "fn [A](List[A]) -> A",
    "nth": "fn [A](List[A], int32) -> A",
    "map": "fn [A, B](fn (A) -> B, List[A]) -> List[B]",
    "foldl": "fn [A, B](fn (A, B) -> A, A, List[B]) -> A",
    "foldr": "fn [A, B](fn (A, B) -> B, B, List[A]) -> B",
    "sum": "fn (List[int32]) -> int32",
    "zip": "fn [A, B](List[A], List[B]) -> List[(A, B)]",
    "map_accuml": "fn [A, B, C](fn (A, B) -> (A, C), A, List[B]) -> (A, List[C])",
    "unfoldr": "fn [A, B](fn (A) -> Option[(A, B)], A) -> List[B]",
    "tmap": "fn [A, B](fn (A) -> B, Tree[A]) -> Tree[B]",
    "size": "fn [A](Tree[A]) -> int32",
    "iterate": "fn [A](fn (A) -> A, int32) -> fn (A) -> A",
}


def test_prelude_functions_come_from_the_text_file():
    p = relay.Prelude()
    for name in GLOBAL_DEFS:
        func = p.mod[name]
        assert getattr(p, name) is p.get_global_var(name)
        assert func.span is not None and func.span.source_name.name == "prelude.rly", name
    for name, text in EXPECTED_TYPES.items():
        assert str(p.mod[name].checked_type) == text, name
    assert [c.name_hint for c in p.get_type("Tree")[1:]] == ["Rose"]


def test_import_from_std_reads_each_file_once():
    mod = relay.IRModule()
    mod.import_from_std("prelude.rly")
    first = {gv.name_hint: (gv, fn) for gv, fn in mod.functions.items()}
    mod.import_from_std("prelude.rly")
    assert {gv.name_hint: (gv, fn) for gv, fn in mod.functions.items()} == first
    p = relay.Prelude(mod)
    assert p.map is first["map"][0] and p.mod is mod


def test_nat_builds_on_the_prelude_list():
    p = relay.Prelude()
    p.mod.import_from_std("nat.rly")
    nat, zero, succ = p.mod.get_type("nat")
    assert (zero.name_hint, succ.name_hint) == ("zero", "succ")
    assert str(p.mod["nat_nth"].checked_type) == "fn [A](List[A], nat[]) -> A"


def test_core_declares_the_storage_type():
    mod = relay.IRModule().import_from_std("core.rly")
    assert mod.get_global_type_var("Storage").name_hint == "Storage"


def test_unknown_std_file_is_a_clear_error():
    with pytest.raises(ModuleLookupError, match=r"no standard library file 'list.rly'.*prelude.rly"):
        relay.IRModule().import_from_std("list.rly")


def test_printed_prelude_reads_back_unchanged():
    """The whole Prelude, tensor arrays included (their pattern variables are annotated)."""
    p = relay.Prelude()
    relay.assert_structural_equal(relay.parse(p.mod.astext()), p.mod)
