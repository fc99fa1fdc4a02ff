"""conv2d_NCHWc.x86 pads per register tile (the pad stage computed at the tile loop) when
pad_copies_per_tile, the times each padded input would be copied, is at most PAD_PER_TILE_MAX
and the padded input is larger than half the L2 (pad_per_tile); otherwise the pad stays at
the root. The count for ResNet-50's layers, the rule's two conditions, where the pad lands in
the seed CNN's kernel, and fused kernels (bias, residual add, relu; strided and stride-1, 3x3
and 5x5, odd maps) on both sides of the rule against an independent numpy reference."""
import contextlib
import dataclasses

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import config
from relay_backend.strategy.x86_conv_nchwc import (L2_BYTES, PAD_PER_TILE_MAX, Tile, choose_tile, pad_copies_per_tile,
                                                   pad_per_tile)
from relay_backend.strategy.x86_common import prod
from relay_backend.testing import seed_cnn

from .test_x86_conv_register_tile import BLOCK, _build_run, _fused_conv


@dataclasses.dataclass
class _Attrs:
    strides: tuple
    dilation: tuple = (1, 1)


def test_copies_of_resnet50_layers():
    # 128ch 3x3 stride 2 onto 28x28, a 4 x 4 tile: 2 channel tiles x 3/2 rows x 9/8 columns
    assert pad_copies_per_tile((1, 8, 28, 28, 16), (8, 8, 3, 3, 16, 16), _Attrs((2, 2)), Tile(4, 4, False)) == 3.375
    # 256ch 3x3 at 14x14, 2 x 7: 8 channel tiles x 3 rows x 9/7 columns
    assert pad_copies_per_tile((1, 16, 14, 14, 16), (16, 16, 3, 3, 16, 16), _Attrs((1, 1)),
                               Tile(2, 7, True)) == pytest.approx(8 * 3 * 9 / 7)
    # dilation widens the window: 3x3 dilated by 2 spans 5 rows and 5 + 7 columns of 8 pixels
    assert pad_copies_per_tile((1, 1, 8, 8, 16), (1, 1, 3, 3, 16, 16), _Attrs((1, 1), (2, 2)),
                               Tile(1, 8, True)) == pytest.approx(5 * 12 / 8)
    assert 3.375 <= PAD_PER_TILE_MAX < 7.5


def test_small_padded_inputs_pad_at_the_root():
    # ResNet-50's stride-2 128-channel layer copies 3.375 times: per tile for its 58x58 input
    # (1.7 MB padded), at the root for the same layer on a 12x12 map (74 KB)
    out, kernel, attrs, tile = (1, 8, 28, 28, 16), (8, 8, 3, 3, 16, 16), _Attrs((2, 2)), Tile(4, 4, False)
    assert pad_per_tile(out, kernel, 58 * 58 * 128 * 4, attrs, tile)
    assert not pad_per_tile(out, kernel, 12 * 12 * 128 * 4, attrs, tile)
    assert not pad_per_tile(out, kernel, L2_BYTES // 2, attrs, tile)
    assert pad_per_tile(out, kernel, L2_BYTES // 2 + 4, attrs, tile)
    # a large input whose tiles would copy it 8 * 3 * 9 / 7 times stays at the root
    assert not pad_per_tile((1, 16, 14, 14, 16), (16, 16, 3, 3, 16, 16), 10 * L2_BYTES, _Attrs((1, 1)),
                            Tile(2, 7, True))


def _pad_placement(folder) -> str:
    """'root' or 'tile': where the one blocked convolution dumped to `folder` (RB_DUMP_DIR)
    allocates its pad buffer, before or inside its parallel loop."""
    tir = [p for p in folder.iterdir() if "_tir_" in p.name and "conv2d_NCHWc" in p.name]
    assert len(tir) == 1, [p.name for p in folder.iterdir()]
    lines = tir[0].read_text().splitlines()
    loop = next(i for i, line in enumerate(lines) if "parallel(" in line or line.lstrip().startswith("for "))
    pad = next(i for i, line in enumerate(lines) if line.lstrip().startswith("pad_data = allocate"))
    return "tile" if pad > loop else "root"


@contextlib.contextmanager
def _dumping(folder, monkeypatch):
    """Kernels built inside are dumped to `folder` and compiled afresh (no disk cache)."""
    monkeypatch.setenv("RB_DUMP_DIR", str(folder))
    monkeypatch.setenv("RB_NO_DISK_CACHE", "1")
    config.reload()
    try:
        yield
    finally:
        monkeypatch.undo()
        config.reload()


def test_the_seed_cnns_convolution_pads_at_the_root(tmp_path, monkeypatch):
    # 3 input channels at 32x32: 14 KB padded, which the tiles would copy 3.4 times
    mod, params = seed_cnn.get_workload()
    with _dumping(tmp_path, monkeypatch), relay.transform.PassContext(opt_level=3):
        relay.build(mod, target="llvm", params=params)
    assert _pad_placement(tmp_path) == "root"


def _per_tile(c, h, w, o, k, stride):
    pad = k // 2
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    out, kernel = (1, o // BLOCK, oh, ow, BLOCK), (o // BLOCK, c // BLOCK, k, k, BLOCK, BLOCK)
    tile = choose_tile(out, c * h * w * 4, prod(kernel) * 4)
    return pad_per_tile(out, kernel, c * (h + 2 * pad) * (w + 2 * pad) * 4, _Attrs((stride, stride)), tile)


@pytest.mark.compile
@pytest.mark.parametrize("c,h,w,o,k,stride,residual,per_tile", [
    (24, 61, 57, 16, 3, 2, True, True),     # strided 3x3, odd map, 3 input blocks
    (8, 90, 90, 8, 5, 2, False, True),      # strided 5x5 (pad 2), one channel block
    (8, 100, 98, 8, 3, 1, True, True),      # stride 1, one channel block
    (24, 13, 11, 16, 3, 2, True, False),    # few copies, but 18 KB padded: at the root
    (16, 12, 12, 128, 3, 1, True, False),   # 16 channel blocks: the pad stays at the root
])
def test_padded_kernels_match_numpy(c, h, w, o, k, stride, residual, per_tile, tmp_path, monkeypatch):
    assert _per_tile(c, h, w, o, k, stride) == per_tile, "the shape changed sides of the rule"
    mod, inputs, want = _fused_conv(c, h, w, o, k, stride, residual)
    with _dumping(tmp_path, monkeypatch):
        _, got = _build_run(mod, inputs)
    assert _pad_placement(tmp_path) == ("tile" if per_tile else "root")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
