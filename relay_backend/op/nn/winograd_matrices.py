"""The Winograd (Cook-Toom) transform matrices of F(m, r): m outputs of an r-tap filter from
alpha = m + r - 1 inputs with alpha multiplications (Lavin & Gray, "Fast Algorithms for
Convolutional Neural Networks", arXiv:1509.09308).

In one dimension, for input d (alpha values) and filter g (r taps),

    y = A^T [(G g) * (B^T d)]        y_i = sum_k g_k d_{i+k},  i < m

and in two dimensions Y = A^T [(G g G^T) * (B^T d B)] A. The matrices evaluate the polynomials at
alpha - 1 finite interpolation points and at infinity; the points are TVM's (topi's
winograd_util, after Barabasz et al., "Error Analysis and Improving the Accuracy of Winograd
Convolution", arXiv:1803.10986), and so is the scaling: G's row j is (1, a_j, a_j^2, ...) / f_j
with f_j = prod_{l != j} (a_j - a_l) (the first made positive), A's row j is (1, a_j, a_j^2,
...), and the last rows pick the leading coefficient. B is then the unique matrix that makes the
identity hold, solved here in float64 (exact up to rounding for these small rational points),
so a weight transformed by TVM equals one transformed here.
"""
import functools

import numpy as np

from ...errors import AttrsError

# the alpha - 1 finite interpolation points of F(m, r), keyed by alpha - 2 = m + r - 3
_POINTS = {
    2: (0, -1, 1),
    3: (0, -1, 1, 1 / 2),
    4: (0, -1, 1, 1 / 2, -2),
    5: (0, -1, 1, 1 / 2, -2, -1 / 2),
    6: (0, -1, 1, 1 / 2, -1 / 2, 2, -2),
    7: (0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4),
    8: (0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4, 4),
    9: (0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4, 3 / 4, -4 / 3),
    10: (0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4, 4, 3 / 4, -4 / 3),
    11: (0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4, 4, 3 / 4, -4 / 3, 1 / 4),
    12: (0, -1, 1, 1 / 2, -1 / 2, 2, -2, -1 / 4, 4, 1 / 4, -3 / 4, 4 / 3, -4),
}
TILE_SIZES = range(2, 9)          # m: F(2x2, .) .. F(8x8, .)
KERNEL_SIZES = range(3, 8)        # r: 3x3 .. 7x7


def check_sizes(tile_size: int, kernel_size: int, what: str) -> None:
    """An AttrsError naming the supported range unless F(tile_size, kernel_size) has matrices."""
    if tile_size not in TILE_SIZES:
        raise AttrsError(f"{what}: tile_size={tile_size} is not supported; use 2..8 (4: F(4x4, 3x3))")
    if kernel_size not in KERNEL_SIZES:
        raise AttrsError(f"{what}: a {kernel_size}x{kernel_size} kernel has no Winograd transform here; "
                         f"use a square kernel of 3..7 taps")


@functools.lru_cache(maxsize=None)
def winograd_matrices(tile_size: int, kernel_size: int) -> tuple:
    """(A, B, G) of F(tile_size, kernel_size), float64: A is (alpha, m), B (alpha, alpha), G
    (alpha, r), alpha = m + r - 1 (TVM's shapes: Y = A^T M A, V = B^T d B, U = G g G^T).
    Read-only arrays (cached)."""
    check_sizes(tile_size, kernel_size, "winograd_matrices")
    m, r = tile_size, kernel_size
    alpha = m + r - 1
    points = np.array(_POINTS[alpha - 2], dtype="float64")
    scale = np.array([np.prod([a - b for b in points if b != a]) for a in points])
    scale[0] = abs(scale[0])
    a_mat = np.zeros((alpha, m))
    a_mat[:-1] = points[:, None] ** np.arange(m)
    a_mat[-1, -1] = 1.0
    g_mat = np.zeros((alpha, r))
    g_mat[:-1] = points[:, None] ** np.arange(r) / scale[:, None]
    g_mat[-1, -1] = 1.0
    # B: sum_j A[j, i] G[j, k] B[l, j] = [l == i + k] for every output i, tap k, input l
    system = np.einsum("ji,jk->ikj", a_mat, g_mat).reshape(m * r, alpha)
    target = np.zeros((m * r, alpha))
    for i in range(m):
        for k in range(r):
            target[i * r + k, i + k] = 1.0
    b_mat = np.linalg.lstsq(system, target, rcond=None)[0].T
    b_mat[np.abs(b_mat) < 1e-12] = 0.0
    for mat in (a_mat, b_mat, g_mat):
        mat.setflags(write=False)
    return a_mat, b_mat, g_mat


__all__ = ["winograd_matrices", "check_sizes", "TILE_SIZES", "KERNEL_SIZES"]
