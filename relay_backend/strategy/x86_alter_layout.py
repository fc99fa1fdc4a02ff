"""AlterOpLayout on x86 (Relay's topi/x86 conv2d_alter_op / dense_alter_op): which calls run in
channel-blocked layouts, and with which blocks.

    nn.conv2d NCHW/OIHW, groups 1   -> nn.contrib_conv2d_NCHWc      data NCHW{ib}c, kernel OIHW{ib}i{ob}o
    nn.conv2d depthwise             -> nn.contrib_depthwise_conv2d_NCHWc   kernel OIHW1i{ob}o
    nn.conv2d grouped (blocks fill
      at least half a register)     -> nn.contrib_conv2d_NCHWc with groups
    nn.dense with 2+ rows           -> nn.contrib_dense_pack         weight NC{bn}n
    nn.conv2d 3x3 stride 1 in the
      host's winograd_layers()      -> nn.contrib_conv2d_winograd_without_weight_transform on
                                       NCHW{ib}c data, result NCHW{ob}c, weight
                                       nn.contrib_conv2d_winograd_weight_transform(w) packed HWOI{ob}o

The output block ob is the largest divisor of the output channels (per group) up to
`channel_block_limit` (default: one SIMD register of float32, 8 with AVX2, 16 with AVX-512), the
input block ib the largest divisor of the input channels up to the same limit, so consecutive
convolutions with equal channel counts agree on their block and need no transform between
them. Only float32 calls of static shapes are altered (symbolic ones keep their layout). The
layout transforms are placed by the new ops' FInferCorrectLayout rules (op/layout_rules.py);
FoldConstant then packs constant weights once.

Tuned blocks (as TVM's conv2d_alter_op reads tile_ic / tile_oc): for an ungrouped conv2d the
dispatch context is asked for the conv2d_NCHWc.x86 config of the default blocking's workload
(x86_blocks.tuned_blocks, under the pass's target); a record with block_ic / block_oc that
divide the channels picks the blocks instead of the default, and so the weight packing. A
dense's packing block likewise comes from its dense_pack_prepacked.x86 record (block_n).
"""
import dataclasses

from .. import te
from ..ir.dims import is_static_shape
from ..ir.types import TensorType
from ..op.nn.conv_nchwc import CONV_NCHWC, DEPTHWISE_NCHWC, Conv2DNCHWcAttrs, blocks
from ..op.nn.dense_pack import DENSE_PACK, DensePackAttrs
from ..target import Target
from ..op.nn.winograd import WINOGRAD_CONV, Conv2DWinogradAttrs
from .base import register_alter_layout, register_pad_channels
from .x86_blocks import channel_block, channel_block_limit, tuned_blocks
from .x86_common import vector_bytes
from .x86_conv_nchwc import CONV_TASK, default_blocking_args
from .x86_dense_pack import TASK_NAME as DENSE_TASK, default_packing_args

DTYPES = ("float32",)


def _static_float(call) -> bool:
    """Every argument and the result are float32 tensors of static shape (a size variable or
    Any keeps the call as it is: the blocked kernels are chosen for static shapes)."""
    types = [a.checked_type for a in call.args] + [call.checked_type]
    return all(isinstance(t, TensorType) and t.dtype in DTYPES and is_static_shape(t.shape) for t in types)


def conv2d_nchwc_attrs(call, limit: int = None):
    """The blocked attrs for a conv2d call, or None when it stays as it is."""
    attrs = call.attrs
    if not _static_float(call) or attrs.data_layout != "NCHW" or attrs.kernel_layout != "OIHW" or \
            attrs.out_layout not in ("", "NCHW"):
        return None
    _, c, _, _ = (int(d) for d in call.args[0].checked_type.shape)
    o, i, _, _ = (int(d) for d in call.args[1].checked_type.shape)
    limit = limit or channel_block_limit()
    g = attrs.groups
    depthwise = g > 1 and g == c and i == 1
    if depthwise:
        ib, ob = channel_block(c, limit), channel_block(o, limit)
        kernel = f"OIHW1i{ob}o"
    else:
        ib, ob = channel_block(i, limit), channel_block(o // g, limit)
        if g > 1 and 2 * ob < limit:
            return None      # a few channels per group: the plain grouped schedule does better
        kernel = f"OIHW{ib}i{ob}o"
    fields = {f.name: getattr(attrs, f.name) for f in dataclasses.fields(attrs)}
    fields.update(data_layout=f"NCHW{ib}c", kernel_layout=kernel, out_layout=f"NCHW{ob}c")
    new_attrs = Conv2DNCHWcAttrs(**fields)
    if g == 1:
        new_attrs = _with_tuned_blocks(call, new_attrs)
    return DEPTHWISE_NCHWC if depthwise else CONV_NCHWC, new_attrs


def _with_tuned_blocks(call, attrs):
    """`attrs` (the default blocking of an ungrouped conv2d call) with the blocks of the
    current dispatch context's conv2d_NCHWc.x86 config, when it has a record for the call."""
    (n, c, h, w), (o, _, kh, kw) = ([int(d) for d in a.checked_type.shape] for a in call.args)
    _, _, oh, ow = (int(d) for d in call.checked_type.shape)
    unit_blocked = (attrs, [te.placeholder((n, c, h, w, 1), call.args[0].checked_type.dtype),
                            te.placeholder((o, c, kh, kw, 1, 1), call.args[1].checked_type.dtype)],
                    TensorType((n, o, oh, ow, 1), call.checked_type.dtype))
    chosen = tuned_blocks(CONV_TASK, default_blocking_args(unit_blocked), Target.current(allow_none=True),
                          ("block_ic", "block_oc"))
    ib, ob = blocks(attrs)
    bi, bo = chosen.get("block_ic", ib), chosen.get("block_oc", ob)
    if (bi, bo) == (ib, ob) or c % bi or o % bo:
        return attrs
    return dataclasses.replace(attrs, data_layout=f"NCHW{bi}c", kernel_layout=f"OIHW{bi}i{bo}o",
                               out_layout=f"NCHW{bo}c")


# SIMD register bytes -> {(input channels, output channels, height, width): tile size} of the 3x3
# stride-1 convolutions that ran faster as Winograd (conv2d_winograd_nchwc.x86, on channel-blocked
# data) than as conv2d_NCHWc.x86 on a machine of that vector width (python -m
# benchmarks.winograd_layers, one core, interleaved; benchmarks/README.md has the figures):
# ResNet's four stages and DenseNet-121's 128 -> 32 convolutions.
# - AVX-512, measured on a Zen 4: F(4x4) 0.89-1.03 ms against 2.02-2.08 direct at ResNet's 56x56,
#   28x28 and 14x14, F(2x2) 1.46 against 2.18 at 7x7 (where F(4x4) pads 7 to 8 and loses);
#   DenseNet at 0.47-0.75x of direct (the network 0.85 -> 0.68x onnxruntime; the four kernels
#   add ~0.7 s to its cold build, 8.4 -> 9.1 s).
# - AVX2, measured on the same Zen 4 with every kernel built as for a Zen 3 (`--as-avx2`: 8-lane
#   blocks, 16 registers; its two 256-bit FMAs per cycle give the same peak): F(4x4) at 0.42-0.67x
#   of direct on ResNet's 56x56 and 14x14 and DenseNet's 56x56 and 14x14; F(2x2) at 0.55-0.93x
#   on the 28x28 layers (ResNet 1.47 ms, F(4x4) 1.54, direct 2.65) and the 7x7 ones.
WINOGRAD_LAYERS_BY_VECTOR_BYTES = {
    32: {(64, 64, 56, 56): 4, (128, 128, 28, 28): 2, (256, 256, 14, 14): 4, (512, 512, 7, 7): 2,
         (128, 32, 56, 56): 4, (128, 32, 28, 28): 2, (128, 32, 14, 14): 4, (128, 32, 7, 7): 2},
    64: {(64, 64, 56, 56): 4, (128, 128, 28, 28): 4, (256, 256, 14, 14): 4, (512, 512, 7, 7): 2,
         (128, 32, 56, 56): 4, (128, 32, 28, 28): 4, (128, 32, 14, 14): 4, (128, 32, 7, 7): 2},
}
WINOGRAD_LAYERS = None      # a table to use instead of the host's (tests pin one)


def winograd_layers() -> dict:
    """The Winograd table of this host's vector width (WINOGRAD_LAYERS when set); a width
    never measured (SSE only) gets none: every convolution stays direct."""
    if WINOGRAD_LAYERS is not None:
        return WINOGRAD_LAYERS
    return WINOGRAD_LAYERS_BY_VECTOR_BYTES.get(vector_bytes(), {})


def winograd_attrs(call, layers=None):
    """(Winograd op, attrs) for a float32 NCHW 3x3 stride-1 undilated ungrouped conv2d whose shape
    is in `layers` (default winograd_layers(): the host's table), else None. The Winograd call
    runs on channel-blocked data and result (NCHW{ib}c -> NCHW{ob}c, the blocks conv2d_NCHWc
    would take), so it needs no layout transform between NCHWc neighbours."""
    attrs = call.attrs
    if not _static_float(call) or attrs.data_layout != "NCHW" or attrs.kernel_layout != "OIHW" or \
            attrs.out_layout not in ("", "NCHW") or attrs.strides != (1, 1) or attrs.dilation != (1, 1) or \
            attrs.groups != 1:
        return None
    _, c, h, w = (int(d) for d in call.args[0].checked_type.shape)
    o, _, kh, kw = (int(d) for d in call.args[1].checked_type.shape)
    tile = (winograd_layers() if layers is None else layers).get((c, o, h, w))
    if (kh, kw) != (3, 3) or tile is None:
        return None
    limit = channel_block_limit()
    fields = {f.name: getattr(attrs, f.name) for f in dataclasses.fields(attrs)}
    fields.update(tile_size=tile, kernel_size=(3, 3), channels=o, data_layout=f"NCHW{channel_block(c, limit)}c",
                  out_layout=f"NCHW{channel_block(o, limit)}c")
    return WINOGRAD_CONV, Conv2DWinogradAttrs(**fields)


@register_alter_layout("nn.conv2d", "x86")
def alter_conv2d_x86(call):
    return winograd_attrs(call) or conv2d_nchwc_attrs(call)


@register_pad_channels("nn.conv2d", "x86")
def padded_out_channels(call, lanes: int = None):
    """The output channels a float32 NCHW / OIHW ungrouped conv2d runs on (transform/
    pad_channels.PadConvChannels), or None: a multiple of the SIMD register's lanes when that
    wastes fewer lanes than the block AlterOpLayout picks, i.e. when O / padded > block / lanes
    (1000 channels on AVX-512: 1008 keeps 99% of the lanes busy, blocks of 10 only 62%)."""
    attrs = call.attrs
    if not _static_float(call) or attrs.groups != 1 or attrs.data_layout != "NCHW" or \
            attrs.kernel_layout != "OIHW" or attrs.out_layout not in ("", "NCHW"):
        return None
    lanes = lanes or channel_block_limit()
    out_channels = int(call.checked_type.shape[1])
    padded = -(-out_channels // lanes) * lanes
    block = channel_block(out_channels, lanes)
    if padded == out_channels or out_channels * lanes <= block * padded:
        return None
    return padded


def dense_pack_attrs(call, limit: int = None):
    """The packed attrs for a dense call with 2+ rows, or None (one row reads the weight once
    unpacked: dense_batch1.x86)."""
    if not _static_float(call):
        return None
    data_shape = [int(d) for d in call.args[0].checked_type.shape]
    units = int(call.args[1].checked_type.shape[0])
    rows = 1
    for d in data_shape[:-1]:
        rows *= d
    if rows < 2:
        return None
    block = channel_block(units, limit or channel_block_limit())
    attrs = DensePackAttrs(call.attrs.units, call.attrs.out_dtype, f"NC{block}n")
    return DENSE_PACK, _with_tuned_packing(call, attrs, units, block)


def _with_tuned_packing(call, attrs, units: int, block: int):
    """`attrs` with the packing block of the current dispatch context's
    dense_pack_prepacked.x86 config, when it has a record for the call."""
    data, weight = (a.checked_type for a in call.args)
    k = int(weight.shape[1])
    args = (attrs, [te.placeholder([int(d) for d in data.shape], data.dtype),
                    te.placeholder((units // block, k, block), weight.dtype)],
            call.checked_type)
    chosen = tuned_blocks(DENSE_TASK, default_packing_args(args), Target.current(allow_none=True), ("block_n",))
    bn = chosen.get("block_n", block)
    return attrs if bn == block or units % bn else dataclasses.replace(attrs, weight_layout=f"NC{bn}n")


@register_alter_layout("nn.dense", "x86")
def alter_dense_x86(call):
    return dense_pack_attrs(call)
