"""conv2d_NCHWc.x86's K-blocked nest (strategy/x86_conv_kblocked.py): small output maps whose
weights stream from beyond L2 run the reduction in chunks of input channels with the rows
inside each chunk. The rule picks it only for such layers, and the fused kernels it makes
(bias, residual add, relu; strided, padded, 1x1 and 3x3; channel-block counts the chunk and
the channel tile do not divide evenly) match an independent numpy reference."""
import numpy as np
import pytest

from relay_backend.strategy.x86_conv_kblocked import ACC_BYTES, L1_BYTES, k_chunk
from relay_backend.strategy.x86_conv_nchwc import L2_BYTES, choose_tile
from relay_backend.strategy.x86_common import prod

from .test_x86_conv_register_tile import BLOCK, _build_run, _fused_conv

STREAMED = L2_BYTES // 2


def _rule(c, h, w, o, k, stride):
    """(tile, k_chunk) the schedule picks for the NCHW{BLOCK}c convolution of these sizes."""
    pad = k // 2
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    out = (1, o // BLOCK, oh, ow, BLOCK)
    kernel = (o // BLOCK, c // BLOCK, k, k, BLOCK, BLOCK)
    tile = choose_tile(out, c * h * w * 4, prod(kernel) * 4)
    return tile, k_chunk(out, kernel, tile.oc_tile, STREAMED)


def test_rule_takes_small_maps_with_streamed_weights_only():
    assert k_chunk((1, 32, 7, 7, 16), (32, 128, 1, 1, 16, 16), 2, STREAMED) == 8     # ResNet-50 2048->512
    assert k_chunk((1, 32, 7, 7, 16), (32, 32, 3, 3, 16, 16), 2, STREAMED) == 1      # 512ch 3x3: 18 KiB a block
    assert k_chunk((1, 16, 14, 14, 16), (16, 64, 1, 1, 16, 16), 2, STREAMED) is None  # 1024->256 at 14x14: 25 KiB
    assert k_chunk((1, 4, 7, 7, 16), (4, 4, 1, 1, 16, 16), 2, STREAMED) is None      # 64 KiB of weights: in L2


def test_chunk_divides_the_input_blocks_and_fits_half_of_l1():
    for icc in (1, 7, 13, 64, 65, 128):
        chunk = k_chunk((1, 40, 5, 5, 8), (40, icc, 3, 3, 8, 8), 1, 0)
        assert icc % chunk == 0 and (chunk == 1 or chunk * 9 * 64 * 4 <= L1_BYTES // 2)
    assert 2 * 7 * 7 * 16 * 4 <= ACC_BYTES < 2 * 14 * 14 * 16 * 4


@pytest.mark.compile
@pytest.mark.parametrize("c,h,w,o,k,stride,residual", [
    (520, 7, 5, 136, 1, 1, True),     # 65 input blocks (chunk 13), 17 output blocks, odd map
    (40, 13, 11, 200, 3, 2, True),    # strided, padded 3x3: 25 output blocks, chunk 1
    (264, 14, 13, 264, 1, 2, False),  # strided 1x1 projection onto a 7x7 map, 33 blocks each side
])
def test_k_blocked_kernels_match_numpy(c, h, w, o, k, stride, residual):
    assert _rule(c, h, w, o, k, stride)[1] is not None, "the shape no longer takes the K-blocked nest"
    mod, inputs, want = _fused_conv(c, h, w, o, k, stride, residual)
    _, got = _build_run(mod, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
