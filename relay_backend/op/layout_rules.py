"""Per-operator layout rules for ConvertLayout (Relay's FInferCorrectLayout and
FTVMConvertOpLayout), attached to the ops with register_op_attr.

A value's layout is a LayoutInfo(orig, cur): the layout it had in the original program and the
one it has now (equal, or both None when unknown, means untouched). A rule is

    rule(call, new_attrs, infos) -> Decision(attrs, inputs, outputs)

where `call` is the original typed call, `new_attrs` its attrs after any conversion and `infos`
the LayoutInfo of each rewritten argument. `inputs[i]` says what argument i needs: None (take it
as it is) or a function building the adapted argument (e.g. a layout_transform); `outputs` is the
LayoutInfo of the result (a list for a tuple-valued op). An op without a rule gets its inputs
back in their original layouts (`keep_original`), so ConvertLayout is correct for every op and
the rules only decide how far a new layout travels.

Rules here: conv2d (and its conversion to the desired layouts), every elementwise op (layout
follows its input), every broadcast op (lower-rank operands are expanded and transformed along),
bias_add / prelu / batch_norm / layer_norm / lrn / softmax / reductions / pad / split /
concatenate (their axis attributes are remapped), transpose (its axes absorb the change), the
pools (their layout attribute follows the data) and AlterOpLayout's x86 ops (the channel-blocked
convolutions, dense on a packed weight). Blocked layouts (NCHW8c) travel only where a rule can
keep the block: an elementwise op, a broadcast whose operands divide by the block, a pool, a
concatenation along whole blocks, a reduction or pad that leaves the blocked axis alone. A rule
with `takes_tuples = True` gets, for a tuple argument, the list of its fields' LayoutInfos;
other rules see tuples in their original layouts.
"""
import dataclasses
from typing import Callable, List, NamedTuple, Optional

from ..ir.dims import is_static
from ..ir.expr import Tuple, TupleGetItem
from ..ir.types import TupleType
from .layout import Layout, layout_transform
from .pattern import OpPattern
from .registry import list_ops, register_op_attr
from .nn.layout_view import block_of
from .nn.winograd import contrib_conv2d_winograd_weight_transform
from .transform import expand_dims


class LayoutInfo(NamedTuple):
    orig: Optional[str] = None
    cur: Optional[str] = None

    @property
    def changed(self) -> bool:
        return self.orig is not None and self.cur is not None and self.orig != self.cur


UNKNOWN = LayoutInfo()


class Decision(NamedTuple):
    attrs: object
    inputs: List[Optional[Callable]]
    outputs: object          # a LayoutInfo, or a list of them for a tuple result


class Transform(NamedTuple):
    """An input adapter: layout_transform from src to dst. The rewriter shares one transform
    of a value per (src, dst) among all its consumers."""
    src: str
    dst: str

    def __call__(self, expr):
        return layout_transform(expr, self.src, self.dst)


def transform_to(src: str, dst: str):
    """An input adapter from src to dst (nothing when they agree)."""
    if src == dst:
        return None
    return Transform(src, dst)


class PerField(NamedTuple):
    """An input adapter for a tuple argument: adapter k applied to field k. A tuple literal is
    rebuilt from its fields, any other tuple through projections; `apply(field, adapter)` lets
    the rewriter share the fields' transforms."""
    adapters: tuple

    def __call__(self, expr, apply=None):
        apply = apply or (lambda field, adapt: adapt(field))
        fields = [expr.fields[k] if isinstance(expr, Tuple) else TupleGetItem(expr, k)
                  for k in range(len(self.adapters))]
        return Tuple([apply(f, a) if a is not None else f for a, f in zip(self.adapters, fields)])


def per_field(adapters):
    """The PerField adapter of `adapters` (nothing when every adapter is None)."""
    adapters = tuple(adapters)
    return None if all(a is None for a in adapters) else PerField(adapters)


def keep_original(call, new_attrs, infos) -> Decision:
    """The default: every changed input goes back to its original layout; the result is in the
    original layout too."""
    inputs = [None if isinstance(i, list) or not i.changed else transform_to(i.cur, i.orig) for i in infos]
    t = call.checked_type
    out = [UNKNOWN] * len(t.fields) if isinstance(t, TupleType) else UNKNOWN
    return Decision(new_attrs, inputs, out)


def _remap_axis(axis: int, info: LayoutInfo) -> int:
    """Where the primal axis at `axis` of the original layout sits in the current one."""
    ndim = len(info.orig)
    return Layout(info.cur).index_of(info.orig[axis % ndim])


def is_blocked(layout: str, letter: str) -> bool:
    """Whether primal axis `letter` is split into blocks in `layout` ("C" in "NCHW8c")."""
    return Layout(layout).index_of(letter.lower()) >= 0


def fits(shape, orig: str, cur: str) -> bool:
    """Whether a tensor of `shape` in layout `orig` (lower rank: aligned to its right end, as
    broadcasting does) can be transformed to `cur`: every blocked axis is static and divides by
    its block (other axes may be symbolic)."""
    dst = Layout(cur)
    letters = orig[len(orig) - len(shape):]
    return all(dst.block(letter) == 1 or (is_static(d) and int(d) % dst.block(letter) == 0)
               for letter, d in zip(letters, shape))


def _shape(expr) -> tuple:
    return tuple(expr.checked_type.shape)


def _with(attrs, **changes):
    return dataclasses.replace(attrs, **changes)


# --- conv2d ----------------------------------------------------------------------------------------
def conv2d_layout(call, new_attrs, infos) -> Decision:
    """The data and weight are brought to the (possibly converted) data/kernel layouts; the
    output is in out_layout (default: data layout), originally the original call's."""
    old = call.attrs
    data_src = infos[0].cur if infos[0].cur is not None else old.data_layout
    weight_src = infos[1].cur if infos[1].cur is not None else old.kernel_layout
    out = LayoutInfo(old.out_layout or old.data_layout, new_attrs.out_layout or new_attrs.data_layout)
    return Decision(new_attrs, [transform_to(data_src, new_attrs.data_layout),
                                transform_to(weight_src, new_attrs.kernel_layout)], out)


def convert_conv2d(call, desired_layouts):
    """New attrs for a conv2d converted to desired_layouts = [data_layout, kernel_layout];
    kernel "default" is OIHW for NCHW and HWIO for NHWC (HWOI when depthwise), as Relay."""
    data_layout, kernel_layout = (list(desired_layouts) + ["default"])[:2]
    attrs = call.attrs
    if kernel_layout == "default":
        if data_layout == "NCHW":
            kernel_layout = "OIHW"
        elif data_layout == "NHWC":
            weight = call.args[1].checked_type.shape
            channels = call.args[0].checked_type.shape[attrs.data_layout.index("C")]
            depthwise = attrs.groups > 1 and attrs.groups == channels and \
                weight[attrs.kernel_layout.index("I")] == 1
            kernel_layout = "HWOI" if depthwise else "HWIO"
        else:
            kernel_layout = attrs.kernel_layout
    return _with(attrs, data_layout=data_layout, kernel_layout=kernel_layout, out_layout="")


# --- layout-agnostic ops ---------------------------------------------------------------------------
def elemwise_layout(call, new_attrs, infos) -> Decision:
    """One input, same layout out."""
    return Decision(new_attrs, [None], infos[0])


def broadcast_layout(call, new_attrs, infos) -> Decision:
    """Operands follow the first changed full-rank one: same-rank operands are transformed,
    lower-rank ones are first expanded to full rank (they broadcast from the right), scalars
    are left alone."""
    ranks = [a.checked_type.ndim for a in call.args]
    lead = next((k for k, i in enumerate(infos) if i.changed and ranks[k] == max(ranks)), None)
    if lead is None:
        return keep_original(call, new_attrs, infos)
    target = infos[lead]
    inputs = []
    for k, (info, rank) in enumerate(zip(infos, ranks)):
        shape = _shape(call.args[k])
        if k == lead or rank == 0 or info.cur == target.cur:
            inputs.append(None)
        elif rank == len(target.orig) and (not info.changed or info.orig == target.orig) and \
                fits(shape, target.orig, target.cur):
            inputs.append(transform_to(info.cur or target.orig, target.cur))
        elif rank < len(target.orig) and not info.changed and fits(shape, target.orig, target.cur):
            missing = len(target.orig) - rank
            inputs.append(lambda e, m=missing: layout_transform(expand_dims(e, 0, m), target.orig,
                                                                target.cur))
        else:
            return keep_original(call, new_attrs, infos)
    return Decision(new_attrs, inputs, target)


def axis_layout(call, new_attrs, infos) -> Decision:
    """Ops with one data layout and an `axis` attribute (bias_add, prelu, softmax): the axis
    is moved to where its letter went."""
    info = infos[0]
    if not info.changed or is_blocked(info.cur, info.orig[new_attrs.axis % len(info.orig)]):
        return keep_original(call, new_attrs, infos)
    return Decision(_with(new_attrs, axis=_remap_axis(new_attrs.axis, info)),
                    [None] * len(infos), info)


def batch_norm_layout(call, new_attrs, infos) -> Decision:
    info = infos[0]
    if not info.changed or any(i.changed for i in infos[1:]) or \
            is_blocked(info.cur, info.orig[new_attrs.axis % len(info.orig)]):
        return keep_original(call, new_attrs, infos)
    return Decision(_with(new_attrs, axis=_remap_axis(new_attrs.axis, info)), [None] * len(infos),
                    [info, UNKNOWN, UNKNOWN])


def reduce_layout(call, new_attrs, infos) -> Decision:
    """Reduced axes are renamed by their letters; without keepdims the result's layouts are the
    input's with those letters dropped. Reducing a blocked axis goes back to the original layout."""
    info = infos[0]
    if not info.changed:
        return keep_original(call, new_attrs, infos)
    ndim = len(info.orig)
    axes = tuple(range(ndim)) if new_attrs.axis is None else tuple(a % ndim for a in new_attrs.axis)
    letters = {info.orig[a] for a in axes}
    if any(is_blocked(info.cur, c) for c in letters) or (new_attrs.exclude and Layout(info.cur).ndim != ndim):
        return keep_original(call, new_attrs, infos)
    cur = Layout(info.cur)
    new_axes = None if new_attrs.axis is None else tuple(sorted(cur.index_of(c) for c in letters))
    kept = letters if new_attrs.exclude else set(info.orig) - letters
    if new_attrs.keepdims:
        out = info
    else:
        orig = "".join(c for c in info.orig if c in kept)
        cur_kept = "".join(f"{size}{a}" if size else a for a, size in cur.axes if a.upper() in kept)
        out = LayoutInfo(orig or None, cur_kept or None)
    return Decision(_with(new_attrs, axis=new_axes), [None], out)


def pad_layout(call, new_attrs, infos) -> Decision:
    """Pad widths follow their letters; a sub-axis is not padded (padding a blocked axis goes
    back to the original layout)."""
    info = infos[0]
    if not info.changed:
        return keep_original(call, new_attrs, infos)
    widths = new_attrs.pad_width
    by_letter = {c: widths[k] for k, c in enumerate(info.orig)}
    cur = Layout(info.cur)
    if any(is_blocked(info.cur, c) and tuple(by_letter[c]) != (0, 0) for c in info.orig):
        return keep_original(call, new_attrs, infos)
    new_widths = tuple(by_letter[a] if a.isupper() else (0, 0) for a, _ in cur.axes)
    return Decision(_with(new_attrs, pad_width=new_widths), [None, None], info)


def _permuted(info: LayoutInfo) -> bool:
    """A changed layout that is a plain permutation of the original letters (no blocks)."""
    return info.changed and sorted(info.orig) == sorted(info.cur) and info.cur.isupper()


def concatenate_layout(call, new_attrs, infos) -> Decision:
    """The fields follow the first changed one (fields in their original layout are
    transformed to it) and the axis moves to where its letter went, when every field can be
    brought to that layout: a permutation, or a blocked layout whose blocked axes divide by
    the block in every field (NCHW8c inputs of 8k channels concatenate along C/8). Otherwise
    (or when fields changed from different original layouts) every field goes back to its
    original layout."""
    fields = infos[0]
    lead = next((i for i in fields if i.changed), None)
    shapes = [tuple(t.shape) for t in call.args[0].checked_type.fields]
    if lead is None or any(i.changed and i.orig != lead.orig for i in fields) or not all(
            len(shape) == len(lead.orig) and (_permuted(lead) or fits(shape, lead.orig, lead.cur))
            for shape in shapes):
        back = [transform_to(i.cur, i.orig) if i.changed else None for i in fields]
        return Decision(new_attrs, [per_field(back)], UNKNOWN)
    adapters = [transform_to(i.cur if i.changed else lead.orig, lead.cur) for i in fields]
    return Decision(_with(new_attrs, axis=_remap_axis(new_attrs.axis, lead)), [per_field(adapters)], lead)


concatenate_layout.takes_tuples = True     # infos[0] is the list of the fields' LayoutInfos


def split_layout(call, new_attrs, infos) -> Decision:
    """Split along the remapped axis; every part keeps the data's layout."""
    info = infos[0]
    if not _permuted(info):
        return keep_original(call, new_attrs, infos)
    parts = len(call.checked_type.fields)
    return Decision(_with(new_attrs, axis=_remap_axis(new_attrs.axis, info)), [None], [info] * parts)


def transpose_layout(call, new_attrs, infos) -> Decision:
    """A transpose absorbs the layout change: its axes are rewritten so that, applied to the
    data in its new layout, it gives exactly the original output."""
    info = infos[0]
    if not _permuted(info):
        return keep_original(call, new_attrs, infos)
    ndim = len(info.orig)
    axes = reversed(range(ndim)) if new_attrs.axes is None else (a % ndim for a in new_attrs.axes)
    return Decision(_with(new_attrs, axes=tuple(info.cur.index(info.orig[a]) for a in axes)), [None], UNKNOWN)


def pool_layout(call, new_attrs, infos) -> Decision:
    """A pool follows its data into NHWC / NCHW / NCHW{b}c (the layouts pools support)."""
    info = infos[0]
    supported = info.cur in ("NCHW", "NHWC") or (info.orig == "NCHW" and block_of(info.cur))
    if not info.changed or info.orig != new_attrs.layout or not supported:
        return keep_original(call, new_attrs, infos)
    return Decision(_with(new_attrs, layout=info.cur, out_layout=""), [None], info)


def dense_pack_layout(call, new_attrs, infos) -> Decision:
    """nn.contrib_dense_pack: the data in its original layout, the (units, K) weight packed to
    weight_layout (NC{bn}n); the result is untouched."""
    data, weight = infos
    weight_src = weight.cur if weight.cur is not None else "NC"
    return Decision(new_attrs, [transform_to(data.cur, data.orig) if data.changed else None,
                                transform_to(weight_src, new_attrs.weight_layout)], UNKNOWN)


def winograd_layout(call, new_attrs, infos) -> Decision:
    """nn.contrib_conv2d_winograd_without_weight_transform: the data in the attrs' data_layout
    (NCHW, or NCHW{ib}c when AlterOpLayout blocked it), the result in its out_layout. When
    AlterOpLayout made it from an nn.conv2d (`call` is still the conv2d), the OIHW weight goes
    through nn.contrib_conv2d_winograd_weight_transform, and for a blocked result then through a
    layout_transform HWOI -> HWOI{ob}o (packed along its output channels); FoldConstant folds
    both for a constant weight. A call that was already Winograd keeps its transformed weight."""
    data, weight = infos
    if call.op.name == "nn.conv2d":
        weight_src = weight.cur if weight.cur is not None else call.attrs.kernel_layout
        to_oihw = transform_to(weight_src, "OIHW")
        out_block = block_of(new_attrs.out_layout)

        def transformed(w):
            u = contrib_conv2d_winograd_weight_transform(to_oihw(w) if to_oihw else w, new_attrs.tile_size)
            return layout_transform(u, "HWOI", f"HWOI{out_block}o") if out_block else u
        adapt_weight = transformed
        data_src = data.cur if data.cur is not None else "NCHW"
        return Decision(new_attrs, [transform_to(data_src, new_attrs.data_layout), adapt_weight],
                        LayoutInfo("NCHW", new_attrs.out_layout or new_attrs.data_layout))
    adapt_weight = transform_to(weight.cur, weight.orig) if weight.changed else None
    return Decision(new_attrs, [transform_to(data.cur, data.orig) if data.changed else None, adapt_weight],
                    UNKNOWN)


_SPECIFIC = {
    "nn.conv2d": conv2d_layout,
    "nn.contrib_conv2d_winograd_without_weight_transform": winograd_layout,
    "nn.contrib_conv2d_NCHWc": conv2d_layout,
    "nn.contrib_depthwise_conv2d_NCHWc": conv2d_layout,
    "nn.contrib_dense_pack": dense_pack_layout,
    "nn.bias_add": axis_layout, "nn.prelu": axis_layout,
    "nn.softmax": axis_layout, "nn.log_softmax": axis_layout, "nn.fast_softmax": axis_layout,
    "nn.layer_norm": axis_layout, "nn.lrn": axis_layout,
    "concatenate": concatenate_layout, "split": split_layout, "transpose": transpose_layout,
    "nn.batch_norm": batch_norm_layout,
    "nn.pad": pad_layout,
}
for _name in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "all", "any"):
    _SPECIFIC[_name] = reduce_layout
for _name in ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d",
              "nn.adaptive_avg_pool2d"):
    _SPECIFIC[_name] = pool_layout

for _op in list_ops():
    if _op.name in _SPECIFIC:
        register_op_attr(_op.name, "FInferCorrectLayout", _SPECIFIC[_op.name])
    elif _op.pattern == OpPattern.ELEMWISE and _op.num_inputs == 1:
        register_op_attr(_op.name, "FInferCorrectLayout", elemwise_layout)
    elif _op.pattern == OpPattern.BROADCAST and _op.attrs_type is None:
        register_op_attr(_op.name, "FInferCorrectLayout", broadcast_layout)
register_op_attr("nn.conv2d", "FTVMConvertOpLayout", convert_conv2d)

__all__ = ["LayoutInfo", "Decision", "UNKNOWN", "Transform", "PerField", "keep_original", "transform_to",
           "per_field"]
