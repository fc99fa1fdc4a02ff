"""Integer floor division and remainder in LLVM code generation (codegen/llvm_expr.py): an index
known to be >= 0 (loop variables of loops starting at >= 0, sums, products, quotients and
remainders of such; known_nonnegative) is divided by one unsigned division; any other dividend
by a positive constant gets one sign fix-up; the general form stays for the rest. Every form is
compiled, run and compared with numpy's floor division and remainder, negative values included."""
import numpy as np
import pytest

from relay_backend import tir
from relay_backend.codegen import build, codegen_llvm
from relay_backend.codegen.llvm_expr import known_nonnegative
from relay_backend.runtime import nd
from relay_backend.tir import stmt as S

pytestmark = pytest.mark.compile


def _quotients(start: int, n: int, divisor, name: str, kind: str = "serial"):
    """Q[i - start] = (i + off[0]) // d, R[i - start] = (i + off[0]) % d for i in [start, start + n),
    with d a constant or the value of D[0]; off[0] from memory (its sign unknown) when asked."""
    i = tir.Var("i")
    Q, R = tir.Buffer("Q", (n,), "int32"), tir.Buffer("R", (n,), "int32")
    D = tir.Buffer("D", (1,), "int32")
    d = D[0] if divisor is None else tir.const(divisor, "int32")
    stores = S.SeqStmt([S.BufferStore(Q, tir.floordiv(i, d), (i - start,)),
                        S.BufferStore(R, tir.floormod(i, d), (i - start,))])
    return tir.PrimFunc([D, Q, R], S.For(i, start, n, kind, stores), name)


def _run(func, n, divisor_value):
    q, r = nd.empty((n,), "int32"), nd.empty((n,), "int32")
    build(func)[func.name](nd.array(np.array([divisor_value], "int32")), q, r)
    return q.numpy(), r.numpy()


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_a_loop_from_zero_divides_unsigned_and_matches_numpy(kind):
    func = _quotients(0, 64, 7, f"from_zero_{kind}", kind)
    text, _ = codegen_llvm([func])
    assert " udiv " in text and " urem " in text and " sdiv " not in text and " srem " not in text
    q, r = _run(func, 64, 7)
    i = np.arange(64)
    np.testing.assert_array_equal(q, i // 7)
    np.testing.assert_array_equal(r, i % 7)


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_negative_dividends_by_a_positive_constant_round_down(kind):
    """A loop from -20: the signed division with one fix-up (remainder < 0), as numpy rounds."""
    func = _quotients(-20, 48, 6, f"negative_{kind}", kind)
    text, _ = codegen_llvm([func])
    assert " sdiv " in text and " udiv " not in text
    q, r = _run(func, 48, 6)
    i = np.arange(-20, 28)
    np.testing.assert_array_equal(q, i // 6)
    np.testing.assert_array_equal(r, i % 6)


@pytest.mark.parametrize("divisor", [5, -5])
def test_a_divisor_of_unknown_sign_keeps_the_general_form(divisor):
    """A divisor read from memory may be negative: numpy's rounding either way."""
    func = _quotients(-12, 30, None, f"by_memory_{'neg' if divisor < 0 else 'pos'}")
    text, _ = codegen_llvm([func])
    assert " udiv " not in text
    q, r = _run(func, 30, divisor)
    i = np.arange(-12, 18)
    np.testing.assert_array_equal(q, i // divisor)
    np.testing.assert_array_equal(r, i % divisor)


def test_known_nonnegative_follows_the_structure():
    i, j = tir.Var("i"), tir.Var("j")
    n = tir.SizeVar("n")
    known = {id(i)}

    def check(e):
        return known_nonnegative(e, known, {})
    assert check(i * 4 + tir.floordiv(i, 3) + tir.floormod(j, 8))      # j's sign is irrelevant to % 8
    assert check(tir.Max(i, n) + tir.const(0, "int32"))
    assert check(tir.Cast("int64", i))                                  # widening keeps the value
    assert not check(i - 1)                                              # a subtraction: not known
    assert not check(j + i)                                              # j may be negative
    assert not check(tir.floormod(i, j))                                 # j may be negative
    assert not check(tir.Cast("int8", i))                                # narrowing may wrap
    assert not check(tir.const(-1, "int32") * i)
    assert not check(tir.const(1.5, "float32"))                          # not an integer


def test_let_and_loop_variables_from_nonnegative_values_are_known():
    """A LetStmt binding i * 3 and a loop starting at a known non-negative expression give
    variables the code generator divides without sign fix-ups; values match numpy."""
    i, k, t = tir.Var("i"), tir.Var("k"), tir.Var("t")
    Y = tir.Buffer("Y", (10, 4), "int32")
    body = S.LetStmt(t, i * 3, S.For(k, t, 4, "serial",
                                     S.BufferStore(Y, tir.floordiv(k, 4) + tir.floormod(t, 5), (i, k - t))))
    func = tir.PrimFunc([Y], S.For(i, 0, 10, "serial", body), "let_loop")
    text, _ = codegen_llvm([func])
    assert " sdiv " not in text and " srem " not in text
    y = nd.empty((10, 4), "int32")
    build(func)["let_loop"](y)
    ii, kk = np.arange(10)[:, None], np.arange(4)[None, :]
    np.testing.assert_array_equal(y.numpy(), (ii * 3 + kk) // 4 + (ii * 3) % 5)
