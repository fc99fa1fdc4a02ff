"""conv2d_NCHWc.x86 pads per register tile (the pad stage computed at the tile loop) when
pad_copies_per_tile, the times each padded input would be copied, is at most PAD_PER_TILE_MAX;
otherwise the pad stays at the root. The count for ResNet-50's layers, and fused kernels
(bias, residual add, relu; strided and stride-1, 3x3 and 5x5, odd maps) on both sides of the
rule against an independent numpy reference."""
import dataclasses

import numpy as np
import pytest

from relay_backend.strategy.x86_conv_nchwc import PAD_PER_TILE_MAX, Tile, choose_tile, pad_copies_per_tile
from relay_backend.strategy.x86_common import prod

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


def _copies(c, h, w, o, k, stride):
    pad = k // 2
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    out, kernel = (1, o // BLOCK, oh, ow, BLOCK), (o // BLOCK, c // BLOCK, k, k, BLOCK, BLOCK)
    tile = choose_tile(out, c * h * w * 4, prod(kernel) * 4)
    return pad_copies_per_tile(out, kernel, _Attrs((stride, stride)), tile)


@pytest.mark.compile
@pytest.mark.parametrize("c,h,w,o,k,stride,residual,per_tile", [
    (24, 13, 11, 16, 3, 2, True, True),     # strided 3x3, odd map, 3 input blocks
    (16, 9, 15, 8, 5, 2, False, True),      # strided 5x5 (pad 2), one channel block
    (8, 10, 12, 8, 3, 1, True, True),       # stride 1, one channel block
    (16, 12, 12, 128, 3, 1, True, False),   # 16 channel blocks: the pad stays at the root
])
def test_padded_kernels_match_numpy(c, h, w, o, k, stride, residual, per_tile):
    assert (_copies(c, h, w, o, k, stride) <= PAD_PER_TILE_MAX) == per_tile, "the shape changed sides of the rule"
    mod, inputs, want = _fused_conv(c, h, w, o, k, stride, residual)
    _, got = _build_run(mod, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
