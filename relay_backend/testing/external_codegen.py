"""A partitioned program and a hand-written external codegen for it, as Relay's BYOC tests use.

    mod = partitioned_module("mycc_main_0", "mycc")     # main(x) = exp(f(x)), f marked Compiler="mycc"
    calls = register_tir_codegen("mycc")               # relay.ext.mycc; unregister it when done
    data, want = sample_io()                           # an input and numpy's answer for main

`f(p) = p * 2 + 1` over (SIZE,) float32 is a primitive function with Compiler and global_symbol
attributes; `tir_codegen` compiles it from hand-written TIR into an LLVM module for the host CPU
(whatever the target of the rest of the program), recording each function it is given.
"""
import numpy as np

from .. import ir, tir
from ..codegen import build
from ..op import add, exp, multiply
from ..runtime.registry import register_func

SIZE = 6


def partitioned_module(symbol: str, compiler: str) -> ir.IRModule:
    """main(x) = exp(f(x)) where f(p) = p * 2 + 1 is marked for `compiler` with `symbol`."""
    p = ir.var("p", shape=(SIZE,))
    f = ir.Function([p], add(multiply(p, ir.const(2.0)), ir.const(1.0)))
    f = f.with_attr("Primitive", 1).with_attr("Compiler", compiler).with_attr("global_symbol", symbol)
    x = ir.var("x", shape=(SIZE,))
    return ir.IRModule.from_expr(ir.Function([x], exp(ir.Call(f, [x]))))


def tir_codegen(calls: list):
    """A relay.ext.<name> function: `p * 2 + 1` from hand-written TIR under the function's
    global_symbol; appends every function it compiles to `calls`."""
    def codegen(func):
        calls.append(func)
        symbol = func.attrs["global_symbol"]
        a, b = tir.Buffer("A", (SIZE,), "float32"), tir.Buffer("B", (SIZE,), "float32")
        i = tir.Var("i")
        body = tir.For(i, 0, SIZE, "serial", tir.BufferStore(b, a[i] * tir.const(2.0, "float32")
                                                            + tir.const(1.0, "float32"), (i,)))
        return build([tir.PrimFunc([a, b], body, symbol, {"num_outputs": 1})], target="llvm")
    return codegen


def register_tir_codegen(compiler: str) -> list:
    """Register `tir_codegen` as relay.ext.<compiler> (replacing any); returns the list of the
    functions it compiles. The caller removes the name when done (remove_global_func)."""
    calls = []
    register_func(f"relay.ext.{compiler}", tir_codegen(calls), override=True)
    return calls


def sample_io() -> tuple:
    """(x, exp(x * 2 + 1)): an input of partitioned_module's main and the answer numpy gives."""
    data = np.linspace(-1, 1, SIZE, dtype="float32")
    return data, np.exp(data.astype("float64") * 2 + 1)


__all__ = ["SIZE", "partitioned_module", "tir_codegen", "register_tir_codegen", "sample_io"]
