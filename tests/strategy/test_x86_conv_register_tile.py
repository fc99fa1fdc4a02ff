"""conv2d_NCHWc.x86's register tile stays whole 8-lane accumulators whatever the epilogue.

The micro-kernel's accumulators are a local array indexed by the unrolled tile loops and the
vectorized channel lane. LLVM used to fully unroll the short vectorized loops before its loop
vectorizer ran and leave them to the SLP vectorizer, which, when the epilogue read a second
operand (the residual add of a ResNet block), packed one accumulator as 1 + 4 + 2 + 1 lanes
with shuffles in the FMA loop (ResNet block 64ch 56x56: the residual conv 5.1 ms against 2.8 ms
without the add). Vectorized loops now carry llvm.loop.unroll.disable, so the loop vectorizer
emits one 8-lane operation per accumulator. These tests compile fused conv + bias + residual
+ relu kernels at shapes that are not multiples of the tile (odd widths, a channel-block count
the channel tile does not divide) and check the numbers against a numpy reference and, on an
AVX2 host, that the FMA loop uses only full-width ymm FMAs.

The unrolled reduction step runs pixels outside channel blocks (one broadcast input against the
tile's weight vectors); register_tile fits tiles by the larger live set of that order and the
other one (x86_common.tile_registers). The tests below check that arithmetic at AVX2's and
AVX-512's widths, that the chosen tiles keep their FMA loop off the stack, and that a tile over
the budget (which tuning may pick) still keeps its vector operands in registers in the emitted
order, where channel blocks outside spilled 12 broadcasts of AVX-512's 2 x 14."""
import dataclasses
import re

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.codegen import llvm_target

from ..op.blocked_refs import direct_conv_nchwc

pytestmark = pytest.mark.compile

BLOCK = 8


def _fused_conv(c, h, w, o, k, stride, residual, seed=0, block=BLOCK):
    """(relay module, inputs, numpy reference) of relu(conv_NCHW{block}c(x, w) + bias [+ residual])."""
    rng = np.random.default_rng(seed)
    pad = k // 2
    x = rng.standard_normal((1, c // block, h, w, block)).astype("float32")
    kernel = (rng.standard_normal((o // block, c // block, k, k, block, block)) * 0.1).astype("float32")
    bias = rng.standard_normal((1, o // block, 1, 1, block)).astype("float32")
    data = relay.var("x", shape=x.shape)
    y = relay.nn.contrib_conv2d_nchwc(data, relay.const(kernel), (stride, stride), (pad,) * 4, (1, 1), 1,
                                      data_layout=f"NCHW{block}c", kernel_layout=f"OIHW{block}i{block}o",
                                      out_layout=f"NCHW{block}c")
    want = direct_conv_nchwc(x, kernel, (stride, stride), (pad,) * 4, (1, 1), 1) + bias
    y = relay.add(y, relay.const(bias))
    params, inputs = [data], {"x": x}
    if residual:
        r = rng.standard_normal(want.shape).astype("float32")
        params.append(relay.var("r", shape=r.shape))
        inputs["r"] = r
        y = relay.add(y, params[-1])
        want = want + r
    func = relay.Function(params, relay.nn.relu(y))
    return relay.IRModule.from_expr(func), inputs, np.maximum(want, 0)


def _build_run(mod, inputs):
    with relay.transform.PassContext(opt_level=3):
        factory = relay.build(mod, target="llvm")
    module = factory["default"](relay.cpu(0))
    for name, value in inputs.items():
        module.set_input(name, value)
    module.run()
    return factory, module.get_output(0).numpy()


@pytest.mark.parametrize("c,h,w,o,k,stride,residual", [
    (16, 9, 13, 24, 3, 1, True),      # 3 output blocks, width 13: tiles that do not divide evenly
    (24, 11, 7, 16, 1, 1, True),      # 1x1 (a GEMM) with the residual add
    (16, 13, 11, 40, 1, 2, False),    # strided 1x1 projection, 5 output blocks
    (8, 10, 10, 8, 3, 2, True),       # strided 3x3, one block each side
])
def test_fused_conv_matches_numpy(c, h, w, o, k, stride, residual):
    mod, inputs, want = _fused_conv(c, h, w, o, k, stride, residual)
    _, got = _build_run(mod, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _fma_registers(asm: str) -> set:
    """The register widths ("xmm", "ymm", "zmm") the packed float FMAs of `asm` write."""
    return set(re.findall(r"\bvfmadd\d{3}ps\s+[^\n]*%(xmm|ymm|zmm)\d+\s*$", asm, re.MULTILINE))


@pytest.mark.skipif(not (llvm_target.host_has_feature("avx2") and llvm_target.host_has_feature("fma"))
                    or llvm_target.host_has_feature("avx512f"),
                    reason="checks the AVX2 code (8-lane ymm accumulators)")
def test_residual_epilogue_keeps_full_width_accumulators():
    mod, inputs, want = _fused_conv(64, 8, 8, 64, 3, 1, residual=True)     # 8 blocks: tile 2 x 4
    factory, got = _build_run(mod, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    asm = factory.get_lib().get_source("asm")
    assert _fma_registers(asm) == {"ymm"}, "an accumulator of the register tile was split into xmm pieces"
    assert not re.search(r"\bvfmadd\d{3}ss\b", asm), "scalar FMAs in the register tile"


def _stack_operands(asm: str) -> list:
    """The packed FMAs of `asm` that read an operand from the stack (a spilled register)."""
    return re.findall(r"\bvfmadd\d{3}ps\s+-?\d*\(%rsp\)", asm)


def _vector_spills(asm: str) -> list:
    """Vector moves between a register and the stack (a spill or its reload) in `asm`."""
    return re.findall(r"\bvmov\w+\s+[^\n]*\(%rsp\)[^\n]*%[xyz]mm\d+|\bvmov\w+\s+%[xyz]mm\d+,\s*-?\d*\(%rsp\)", asm)


@pytest.mark.skipif(not llvm_target.host_has_feature("fma"), reason="checks the FMA code of the host")
def test_over_budget_tile_keeps_vectors_in_registers(monkeypatch):
    """A tile over tile_registers' budget that fits the emitted order's own live set (ot weights
    + one broadcast): AVX-512's 2 x 14 (28 + 2 + 1 = 31 of 32), AVX2's 2 x 6 (12 + 2 + 1 = 15 of
    16). The FMA loop reads no operand from the stack and moves no vector to or from it."""
    from relay_backend import config, te_compiler
    from relay_backend.autotvm.task import dispatcher
    from relay_backend.strategy import x86_common, x86_conv_nchwc
    block = x86_common.lanes("float32")
    reg_n = 14 if x86_common.vector_registers() == 32 else 6
    assert x86_common.tile_registers(2, reg_n, 1) > x86_common.vector_registers()
    monkeypatch.setattr(x86_conv_nchwc, "choose_tile", lambda *a, **k: x86_conv_nchwc.Tile(2, reg_n, True))
    # the forced tile must not be served a kernel or a fallback config made with the default one
    monkeypatch.setattr(config, "_CONFIG", dataclasses.replace(config.get(), no_disk_cache=True))
    monkeypatch.setattr(dispatcher.DispatchContext, "current", dispatcher.FallbackContext())
    te_compiler.get().clear()
    mod, inputs, want = _fused_conv(64, 3, reg_n, 4 * block, 1, 1, residual=True, block=block)
    try:
        factory, got = _build_run(mod, inputs)
    finally:
        te_compiler.get().clear()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    loop = _fma_loop(factory.get_lib().get_source("asm"))
    fmas = len(re.findall(r"\bvfmadd\d{3}ps\b", loop))
    assert fmas == 2 * reg_n * block, f"{fmas} FMAs in the loop: not the forced 2 x {reg_n} tile"
    assert _stack_operands(loop) == [] and _vector_spills(loop) == [], "the register tile spilled to the stack"

# --- the register model: tiles that fit, at the odd widths of SqueezeNet ---------------------------
def _fma_loop(asm: str) -> str:
    """The body of the loop (label to its backward branch) with the most packed FMAs."""
    best = ""
    for label in re.finditer(r"^(\.LBB\d+_\d+):", asm, re.MULTILINE):
        branch = re.search(r"^\s*j\w+\s+" + re.escape(label.group(1)) + r"\s*$", asm[label.end():], re.MULTILINE)
        if branch:
            body = asm[label.end():label.end() + branch.start()]
            if len(re.findall(r"\bvfmadd\d{3}ps\b", body)) > len(re.findall(r"\bvfmadd\d{3}ps\b", best)):
                best = body
    return best


@pytest.mark.skipif(not (llvm_target.host_has_feature("avx2") and llvm_target.host_has_feature("fma")),
                    reason="checks x86 FMA code")
@pytest.mark.parametrize("c,hw,o,k", [
    (64, 13, 256, 3),     # SqueezeNet's fire9 expand 3x3 at 13x13 (width 13: tiles 1 or 13 wide)
    (32, 27, 128, 3),     # fire4 expand 3x3 at 27x27
    (16, 55, 64, 3),      # fire2 expand 3x3 at 55x55
    (512, 13, 64, 1),     # fire9 squeeze 1x1 at 13x13
])
def test_register_tile_keeps_accumulators_in_registers(c, hw, o, k):
    """The chosen tile's reduction loop neither spills nor keeps accumulators on the stack: at
    most one stack access per 8 FMAs (loop bookkeeping), where a tile over the register budget
    (2 x 13 on AVX-512: 26 accumulators + 13 broadcasts + 1 weight) had more stack accesses
    than FMAs."""
    from relay_backend.strategy.x86_blocks import default_block
    block = default_block(o)
    mod, inputs, want = _fused_conv(c, hw, hw, o, k, 1, residual=False, block=block)
    factory, got = _build_run(mod, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    loop = _fma_loop(factory.get_lib().get_source("asm"))
    fmas, stack = len(re.findall(r"\bvfmadd\d{3}ps\b", loop)), len(re.findall(r"\(%rsp\)", loop))
    assert fmas >= 8, "no unrolled FMA loop found"
    assert stack * 8 <= fmas, f"{stack} stack accesses in an FMA loop of {fmas} FMAs: the tile spills"


WIDTHS = {"avx2": 32, "avx512": 64}     # vector bytes: the model's arithmetic at either width


@pytest.fixture(params=sorted(WIDTHS))
def width(request, monkeypatch):
    """x86_common's model as on an AVX2 (16 registers, no embedded broadcast) or an AVX-512
    host (32 registers, embedded broadcast), whatever this host is."""
    from relay_backend.strategy import x86_common
    monkeypatch.setattr(x86_common, "vector_bytes", lambda: WIDTHS[request.param])
    return request.param


def test_register_model_counts(width):
    """tile_registers: accumulators + the larger of (weights + one broadcast) and (the row's
    broadcasts + one block's weights); one column block: its weights + one broadcast, none with
    AVX-512's embedded broadcast when the block is one vector."""
    from relay_backend.strategy import x86_common as xc
    avx512 = width == "avx512"
    assert xc.vector_registers() == (32 if avx512 else 16)
    assert xc.tile_registers(2, 14, 1) == 28 + 15            # broadcasts dominate: over both budgets
    assert xc.tile_registers(2, 7, 1) == 14 + 8
    assert xc.tile_registers(4, 4, 1) == 16 + 5
    assert xc.tile_registers(6, 2, 1) == 12 + 7               # weights dominate: over AVX2's 16
    assert xc.tile_registers(4, 3, 1) == 12 + 5
    assert xc.tile_registers(3, 3, 1) == 9 + 4
    assert xc.tile_registers(1, 13, 1) == 13 + 1 + (0 if avx512 else 1)
    assert xc.tile_registers(1, 4, 2) == 8 + 2 + 1            # a block of two vectors


@pytest.mark.parametrize("rows,col_blocks,avx2,avx512", [
    (14, 16, (1, 14), (2, 7)),     # ResNet-50's 14x14 stage
    (13, 16, (1, 13), (1, 13)),    # SqueezeNet's 13x13 fire modules
    (28, 16, (1, 14), (4, 4)),
    (56, 4, (1, 14), (2, 8)),
    (112, 6, (1, 14), (6, 4)),
    (27, 8, (1, 9), (2, 9)),
])
def test_register_tile_choices(width, rows, col_blocks, avx2, avx512):
    """The tiles register_tile picks for a one-vector block at either width (AVX2 never the
    6 x 2 or 4 x 3 whose weights alone would fill its 16 registers)."""
    from relay_backend.strategy import x86_common as xc
    assert xc.register_tile(rows, col_blocks, xc.lanes("float32")) == (avx512 if width == "avx512" else avx2)


@pytest.mark.parametrize("rows,col_blocks", [(13, 16), (27, 8), (55, 4), (7, 32), (14, 16), (1, 100), (64, 32)])
def test_register_tile_fits_and_divides(width, rows, col_blocks):
    """register_tile's choice divides both extents, fits the registers by tile_registers, and no
    other fitting tile is faster by tile_cycles."""
    from relay_backend.strategy import x86_common as xc
    block = xc.lanes("float32")
    ct, rt = xc.register_tile(rows, col_blocks, block)
    assert col_blocks % ct == 0 and rows % rt == 0
    assert xc.tile_registers(ct, rt, 1) <= xc.vector_registers()
    rate = ct * rt / xc.tile_cycles(ct, rt, 1)
    for c in (d for d in range(1, col_blocks + 1) if col_blocks % d == 0):
        for r in (d for d in range(1, rows + 1) if rows % d == 0):
            if xc.tile_registers(c, r, 1) <= xc.vector_registers():
                assert c * r / xc.tile_cycles(c, r, 1) <= rate + 1e-9, (c, r)
