"""EtaExpand: constructors and globals used as values become function literals; calls stay."""
import numpy as np

import relay_backend as relay
from relay_backend.transform import EtaExpand

PROGRAM = """#[version = "0.0.5"]
type Box[A] { Wrap(A), }
def @twice(%x: int32) -> int32 { %x * 2 }
def @apply[A, B](%f: fn (A) -> B, %x: A) -> B { %f(%x) }
def @main(%v: int32) {
  (@apply(Wrap, %v), @apply(@twice, %v), Wrap(%v), @twice(%v))
}
"""

EXPANDED = """#[version = "0.0.5"]
type Box[A] { Wrap(A), }
def @twice(%x: int32) -> int32 { %x * 2 }
def @apply[A, B](%f: fn (A) -> B, %x: A) -> B { %f(%x) }
def @main(%v: int32) {
  (@apply(fn (%p) { Wrap(%p) }, %v), @apply(fn (%q) { @twice(%q) }, %v), Wrap(%v), @twice(%v))
}
"""


def test_constructors_and_globals_as_values_become_literals():
    mod = relay.parse(PROGRAM)
    expanded = EtaExpand(expand_constructor=True, expand_global_var=True)(mod)
    relay.assert_structural_equal(expanded["main"], relay.parse(EXPANDED)["main"])


def test_only_the_chosen_kind_is_expanded_and_calls_stay():
    mod = relay.parse(PROGRAM)
    only_ctors = EtaExpand(expand_constructor=True)(mod)
    text = only_ctors["main"].astext()
    assert "@apply(@twice, %v" in text and "Wrap(%v)" in text and "@apply(Wrap," not in text
    relay.assert_structural_equal(EtaExpand()(mod), mod)


def test_expansion_keeps_the_meaning():
    mod = relay.parse(PROGRAM)
    expanded = EtaExpand(expand_constructor=True, expand_global_var=True)(mod)
    for m in (mod, expanded):
        out = relay.create_executor("debug", mod=m).evaluate()(np.int32(4))
        assert int(out[0].fields[0].numpy()) == 4 and int(out[1].numpy()) == 8
