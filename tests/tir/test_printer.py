"""The tir printer gives readable, Python-like loop nests."""
from relay_backend import tir


def test_loop_nest_text():
    n = tir.Var("n")
    A = tir.Buffer("A", (n, 8), "float32")
    B = tir.Buffer("B", (n, 8), "float32")
    T = tir.Buffer("T", (8,), "float32", scope="local")
    i, j = tir.Var("i"), tir.Var("j")
    body = tir.For(i, 0, n, "parallel", tir.Allocate(T, tir.seq(
        tir.For(j, 0, 8, "vectorized", tir.BufferStore(T, tir.Call("float32", "exp", [A[i, j]]),
                                                       (j,))),
        tir.For(j, 0, 8, "unrolled", tir.IfThenElse(
            j < 4, tir.BufferStore(B, T[j] * 2.0, (i, j)),
            tir.BufferStore(B, tir.Select(j > 5, T[j], tir.const(0.0)), (i, j)))))))
    text = tir.PrimFunc([A, B], body, "kernel").script()
    assert text == """@prim_func
def kernel(A: Buffer((n, 8), 'float32'), B: Buffer((n, 8), 'float32')):
  # shape vars: n
  for i in parallel(0, n):
    T = allocate((8), 'float32', scope='local')
    for j in vectorized(0, 8):
      T[j] = exp(A[i, j])
    for j in unrolled(0, 8):
      if (j < 4):
        B[i, j] = (T[j] * 2.0)
      else:
        B[i, j] = select((j > 5), T[j], 0.0)"""


def test_expr_text():
    i = tir.Var("i")
    assert str(tir.floordiv(i * 4 + 1, 3) % 2) == "((((i * 4) + 1) // 3) % 2)"
    assert str(tir.min(i, 3)) == "min(i, 3)"
    assert str(tir.Cast("float32", i)) == "float32(i)"
    assert str(tir.const(5, "int64")) == "int64(5)"


def test_thread_binding_and_deep_expr():
    i = tir.Var("i")
    A = tir.Buffer("A", (4,), "float32")
    loop = tir.For(i, 0, 4, "serial", tir.BufferStore(A, tir.const(1.0), (i,)),
                   thread_binding="threadIdx.x")
    assert "for i in thread('threadIdx.x', 0, 4):" in str(loop)
    e = tir.Var("x", "float32")
    for _ in range(10000):
        e = e + 1.0
    assert str(e).count("+ 1.0") == 10000
