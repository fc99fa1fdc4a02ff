"""Every Prelude function (std/prelude.rly and std/nat.rly) runs on the debug interpreter and
the VM and gives what the same computation gives in plain Python.

Programs are Relay text parsed against the Prelude's module; several functions share one
program (a tuple of results) so each executor compiles a handful of programs, not dozens.
"""
import functools
import itertools

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.prelude import GLOBAL_DEFS

from .decode import run

EXECUTORS = ("debug", "vm")
XS = [3, 1, 4, 1, 5]
YS = [9, 2]


def _relay_list(values) -> str:
    text = "Nil"
    for v in reversed(values):
        text = f"Cons({v}, {text})"
    return text


@pytest.fixture(scope="module")
def prelude():
    p = relay.Prelude()
    p.mod.import_from_std("nat.rly")
    return p


def _parse(prelude, body: str):
    return relay.parse('#[version = "0.0.5"]\ndef @main() {\n' + body + "\n}\n", init_module=prelude.mod)


LIST_PROGRAM = f"""
  let %xs = {_relay_list(XS)};
  let %ys = {_relay_list(YS)};
  let %empty: List[int32] = Nil;
  (@hd(%xs), @tl(%xs), @nth(%xs, 2), @update(%xs, 1, 7), @length(%xs),
   @map(fn (%v: int32) {{ %v * 2 }}, %xs),
   @foldl(fn (%acc: int32, %v: int32) {{ %acc * 10 + %v }}, 0, %xs),
   @foldr(fn (%v: int32, %acc: int32) {{ %acc * 10 + %v }}, 0, %xs),
   @foldr1(fn (%a: int32, %b: int32) {{ %a - %b }}, %xs),
   @sum(%xs), @concat(%xs, %ys), @filter(fn (%v: int32) {{ %v > 2 }}, %xs),
   @zip(%xs, %ys), @rev(%xs), @length(%empty))
"""


def _list_expected():
    return (XS[0], XS[1:], XS[2], [XS[0], 7] + XS[2:], len(XS), [2 * v for v in XS],
            functools.reduce(lambda acc, v: acc * 10 + v, XS, 0),
            functools.reduce(lambda acc, v: acc * 10 + v, reversed(XS), 0),
            functools.reduce(lambda b, a: a - b, reversed(XS)),
            sum(XS), XS + YS, [v for v in XS if v > 2], list(zip(XS, YS)), XS[::-1], 0)


ACCUM_PROGRAM = f"""
  let %xs = {_relay_list(XS)};
  let %step = fn (%acc: int32, %v: int32) -> (int32, int32) {{ (%acc + %v, %acc * %v) }};
  (@map_accuml(%step, 1, %xs), @map_accumr(%step, 1, %xs))
"""


def _map_accum(values):
    acc, out = 1, []
    for v in values:
        acc, y = acc + v, acc * v
        out.append(y)
    return acc, out


def _accum_expected():
    left_acc, left = _map_accum(XS)
    right_acc, right = _map_accum(reversed(XS))
    # map_accuml conses each result onto the front, so its list comes out reversed (TVM's too);
    # map_accumr walks from the right and conses, so its list is in the input's order
    return (left_acc, left[::-1]), (right_acc, right[::-1])


FUNCTION_PROGRAM = """
  let %inc = fn (%v: int32) -> int32 { %v + 1 };
  let %dbl = fn (%v: int32) -> int32 { %v * 2 };
  let %down = fn (%n: int32) -> Option[(int32, int32)] {
    if (%n == 0) { None } else { Some((%n - 1, %n * %n)) }
  };
  let %leaf = fn (%v: int32) -> Tree[int32] { Rose(%v, Nil) };
  let %tree = Rose(1, Cons(%leaf(2), Cons(Rose(3, Cons(%leaf(4), Nil)), Nil)));
  (@id(5), @compose(%inc, %dbl)(3), @flip(fn (%a: int32, %b: int32) { %a - %b })(2, 10),
   @iterate(%dbl, 3)(1), @iterate(%dbl, 0)(7), @unfoldr(%down, 4), @unfoldl(%down, 4),
   @tmap(%dbl, %tree), @size(%tree))
"""


def _function_expected():
    squares_down = [n * n for n in range(4, 0, -1)]
    tree = (2, [(4, []), (6, [(8, [])])])
    return 5, 3 * 2 + 1, 10 - 2, 8, 7, squares_down, squares_down[::-1], tree, 4


def _nat(n: int) -> str:
    return "zero" if n == 0 else f"succ({_nat(n - 1)})"


NAT_PROGRAM = f"""
  let %xs = {_relay_list(XS)};
  (@nat_double({_nat(3)}), @nat_add({_nat(2)}, {_nat(4)}), @nat_nth(%xs, {_nat(3)}),
   @nat_update(%xs, {_nat(2)}, 0), @nat_iterate(fn (%v: int32) {{ %v * 3 }}, {_nat(2)})(2))
"""


def _nat_expected():
    updated = list(XS)
    updated[2] = 0
    return 6, 6, XS[3], updated, 18


PROGRAMS = {"list": (LIST_PROGRAM, _list_expected), "accumulate": (ACCUM_PROGRAM, _accum_expected),
            "functions": (FUNCTION_PROGRAM, _function_expected), "nat": (NAT_PROGRAM, _nat_expected)}


@pytest.mark.parametrize("kind", EXECUTORS)
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_prelude_functions_match_python(prelude, program, kind):
    text, expected = PROGRAMS[program]
    assert run(_parse(prelude, text), kind) == expected()


def test_every_prelude_function_is_exercised():
    """The programs above call every function of prelude.rly and nat.rly."""
    used = set(itertools.chain.from_iterable(
        (name for name in GLOBAL_DEFS + ("nat_double", "nat_add", "nat_nth", "nat_update", "nat_iterate")
         if f"@{name}(" in text) for text, _ in PROGRAMS.values()))
    missing = set(GLOBAL_DEFS) - used
    assert not missing, f"Prelude functions no test program calls: {sorted(missing)}"


def test_partial_functions_fail_clearly_on_an_empty_list(prelude):
    mod = _parse(prelude, "let %empty: List[int32] = Nil;\n  @hd(%empty)")
    with pytest.raises(relay.ExecutionError, match="match"):
        run(mod, "debug")


def test_nat_helpers_convert_both_ways_on_debug_and_vm(prelude):
    from relay_backend.testing.nat import count, make_nat_expr, make_nat_value
    x = relay.var("x", relay.TypeCall(prelude.mod.get_global_type_var("nat"), []))
    add = prelude.mod.get_global_var("nat_add")
    prelude_mod = prelude.mod.copy()
    prelude_mod["main"] = relay.Function([x], relay.Call(add, [x, make_nat_expr(prelude, 3)]))
    for kind in EXECUTORS:
        out = relay.create_executor(kind, mod=prelude_mod).evaluate()(make_nat_value(prelude, 4))
        assert count(prelude, out) == 7
    with pytest.raises(relay.InputError, match="non-negative"):
        make_nat_value(prelude, -1)


def test_long_lists_pass_to_the_vm_without_recursion_limits(prelude):
    from relay_backend.runtime.container import ADT
    lst, cons, nil = prelude.mod.get_type("List")
    x = relay.var("x", lst(relay.scalar_type("int32")))
    mod = prelude.mod.copy()
    mod["main"] = relay.Function([x], prelude.length(x))
    value = ADT(nil.tag, [])
    for i in range(5000):   # deeper than Python's default recursion limit
        value = ADT(cons.tag, [np.int32(i), value])
    assert int(relay.create_executor("vm", mod=mod).evaluate()(value).numpy()) == 5000
