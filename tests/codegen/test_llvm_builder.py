"""codegen/llvm_builder.py: the ValueNumberingBuilder leaves out repeated pure integer
instructions within a basic block and folds x+0 / x*1, and the code it builds computes what the
plain IRBuilder's does: functions built with it are compiled, run and compared with Python's
integer arithmetic and with numpy; what it must not share (float arithmetic, instructions in
another block, named ones, instructions placed before the end of a block) stays separate."""
import ctypes

import numpy as np
import pytest
from llvmlite import ir

from relay_backend import tir
from relay_backend.codegen import build, codegen_llvm, llvm_target
from relay_backend.codegen.llvm_builder import ValueNumberingBuilder
from relay_backend.runtime import nd
from relay_backend.tir import stmt as S

pytestmark = pytest.mark.compile
I32, I64, F32 = ir.IntType(32), ir.IntType(64), ir.FloatType()


def _run_i64(module, name, *args):
    """Compile `module` for the host and call `int64 name(int64...)` with `args`."""
    spec = llvm_target.machine_spec()
    obj, _ = llvm_target.compile_object(str(module), spec, name)
    engine = llvm_target.load_objects([obj], spec)
    fn = ctypes.CFUNCTYPE(ctypes.c_int64, *[ctypes.c_int64] * len(args))(
        engine.get_function_address(name))
    result = fn(*args)
    del engine
    return result


def _function(module, name, nargs=2, ret=I64):
    fn = ir.Function(module, ir.FunctionType(ret, [I64] * nargs), name=name)
    return fn, ValueNumberingBuilder(fn.append_basic_block("entry"))


def test_repeated_instructions_in_a_block_are_shared_and_compute_the_same():
    module = ir.Module("vn")
    fn, b = _function(module, "f")
    x, y = fn.args
    q1 = b.sdiv(b.add(x, y, flags=["nsw"]), ir.Constant(I64, 7))
    q2 = b.sdiv(b.add(x, y, flags=["nsw"]), ir.Constant(I64, 7))   # equal constants, new objects
    assert q1 is q2
    t1 = b.trunc(x, I32)
    assert b.trunc(x, I32) is t1
    assert b.sext(t1, I64) is b.sext(t1, I64)
    assert b.add(x, y) is not b.add(x, y, flags=["nsw"])           # other flags: another instruction
    assert b.sub(x, y) is not b.sub(y, x)
    r = b.mul(q1, b.sub(q2, b.sext(b.trunc(x, I32), I64)))
    b.ret(b.add(r, b.srem(y, ir.Constant(I64, 5))))
    text = str(module)
    assert text.count("sdiv") == 1 and text.count("trunc") == 1 and text.count("sext") == 1
    for xv, yv in [(100, 23), (-45, 8), (7, -3), (0, 0)]:
        q = int((xv + yv) / 7)                       # sdiv truncates
        rem = yv - int(yv / 5) * 5                   # srem has the dividend's sign
        assert _run_i64(module, "f", xv, yv) == q * (q - xv) + rem


def test_identities_fold_and_non_identities_do_not():
    module = ir.Module("vn")
    fn, b = _function(module, "g")
    x, y = fn.args
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    assert b.add(x, zero, flags=["nsw"]) is x
    assert b.add(zero, x) is x
    assert b.sub(x, zero) is x
    assert b.mul(x, one, flags=["nsw"]) is x and b.mul(one, x) is x
    neg = b.sub(zero, x)                             # 0 - x is not x
    assert neg is not x
    times_zero = b.mul(x, zero)                      # only the identities fold
    assert times_zero is not x
    b.ret(b.add(b.add(neg, b.mul(y, one)), times_zero))
    for xv, yv in [(5, 9), (-12, 3)]:
        assert _run_i64(module, "g", xv, yv) == -xv + yv


def test_no_sharing_across_blocks_for_floats_named_or_inserted_instructions():
    module = ir.Module("vn")
    fn = ir.Function(module, ir.FunctionType(F32, [F32, F32, I64]), name="h")
    a, c, n = fn.args
    entry, other = fn.append_basic_block("entry"), fn.append_basic_block("other")
    b = ValueNumberingBuilder(entry)
    s1 = b.sext(b.trunc(n, I32), I64)
    assert b.fmul(a, c, flags=["contract"]) is not b.fmul(a, c, flags=["contract"])
    assert b.add(s1, n, name="named") is not b.add(s1, n, name="named")
    b.branch(other)
    b.position_at_end(other)
    assert b.trunc(n, I32) is not s1.operands[0]     # another block: emitted again
    b.position_before(other.instructions[0])
    early = b.trunc(n, I32)                          # not at the end of the block: never shared
    b.position_at_end(other)
    assert b.trunc(n, I32) is not early
    b.ret(a)


def test_unrolled_floor_division_indexing_matches_numpy_with_one_division():
    """Y[i, j] = X[i // 3, (i % 3) * 4 + j] for an unrolled j: every store recomputes the floor
    division and modulo of i, which the builder emits once per loop body. (X's rows are 13
    wide, not 3 * 4, so tir/merge_split_axes.py cannot turn the pair into one index.)"""
    X, Y = tir.Buffer("X", (4, 13), "float32"), tir.Buffer("Y", (12, 4), "float32")
    i = tir.Var("i")
    stores = [S.BufferStore(Y, X[tir.floordiv(i, 3), tir.floormod(i, 3) * 4 + j] * 2.0, (i, j))
              for j in range(4)]
    func = tir.PrimFunc([X, Y], S.For(i, 0, 12, "serial", S.SeqStmt(stores)), "fdiv_rows")
    text, _ = codegen_llvm([func])
    assert text.count(" sdiv ") == 1 and text.count(" srem ") == 1
    x = np.arange(52, dtype="float32").reshape(4, 13) - 7.5
    y = nd.empty((12, 4), "float32")
    build(func)["fdiv_rows"](nd.array(x), y)
    ii = np.arange(12)[:, None]
    np.testing.assert_array_equal(y.numpy(), x[ii // 3, (ii % 3) * 4 + np.arange(4)] * 2)


def _floordiv_rows(vectorized: bool):
    """Y[i, j] = X[i // 3, (i % 3) * 4 + j] * 2 and Z[i, j] = the same + 1: the index arithmetic
    of i repeats in both stores (distinct tir nodes of the same form). X's rows are 13 wide, so
    the pair stays a floor division and modulo (tir/merge_split_axes.py)."""
    X = tir.Buffer("X", (4, 13), "float32")
    Y, Z = tir.Buffer("Y", (12, 4), "float32"), tir.Buffer("Z", (12, 4), "float32")
    i, j = tir.Var("i"), tir.Var("j")

    def value():
        return X[tir.floordiv(i, 3), tir.floormod(i, 3) * 4 + j] * 2.0
    body = S.SeqStmt([S.BufferStore(Y, value(), (i, j)), S.BufferStore(Z, value() + 1.0, (i, j))])
    loop = S.For(i, 0, 12, "serial", S.For(j, 0, 4, "vectorized" if vectorized else "serial", body))
    return tir.PrimFunc([X, Y, Z], loop, "fdiv_rows_vec" if vectorized else "fdiv_rows_two")


@pytest.mark.parametrize("vectorized", [False, True])
def test_lowered_node_table_changes_no_instruction(monkeypatch, vectorized):
    """llvm_builder.LoweredNodes hands back the value of an integer node already lowered in the
    block: the IR text is the same as lowering every node again (the table is used: it has
    hits), and the kernel computes what numpy does."""
    from relay_backend.codegen.llvm_builder import LoweredNodes
    with_table, _ = codegen_llvm([_floordiv_rows(vectorized)])
    original, hits = LoweredNodes.get_or_lower, []

    def counting(self, kind, vals, lower):
        lowered = []
        value = original(self, kind, vals, lambda: lowered.append(1) or lower())
        if not lowered:
            hits.append(kind)
        return value
    monkeypatch.setattr(LoweredNodes, "get_or_lower", counting)
    again, _ = codegen_llvm([_floordiv_rows(vectorized)])
    monkeypatch.setattr(LoweredNodes, "get_or_lower", lambda self, kind, vals, lower: lower())
    without_table, _ = codegen_llvm([_floordiv_rows(vectorized)])
    assert hits and with_table == again == without_table
    func = _floordiv_rows(vectorized)
    x = np.arange(52, dtype="float32").reshape(4, 13) - 7.5
    y, z = nd.empty((12, 4), "float32"), nd.empty((12, 4), "float32")
    build(func)[func.name](nd.array(x), y, z)
    ii = np.arange(12)[:, None]
    expect = x[ii // 3, (ii % 3) * 4 + np.arange(4)] * 2
    np.testing.assert_array_equal(y.numpy(), expect)
    np.testing.assert_array_equal(z.numpy(), expect + 1)


def _shared_index_tile():
    """Y[i // 3, c] = X[i // 3, (i % 3) * 4 + c] + X[i // 3, (i % 3) * 4 + c + 1] for c = 0..3
    unrolled by hand: one index tree object used by every statement (whole-tree hits) and
    loads that differ only in constant indices (offset hits)."""
    X, Y = tir.Buffer("X", (4, 16), "float32"), tir.Buffer("Y", (4, 4), "float32")
    i = tir.Var("i")
    row, col = tir.floordiv(i, 3), tir.floormod(i, 3) * 4
    stores = [S.BufferStore(Y, X[row, col + c] + X[row, col + (c + 1)], (row, c)) for c in range(4)]
    return tir.PrimFunc([X, Y], S.For(i, 0, 12, "serial", S.SeqStmt(stores)), "shared_index_tile")


def test_whole_index_trees_and_static_offsets_are_reused_without_changing_the_ir(monkeypatch):
    """llvm_expr takes an integer index tree lowered before in the block, and the non-constant
    part of a static buffer's offset, from the LoweredNodes table: same IR text as lowering
    everything again, and the kernel computes what numpy does."""
    from relay_backend.codegen.llvm_builder import LoweredNodes
    original, hits = LoweredNodes.get_or_lower, []

    def counting(self, kind, vals, lower):
        lowered = []
        value = original(self, kind, vals, lambda: lowered.append(1) or lower())
        if not lowered:
            hits.append(kind[0])
        return value
    monkeypatch.setattr(LoweredNodes, "get_or_lower", counting)
    with_table, _ = codegen_llvm([_shared_index_tile()])
    monkeypatch.setattr(LoweredNodes, "get_or_lower", lambda self, kind, vals, lower: lower())
    without_table, _ = codegen_llvm([_shared_index_tile()])
    monkeypatch.undo()
    assert "tree" in hits and "offset" in hits and with_table == without_table
    x = np.arange(64, dtype="float32").reshape(4, 16) * 0.5 - 3.0
    y = nd.empty((4, 4), "float32")
    build(_shared_index_tile())["shared_index_tile"](nd.array(x), y)
    expect = np.zeros((4, 4), "float32")
    for i in range(12):
        for c in range(4):
            expect[i // 3, c] = x[i // 3, (i % 3) * 4 + c] + x[i // 3, (i % 3) * 4 + c + 1]
    np.testing.assert_array_equal(y.numpy(), expect)
