"""Two hand-written TIR kernels shared by the runtime tests: one static, one with a shape variable."""
from relay_backend import tir
from relay_backend.codegen import build


def add3_and_scale(target="llvm"):
    """add3(A: (3, 4) f32, B, C) C = A + B (static); scale(X: (n,) i32, Y) Y = 3X (symbolic)."""
    A, B, C = (tir.Buffer(name, (3, 4), "float32") for name in "ABC")
    i, j = tir.Var("i"), tir.Var("j")
    add = tir.PrimFunc([A, B, C], tir.For(i, 0, 3, "serial", tir.For(
        j, 0, 4, "serial", tir.BufferStore(C, A[i, j] + B[i, j], (i, j)))), "add3", {"num_outputs": 1})
    n, k = tir.Var("n"), tir.Var("k")
    X, Y = tir.Buffer("X", (n,), "int32"), tir.Buffer("Y", (n,), "int32")
    scale = tir.PrimFunc([X, Y], tir.For(k, 0, n, "serial", tir.BufferStore(Y, X[k] * 3, (k,))), "scale")
    return build([add, scale], target=target)
