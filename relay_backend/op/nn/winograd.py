"""Winograd convolution (Relay's contrib ops): nn.contrib_conv2d_winograd_weight_transform and
nn.contrib_conv2d_winograd_without_weight_transform, OUT_ELEMWISE_FUSABLE. A stride-1, undilated,
ungrouped NCHW conv2d with a square r x r kernel computes m x m output tiles F(m x m, r x r)
with alpha^2 multiplications per tile and channel pair (alpha = m + r - 1) instead of m^2 r^2:

    U[a, b, o, i]    = (G w[o, i] G^T)[a, b]                         the weight transform
    V[a, b, c, p]    = (B^T d[c, p] B)[a, b]                         d = alpha x alpha input tile p
    M[a, b, o, p]    = sum_c U[a, b, o, c] * V[a, b, c, p]           alpha^2 batched GEMMs
    out[n, o, y, x]  = (A^T M[., ., o, p] A)[y % m, x % m]           p = tile (n, y // m, x // m)

with winograd_matrices' A, B, G (TVM's points and scaling, so weights transformed by TVM fit).
The weight transform is its own op so that FoldConstant applies it once at compile time
(AlterOpLayout on x86 rewrites a conv2d into both; strategy/x86_alter_layout.py). The tiles p
run over (n, tile row, tile column) and are padded to a multiple of TILE_BLOCK, so a
vectorized GEMM over tiles has no tail; the padding tiles repeat the last one and are never
read back.

On x86, AlterOpLayout runs the call on channel-blocked data: NCHW{bi}c in, NCHW{bo}c out, the
transformed weight packed along its output channels, (alpha, alpha, O/bo, I, bo) (TVM's ARM
schedules pre-pack it the same way), so every stage keeps a channel block innermost and the
data stays in the layout of its NCHWc neighbours.

The transforms are written as explicit sums of the matrices' non-zero entries (a 1 is an add,
a -1 a subtract), each transform split in two 1-D passes (rows, then columns), so no
multiplication by a constant zero is ever emitted. The references run the same algorithm with
numpy; the tests compare them with a direct convolution.
"""
import dataclasses

import numpy as np

from ... import te
from ...errors import AttrsError
from ...ir.attrs import Attrs
from ...ir.dims import dim_to_str, is_static
from ...ir.shape_math import add, dims_differ, floordiv, mul
from ...ir.types import TensorType
from .. import samples as S
from ..constructor_docs import documented
from ..index_math import select_chain
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from .conv import Conv2DAttrs
from .conv_docs import CONV_PARAMETERS, CONVOLVED
from .layout_view import block_of, pack_nchw, unpack_nchw
from .winograd_matrices import KERNEL_SIZES, check_sizes, winograd_matrices

WEIGHT_OP = "nn.contrib_conv2d_winograd_weight_transform"
CONV_OP = "nn.contrib_conv2d_winograd_without_weight_transform"
TILE_BLOCK = 8            # the tile count is padded to a multiple of this (one AVX2 register of float32)
FLOAT_DTYPES = ("float16", "float32", "float64")


def _tile_size(value, what: str) -> int:
    size = C.ints(value, 1, "tile_size", minimum=1)[0]
    check_sizes(size, KERNEL_SIZES[0], what)
    return size


@dataclasses.dataclass(frozen=True)
class ConvWinogradWeightTransformAttrs(Attrs):
    """tile_size m of F(m x m, r x r): 2 for F(2x2, 3x3), 4 for F(4x4, 3x3)."""
    tile_size: int = 4

    def __post_init__(self):
        object.__setattr__(self, "tile_size", _tile_size(self.tile_size, WEIGHT_OP))


@dataclasses.dataclass(frozen=True)
class Conv2DWinogradAttrs(Conv2DAttrs):
    """Conv2DAttrs plus tile_size; strides and dilation must be 1, groups 1, the data NCHW and
    kernel_layout "OIHW" (the layout of the kernel before its transform)."""
    tile_size: int = 4

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "tile_size", _tile_size(self.tile_size, CONV_OP))
        if self.strides != (1, 1) or self.dilation != (1, 1) or self.groups != 1:
            raise AttrsError(f"{CONV_OP} computes stride-1, undilated, ungrouped convolutions; got "
                             f"strides={self.strides}, dilation={self.dilation}, groups={self.groups} "
                             f"(use nn.conv2d for those)")

    def _check_layouts(self):
        blocked = block_of(self.data_layout)
        data_allowed = ("NCHW", self.data_layout) if blocked else ("NCHW",)
        out_allowed = ("", self.out_layout) if blocked and block_of(self.out_layout) else ("", self.data_layout)
        for name, value, allowed in (("data_layout", self.data_layout, data_allowed),
                                     ("kernel_layout", self.kernel_layout, ("OIHW",)),
                                     ("out_layout", self.out_layout, out_allowed)):
            if value not in allowed:
                raise AttrsError(f"{CONV_OP}: {name}={value!r} is not supported; use {allowed[0]!r} "
                                 f"(or NCHW{{b}}c data with an NCHW{{b}}c result)")

    def blocks(self) -> tuple:
        """(input block, output block) of NCHW{b}c data and result; (0, 0) for NCHW."""
        bi = block_of(self.data_layout)
        return bi, block_of(self.out_layout or self.data_layout) if bi else 0


# --- relations --------------------------------------------------------------------------------------
def _float_arg(op, t, what, **types) -> TensorType:
    t = C.tensor_arg(op, t, what)
    if t.dtype not in FLOAT_DTYPES:
        raise C.rel_error(op, f"{what} must be a float tensor ({', '.join(FLOAT_DTYPES)}), got {t.dtype}", **types)
    return t


def _weight_transform_rel(arg_types, attrs) -> TensorType:
    """(O, I, r, r) -> (alpha, alpha, O, I), alpha = tile_size + r - 1 (a symbolic r stays
    symbolic, as in TVM; a static one must be square, 3..7)."""
    weight = _float_arg(WEIGHT_OP, arg_types[0], "weight")
    C.expect_rank(WEIGHT_OP, weight, 4, "weight (OIHW)", weight=weight)
    o, i, kh, kw = weight.shape
    if dims_differ(kh, kw) or any(is_static(k) and int(k) not in KERNEL_SIZES for k in (kh, kw)):
        raise C.rel_error(WEIGHT_OP, f"the kernel must be square with 3..7 taps, got {dim_to_str(kh)} x "
                                     f"{dim_to_str(kw)}", weight=weight)
    return TensorType((add(kh, attrs.tile_size - 1), add(kw, attrs.tile_size - 1), o, i), weight.dtype)


def _kernel_taps(alpha, attrs, types):
    """r of the r x r kernel: kernel_size when set (TVM requires it), else alpha - tile_size + 1."""
    if attrs.kernel_size is not None:
        if attrs.kernel_size[0] != attrs.kernel_size[1] or attrs.kernel_size[0] not in KERNEL_SIZES:
            raise C.rel_error(CONV_OP, f"kernel_size={attrs.kernel_size}: Winograd here takes square kernels of "
                                       f"3..7 taps", **types)
        r = attrs.kernel_size[0]
    elif is_static(alpha):
        r = int(alpha) - attrs.tile_size + 1
    else:
        raise C.rel_error(CONV_OP, "the transformed weight's size is symbolic: set kernel_size", **types)
    if dims_differ(alpha, r + attrs.tile_size - 1) or r not in KERNEL_SIZES:
        raise C.rel_error(CONV_OP, f"the transformed weight's first dims ({dim_to_str(alpha)}) must be tile_size "
                                   f"+ r - 1 = {attrs.tile_size} + r - 1 for an r x r kernel, r of 3..7", **types)
    return r


def _conv_rel(arg_types, attrs) -> TensorType:
    """data (N, C, H, W), weight (alpha, alpha, O, C) -> (N, O, H + pads - r + 1, W + pads - r + 1);
    blocked: data (N, C/bi, H, W, bi), weight (alpha, alpha, O/bo, C, bo) -> (N, O/bo, OH, OW, bo)."""
    data = _float_arg(CONV_OP, arg_types[0], "data")
    weight = _float_arg(CONV_OP, arg_types[1], "weight")
    types = dict(data=data, weight=weight)
    C.same_dtype(CONV_OP, **types)
    if block_of(attrs.data_layout):
        return _blocked_conv_rel(data, weight, attrs, types)
    C.expect_rank(CONV_OP, data, 4, "data (NCHW)", **types)
    C.expect_rank(CONV_OP, weight, 4, "weight (alpha, alpha, O, I: a transformed kernel)", **types)
    n, c, h, w = data.shape
    alpha, alpha_w, o, i = weight.shape
    if dims_differ(alpha, alpha_w):
        raise C.rel_error(CONV_OP, "the transformed weight's first two dims must be equal", **types)
    r = _kernel_taps(alpha, attrs, types)
    if attrs.channels is not None and not C.dim_matches(o, attrs.channels):
        raise C.rel_error(CONV_OP, f"channels={attrs.channels} but the weight has {dim_to_str(o)} output "
                                   f"channels", **types)
    if dims_differ(i, c):
        raise C.rel_error(CONV_OP, f"data has {dim_to_str(c)} channels but the weight expects {dim_to_str(i)}",
                          **types)
    pads = attrs.padding
    out_hw = [C.window_out_dim(size, r, 1, 1, pads[axis], pads[axis + 2]) for axis, size in enumerate((h, w))]
    if any(d is None for d in out_hw):
        raise C.rel_error(CONV_OP, f"the {r}x{r} kernel is larger than the padded input", **types)
    return TensorType((n, o, *out_hw), C.result_dtype(attrs.out_dtype, data.dtype))


def _blocked_conv_rel(data, weight, attrs, types) -> TensorType:
    """The NCHW relation on the unpacked views of NCHW{bi}c data and a weight packed along its
    output channels, (alpha, alpha, O/bo, C, bo); the result packed to NCHW{bo}c."""
    bi, bo = attrs.blocks()
    C.expect_rank(CONV_OP, data, 5, f"data ({attrs.data_layout})", **types)
    C.expect_rank(CONV_OP, weight, 5, f"weight (alpha, alpha, O/{bo}, I, {bo}: a transformed kernel packed "
                                      f"along O)", **types)
    if dims_differ(data.shape[4], bi) or dims_differ(weight.shape[4], bo):
        raise C.rel_error(CONV_OP, f"data_layout {attrs.data_layout} needs a last data dim of {bi} and out_layout "
                                   f"{attrs.out_layout or attrs.data_layout} a last weight dim of {bo}", **types)
    n, cc, h, w, _ = data.shape
    alpha, alpha_w, oc, i, _ = weight.shape
    unpacked = _conv_rel([TensorType((n, mul(cc, bi), h, w), data.dtype),
                          TensorType((alpha, alpha_w, mul(oc, bo), i), weight.dtype)],
                         dataclasses.replace(attrs, data_layout="NCHW", out_layout=""))
    on, oo, oh, ow = unpacked.shape
    return TensorType((on, floordiv(oo, bo), oh, ow, bo), unpacked.dtype)


# --- references: the algorithm in numpy (float64 for float32/64, float32 for float16) -----------------
def _ref_dtype(dtype: str) -> str:
    return "float64" if dtype != "float16" else "float32"


def _weight_transform_ref(weight, attrs):
    """G w G^T per (o, i) as one matrix product: (G kron G) (alpha^2 x r^2) times the weight's
    (r^2 x O*I) view gives the (alpha, alpha, O, I) result already in its final order.
    FoldConstant runs this on every Winograd weight of a model; a three-operand einsum took
    0.4 s of ResNet-50's cached build, two float64 tensordots and a transposing copy 0.29 s."""
    g_mat = winograd_matrices(attrs.tile_size, weight.shape[2])[2]
    alpha, r = g_mat.shape
    o, i = weight.shape[:2]
    # at least float32, no wider than the weight: a float64 copy of a 512x512 weight and its
    # transform (~100 MB of fresh pages) cost more than the product; 9 terms per sum
    dtype = np.promote_types(weight.dtype, np.float32)
    flat = weight.reshape(o * i, r * r).astype(dtype, copy=False)
    return (np.kron(g_mat, g_mat).astype(dtype) @ flat.T).astype(weight.dtype, copy=False).reshape(alpha, alpha, o, i)


def _conv_ref(data, weight, attrs):
    bi, bo = attrs.blocks()
    if bi:
        alpha, _, oc, i, _ = weight.shape
        unpacked = weight.transpose(0, 1, 2, 4, 3).reshape(alpha, alpha, oc * bo, i)
        plain = dataclasses.replace(attrs, data_layout="NCHW", out_layout="")
        return pack_nchw(_conv_ref(unpack_nchw(data), unpacked, plain), bo)
    m, alpha = attrs.tile_size, weight.shape[0]
    r = alpha - m + 1
    a_mat, b_mat, _ = winograd_matrices(m, r)
    dtype = C.result_dtype(attrs.out_dtype, str(data.dtype))
    x = C.pad_hw(data.astype(_ref_dtype(dtype)), attrs.padding)
    oh, ow = x.shape[2] - r + 1, x.shape[3] - r + 1
    nh, nw = -(-oh // m), -(-ow // m)
    x = np.pad(x, ((0, 0), (0, 0), (0, nh * m + r - 1 - x.shape[2]), (0, nw * m + r - 1 - x.shape[3])))
    tiles = np.lib.stride_tricks.sliding_window_view(x, (alpha, alpha), axis=(2, 3))[:, :, ::m, ::m]
    v = np.einsum("ae,ncyxab,bf->ncyxef", b_mat, tiles, b_mat)
    prod = np.einsum("efoc,ncyxef->noyxef", weight.astype(v.dtype), v)
    y = np.einsum("ei,noyxef,fj->noyixj", a_mat, prod, a_mat)
    n, o = y.shape[:2]
    return np.ascontiguousarray(y.reshape(n, o, nh * m, nw * m)[:, :, :oh, :ow]).astype(dtype)


# --- te computes ------------------------------------------------------------------------------------
def linear_map(coefficients, fetch, dtype: str):
    """sum_k coefficients[k] * fetch(k) over the non-zero coefficients, with a 1 an add and a -1 a
    subtract (exact zeros cost nothing)."""
    total = None
    for k, coef in enumerate(coefficients):
        if coef == 0:
            continue
        term = fetch(k)
        if coef == -1:
            total = -term if total is None else total - term
            continue
        if coef != 1:
            term = term * T.const(float(coef), dtype)
        total = term if total is None else total + term
    return total if total is not None else T.const(0.0, dtype)


def matrix_pass(matrix, index, fetch, dtype: str):
    """Output `index` of a 1-D transform: sum_k matrix[k, index] * fetch(k), one explicit sum per
    (constant) value of `index`, chosen by a select (unrolled loops fold it away)."""
    cases = [(index == j, linear_map(matrix[:, j], fetch, dtype)) for j in range(matrix.shape[1])]
    return select_chain(cases)


def _weight_transform_compute(attrs, inputs, out_type):
    """U[a, b, o, i] = sum_{k, l} G[a, k] w[o, i, k, l] G[b, l], as G (G w^T)^T: two passes."""
    weight, = inputs
    o, i, r, _ = T.dims(weight)
    acc = T.acc_dtype(weight.dtype)
    g_t = winograd_matrices(attrs.tile_size, r)[2].T
    alpha = g_t.shape[1]
    rows = te.compute((alpha, r, o, i), lambda a, col, oc, ic: matrix_pass(
        g_t, a, lambda k: weight[oc, ic, k, col].astype(acc), acc), name="winograd_kernel_rows")
    out = te.compute((alpha, alpha, o, i), lambda a, b, oc, ic: matrix_pass(
        g_t, b, lambda k: rows[a, k, oc, ic], acc).astype(weight.dtype),
        name="winograd_kernel_transform", tag=WEIGHT_TRANSFORM.tag)
    return [out]


def tile_count(n, oh, ow, m: int) -> tuple:
    """(tiles per row nh, per column nw, all tiles, all tiles padded to TILE_BLOCK)."""
    nh, nw = T.ceil_div(oh, m), T.ceil_div(ow, m)
    tiles = n * nh * nw
    return nh, nw, tiles, T.ceil_div(tiles, TILE_BLOCK) * TILE_BLOCK


def _tiling(data, attrs, r: int) -> tuple:
    """(data zero-padded to whole m x m output tiles, oh, ow, nh, nw, tiles padded to TILE_BLOCK,
    origin) for an r x r Winograd convolution of `data` with H and W at axes 2 and 3 (NCHW or
    NCHW{b}c); origin(p) is (image, first row, first column) of tile p (the padding tiles repeat
    the last one)."""
    m, pads = attrs.tile_size, attrs.padding
    dims = T.dims(data)
    h, w = dims[2], dims[3]
    oh, ow = T.window_out(h, r, 1, 1, pads[0], pads[2]), T.window_out(w, r, 1, 1, pads[1], pads[3])
    nh, nw, tiles, padded_tiles = tile_count(dims[0], oh, ow, m)
    padded = T.pad_axes_stage(data, (2, 3), (pads[0], pads[1], nh * m + r - 1 - h - pads[0],
                                             nw * m + r - 1 - w - pads[1]), 0, name="winograd_pad")

    def origin(p):
        p = T.imin(p, tiles - 1)
        return p // (nh * nw), (p // nw) % nh * m, p % nw * m
    return padded, oh, ow, nh, nw, padded_tiles, origin


def _conv_compute(attrs, inputs, out_type):
    """pad -> input transform (two passes, tag winograd_data_pack) -> batched GEMM
    (winograd_bgemm) -> inverse transform (two passes, winograd_inverse) -> the NCHW result."""
    if block_of(attrs.data_layout):
        return _blocked_conv_compute(attrs, inputs, out_type)
    data, weight = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    m = attrs.tile_size
    alpha, _, o, _ = T.dims(weight)
    r = alpha - m + 1
    a_mat, b_mat, _ = winograd_matrices(m, r)
    n, c, _, _ = T.dims(data)
    padded, oh, ow, nh, nw, padded_tiles, origin = _tiling(data, attrs, r)

    def rows_pass(a, col, ch, p):
        b, y, x = origin(p)
        return matrix_pass(b_mat, a, lambda k: padded[b, ch, y + k, x + col].astype(acc), acc)
    data_rows = te.compute((alpha, alpha, c, padded_tiles), rows_pass, name="winograd_data_rows",
                           tag="winograd_data_rows")
    data_pack = te.compute((alpha, alpha, c, padded_tiles), lambda a, b, ch, p: matrix_pass(
        b_mat, b, lambda k: data_rows[a, k, ch, p], acc), name="winograd_data_pack", tag="winograd_data_pack")
    rc = te.reduce_axis((0, c), "rc")
    bgemm = te.compute((alpha, alpha, o, padded_tiles), lambda a, b, oc, p: te.sum(
        weight[a, b, oc, rc].astype(acc) * data_pack[a, b, rc, p], axis=rc), name="winograd_bgemm",
        tag="winograd_bgemm")
    inverse_rows = te.compute((o, m, alpha, padded_tiles), lambda oc, i, b, p: matrix_pass(
        a_mat, i, lambda k: bgemm[k, b, oc, p], acc), name="winograd_inverse_rows", tag="winograd_inverse_rows")
    inverse = te.compute((o, m, m, padded_tiles), lambda oc, i, j, p: matrix_pass(
        a_mat, j, lambda k: inverse_rows[oc, i, k, p], acc), name="winograd_inverse", tag="winograd_inverse")

    def result(b, oc, y, x):
        return inverse[oc, y % m, x % m, (b * nh + y // m) * nw + x // m].astype(dtype)
    return [te.compute((n, o, oh, ow), result, name="conv2d_winograd", tag=WINOGRAD_CONV.tag)]


def _blocked_conv_compute(attrs, inputs, out_type):
    """The stages of _conv_compute on NCHW{bi}c data and a weight packed along O, with the
    channel blocks innermost everywhere, so that every transform runs on whole contiguous blocks:

        V[a, b, p, c.outer, c.inner]       input transform of tile p (tag winograd_data_pack)
        M[a, b, o.outer, p, o.inner]       = sum_c U[a, b, o.outer, c, o.inner] V[a, b, p, c]
        Y[o.outer, p, i, j, o.inner]       inverse transform (tag winograd_inverse)
        out[n, o.outer, y, x, o.inner]     = Y[o.outer, tile(n, y // m, x // m), y % m, x % m, o.inner]
    """
    data, weight = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    m = attrs.tile_size
    alpha, _, out_blocks, _, bo = T.dims(weight)
    r = alpha - m + 1
    a_mat, b_mat, _ = winograd_matrices(m, r)
    n, in_blocks, _, _, bi = T.dims(data)
    padded, oh, ow, nh, nw, padded_tiles, origin = _tiling(data, attrs, r)

    def rows_pass(a, col, p, co, ci):
        b, y, x = origin(p)
        return matrix_pass(b_mat, a, lambda k: padded[b, co, y + k, x + col, ci].astype(acc), acc)
    data_rows = te.compute((alpha, alpha, padded_tiles, in_blocks, bi), rows_pass, name="winograd_data_rows",
                           tag="winograd_data_rows")
    data_pack = te.compute((alpha, alpha, padded_tiles, in_blocks, bi), lambda a, b, p, co, ci: matrix_pass(
        b_mat, b, lambda k: data_rows[a, k, p, co, ci], acc), name="winograd_data_pack", tag="winograd_data_pack")
    rco, rci = te.reduce_axis((0, in_blocks), "rco"), te.reduce_axis((0, bi), "rci")
    bgemm = te.compute((alpha, alpha, out_blocks, padded_tiles, bo), lambda a, b, ko, p, ki: te.sum(
        weight[a, b, ko, rco.var * bi + rci.var, ki].astype(acc) * data_pack[a, b, p, rco, rci], axis=[rco, rci]),
        name="winograd_bgemm", tag="winograd_bgemm")
    inverse_rows = te.compute((out_blocks, padded_tiles, m, alpha, bo), lambda ko, p, i, b, ki: matrix_pass(
        a_mat, i, lambda k: bgemm[k, b, ko, p, ki], acc), name="winograd_inverse_rows", tag="winograd_inverse_rows")
    inverse = te.compute((out_blocks, padded_tiles, m, m, bo), lambda ko, p, i, j, ki: matrix_pass(
        a_mat, j, lambda k: inverse_rows[ko, p, i, k, ki], acc), name="winograd_inverse", tag="winograd_inverse")

    def result(b, ko, y, x, ki):
        return inverse[ko, (b * nh + y // m) * nw + x // m, y % m, x % m, ki].astype(dtype)
    return [te.compute((n, out_blocks, oh, ow, bo), result, name="conv2d_winograd", tag=WINOGRAD_CONV.tag)]


# --- samples ----------------------------------------------------------------------------------------
def _transformed(rng, o, i, r, m, dtype="float32", low=-0.5):
    """A transformed random kernel; small values keep float32 rounding within the conformance
    tolerance (the transforms scale values by up to 1/f_j)."""
    return _weight_transform_ref(S.rand(rng, (o, i, r, r), dtype, low, 0.5), ConvWinogradWeightTransformAttrs(m))


def _weight_transform_samples(rng):
    return [Sample([S.rand(rng, (4, 3, 3, 3))], ConvWinogradWeightTransformAttrs(4), "F(4x4, 3x3)"),
            Sample([S.rand(rng, (2, 5, 3, 3), "float64")], ConvWinogradWeightTransformAttrs(2), "F(2x2, 3x3), float64"),
            Sample([S.rand(rng, (3, 2, 5, 5))], ConvWinogradWeightTransformAttrs(2), "5x5 kernel")]


def _conv_samples(rng):
    def case(n, c, h, w, o, r, m, note, dtype="float32", low=-1.0, **kw):
        return Sample([S.rand(rng, (n, c, h, w), dtype, low, 1.0), _transformed(rng, o, c, r, m, dtype, low / 2)],
                      Conv2DWinogradAttrs(tile_size=m, channels=o, kernel_size=(r, r), **kw), note)
    return [case(2, 3, 7, 6, 4, 3, 2, "F(2x2, 3x3), batch 2, no padding"),     # first: the default suite's
            case(1, 5, 9, 10, 6, 3, 4, "F(4x4, 3x3), padding 1, odd channels", padding=1),  # (cheaper LLVM)
            case(1, 4, 6, 6, 3, 3, 4, "asymmetric padding", padding=(1, 0, 2, 1)),
            case(1, 2, 8, 8, 2, 5, 2, "5x5 kernel", padding=2),
            case(1, 4, 5, 5, 4, 3, 2, "float64", dtype="float64", padding=1),
            case(1, S.FLOAT16_REDUCTION_TERMS, 4, 4, 2, 3, 2, "float16, FLOAT16_REDUCTION_TERMS channels "
                 "per output", dtype="float16", low=0.0, padding=1),
            blocked_case(rng, 1, 6, 9, 10, 10, 3, 4, 3, 5, "NCHW3c in, NCHW5c out, F(4x4), padding 1", padding=1),
            blocked_case(rng, 2, 8, 6, 7, 8, 3, 2, 4, 4, "NCHW4c, F(2x2), batch 2, no padding")]


def pack_transformed(weight, block: int):
    """(alpha, alpha, O, I) -> (alpha, alpha, O/block, I, block): a transformed kernel packed
    along its output channels, the weight of the NCHW{b}c Winograd convolution."""
    alpha, _, o, i = weight.shape
    return np.ascontiguousarray(weight.reshape(alpha, alpha, o // block, block, i).transpose(0, 1, 2, 4, 3))


def blocked_case(rng, n, c, h, w, o, r, m, bi, bo, note, **kw):
    """A Winograd sample on NCHW{bi}c data with an NCHW{bo}c result."""
    data = pack_nchw(S.rand(rng, (n, c, h, w), "float32", -1.0, 1.0), bi)
    weight = pack_transformed(_transformed(rng, o, c, r, m, "float32", -0.5), bo)
    return Sample([data, weight], Conv2DWinogradAttrs(tile_size=m, channels=o, kernel_size=(r, r),
                                                      data_layout=f"NCHW{bi}c", out_layout=f"NCHW{bo}c", **kw), note)


WEIGHT_TRANSFORM = defop(WEIGHT_OP, inputs=("weight",), attrs=ConvWinogradWeightTransformAttrs,
                         rel=_weight_transform_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                         ref=_weight_transform_ref, samples=_weight_transform_samples, level=10,
                         compute=_weight_transform_compute, tag="winograd_kernel_transform",
                         doc="out[a, b, o, i] = sum_{k, l} G[a, k] * weight[o, i, k, l] * G[b, l]")
WINOGRAD_CONV = defop(CONV_OP, inputs=("data", "weight"), attrs=Conv2DWinogradAttrs, rel=_conv_rel,
                      pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_conv_ref, samples=_conv_samples, level=10,
                      compute=_conv_compute, tag="conv2d_winograd",
                      doc="conv2d (stride 1) of data with the kernel whose Winograd transform is weight: "
                          "tiles of A^T [U * (B^T d B)] A")


def contrib_conv2d_winograd_weight_transform(weight, tile_size):
    """relay.nn.contrib_conv2d_winograd_weight_transform: the kernel transform G w G^T of Winograd
    convolution, as its own op so that FoldConstant computes it once at compile time.

    Parameters
    ----------
    weight : relay.Expr
        The kernel (O, I, r, r), r of 3..7.
    tile_size : int
        The output tile m of F(m x m, r x r), 2..8: 2 for F(2x2, 3x3), 4 for F(4x4, 3x3).

    Returns
    -------
    result : relay.Expr
        The transformed kernel (m + r - 1, m + r - 1, O, I).
    """
    return WEIGHT_TRANSFORM(weight, attrs=ConvWinogradWeightTransformAttrs(tile_size))


WINOGRAD_PARAMETERS = {
    **CONV_PARAMETERS,
    "weight": ("relay.Expr", "The transformed kernel (alpha, alpha, O, I) that "
                             "contrib_conv2d_winograd_weight_transform made, alpha = tile_size + r - 1."),
    "tile_size": ("int", "The output tile m of F(m x m, r x r): 2 for F(2x2, 3x3), 4 for F(4x4, 3x3)."),
    "strides": ("int or tuple of int, optional", "Must be 1 (Winograd computes stride-1 convolutions). "
                                                 "Defaults to (1, 1)."),
    "dilation": ("int or tuple of int, optional", "Must be 1. Defaults to (1, 1)."),
    "groups": ("int, optional", "Must be 1. Defaults to 1."),
    "data_layout": ("str, optional", '"NCHW", or "NCHW{b}c" (channel-blocked data; the weight is then '
                                     'packed along its output channels, (alpha, alpha, O/bo, I, bo), and '
                                     'out_layout is "NCHW{bo}c"). Defaults to "NCHW".'),
    "kernel_layout": ("str, optional", 'The layout of the kernel before its transform, "OIHW". '
                                       'Defaults to "OIHW".'),
    "out_layout": ("str, optional", 'The result layout: "" (the data layout), "NCHW" for NCHW data, '
                                    '"NCHW{bo}c" for blocked data. Defaults to "".'),
}


@documented(WINOGRAD_PARAMETERS, CONVOLVED)
def contrib_conv2d_winograd_without_weight_transform(data, weight, tile_size, strides=(1, 1), padding=(0, 0),
                                                     dilation=(1, 1), groups=1, channels=None,
                                                     kernel_size=None, data_layout="NCHW",
                                                     kernel_layout="OIHW", out_layout="", out_dtype=""):
    """relay.nn.contrib_conv2d_winograd_without_weight_transform: a stride-1 conv2d by the
    Winograd algorithm F(m x m, r x r) on a kernel already transformed by
    contrib_conv2d_winograd_weight_transform (same values as nn.conv2d up to rounding)."""
    return WINOGRAD_CONV(data, weight, attrs=Conv2DWinogradAttrs(strides, padding, dilation, groups, channels,
                                                                 kernel_size, data_layout, kernel_layout,
                                                                 out_layout, out_dtype, tile_size))


__all__ = ["contrib_conv2d_winograd_weight_transform", "contrib_conv2d_winograd_without_weight_transform",
           "ConvWinogradWeightTransformAttrs", "Conv2DWinogradAttrs", "linear_map", "matrix_pass"]
