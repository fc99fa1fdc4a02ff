"""ONNX sequence and optional ops as the Prelude's List and Option (see ../adt.py).

SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceErase, SequenceAt, SequenceLength,
SplitToSequence, ConcatFromSequence, SequenceMap, Optional, OptionalHasElement,
OptionalGetElement.

Each op works element by element at import time when it can (the sequence's elements are known
and positions are constants): the result is then the element expressions themselves, typed
exactly. Otherwise it works on the List value at run time with the Prelude's functions (`@nth`,
`@length`, `@foldl`, `@concat`) and std/sequence.rly's `@list_insert` / `@list_erase`, which the
debug interpreter and the VM run. Positions follow ONNX (and onnxruntime): a negative position
counts from the back (`p + length`), SequenceInsert's accepted range is [-n, n], the others'
[-n, n - 1]; a constant position outside it is reported at import.
"""
import numpy as np

from .... import op as _op
from ....ir.adt import Clause, Match, PatternConstructor, PatternVar, PatternWildcard
from ....ir.expr import Call, Function, Let, Tuple, TupleGetItem, var
from ....ir.types import Any, FuncType, TensorType, TupleType
from ..adt import (StaticOptional, StaticSequence, coerce, join_types, make_optional, make_sequence,
                   onnx_value_dtype, onnx_value_type, placeholder_elem, sequence_dtype, sequence_elem_type,
                   static_of)
from ..common import const, onnx_dtype
from ._registry import converter
from .runtime_shapes import needs_value, split_parts, static_length

_I32 = TensorType((), "int32")


# --- helpers --------------------------------------------------------------------------------------
def _constant_position(ctx, expr):
    """The position input's value as an int when it is constant, else None; must hold one value."""
    value = ctx.maybe_value(expr)
    if value is None:
        return None
    value = np.asarray(value)
    if value.size != 1 or value.dtype.kind not in "iu":
        raise ctx.invalid(f"the position must be one integer, got a {value.dtype} tensor of shape {value.shape}")
    return int(value.reshape(-1)[0])


def _check_position(ctx, pos: int, length: int, inclusive_end: bool = False) -> int:
    """`pos` made non-negative after checking it against ONNX's range for a sequence of `length`."""
    high = length if inclusive_end else length - 1
    if not -length <= pos <= high:
        raise ctx.invalid(f"position {pos} is out of range for a sequence of {length} element(s) (valid: "
                          f"[{-length}, {high}])")
    return pos + length if pos < 0 else pos


def _call(ctx, name, args, ty):
    """A typed call of a Prelude / sequence.rly function."""
    return ctx.importer.typed(Call(ctx.importer.adt.function(name), list(args)), ty)


def _runtime_length(ctx, seq):
    return _call(ctx, "length", [seq], _I32)


def _runtime_position(ctx, seq, pos):
    """An int32 scalar: `pos` (a run-time tensor) with a negative value counted from the back."""
    p = _op.cast(_op.reshape(pos, ()), "int32")
    return _op.where(_op.less(p, const(np.int32(0))), _op.add(p, _runtime_length(ctx, seq)), p)


def _sequence_at_runtime(ctx, seq, index):
    elem = sequence_elem_type(ctx.importer, seq, ctx.where())
    return _call(ctx, "nth", [seq, index], elem)


def _static_sequence(ctx, seq):
    static = static_of(ctx.importer, seq)
    return static if isinstance(static, StaticSequence) else None


def _as_list(ctx, seq, elem_type):
    """`seq` as a List value whose element type also covers `elem_type`."""
    joined = join_types(sequence_elem_type(ctx.importer, seq, ctx.where()), elem_type, ctx.where())
    return coerce(ctx.importer, seq, ctx.importer.adt.list_of(joined)), joined


# --- sequences --------------------------------------------------------------------------------------
@converter("SequenceConstruct", min_version=11)
def sequence_construct(ctx, inputs):
    return make_sequence(ctx.importer, list(inputs), what=ctx.where())


@converter("SequenceEmpty", min_version=11)
def sequence_empty(ctx, inputs):
    dtype = onnx_dtype(ctx.attrs.get("dtype", 1), f"{ctx.where()}: attribute 'dtype'")
    return make_sequence(ctx.importer, [], dtype, what=ctx.where())


@converter("SequenceLength", min_version=11)
def sequence_length(ctx, inputs):
    static = _static_sequence(ctx, inputs[0])
    if static is not None:
        return const(np.int64(len(static.items)))
    return _op.cast(_runtime_length(ctx, inputs[0]), "int64")


@converter("SequenceAt", min_version=11)
def sequence_at(ctx, inputs):
    seq, pos = inputs
    static, value = _static_sequence(ctx, seq), _constant_position(ctx, pos)
    if static is not None and value is not None:
        return static.items[_check_position(ctx, value, len(static.items))]
    return _sequence_at_runtime(ctx, seq, _runtime_position(ctx, seq, pos))


@converter("SequenceInsert", min_version=11)
def sequence_insert(ctx, inputs):
    seq, tensor = inputs[0], inputs[1]
    pos = inputs[2] if len(inputs) > 2 else None
    static = _static_sequence(ctx, seq)
    value = None if pos is None else _constant_position(ctx, pos)
    if static is not None and (pos is None or value is not None):
        items = list(static.items)
        where = len(items) if pos is None else _check_position(ctx, value, len(items), inclusive_end=True)
        items.insert(where, tensor)
        _check_dtype(ctx, static.dtype, tensor)
        return make_sequence(ctx.importer, items, static.dtype, static.elem_type, what=ctx.where())
    _check_dtype(ctx, sequence_dtype(ctx.importer, seq, ctx.where()), tensor)
    lst, elem = _as_list(ctx, seq, ctx.type(tensor))
    list_t = ctx.importer.adt.list_of(elem)
    if pos is None:  # append: xs ++ [tensor]
        single = make_sequence(ctx.importer, [tensor], elem_type=elem, what=ctx.where())
        return _call(ctx, "concat", [lst, single], list_t)
    return _call(ctx, "list_insert", [lst, _runtime_position(ctx, lst, pos), tensor], list_t)


def _check_dtype(ctx, dtype, tensor):
    if ctx.dtype(tensor) != dtype:
        raise ctx.invalid(f"the tensor to insert is {ctx.dtype(tensor)}, but the sequence holds {dtype} tensors")


@converter("SequenceErase", min_version=11)
def sequence_erase(ctx, inputs):
    seq = inputs[0]
    pos = inputs[1] if len(inputs) > 1 else None
    static = _static_sequence(ctx, seq)
    value = -1 if pos is None else _constant_position(ctx, pos)
    if static is not None and value is not None:
        items = list(static.items)
        del items[_check_position(ctx, value, len(items))]
        return make_sequence(ctx.importer, items, static.dtype, static.elem_type, what=ctx.where())
    lst, elem = _as_list(ctx, seq, None)
    index = _op.subtract(_runtime_length(ctx, lst), const(np.int32(1))) if pos is None else \
        _runtime_position(ctx, lst, pos)
    return _call(ctx, "list_erase", [lst, index], ctx.importer.adt.list_of(elem))


@converter("SplitToSequence", min_version=11)
def split_to_sequence(ctx, inputs):
    """Parts along `axis`: of size 1 without `split` (squeezed when keepdims=0), of size `split`
    (the last one smaller) for a scalar, of the given sizes for a 1-D `split` (read at run time
    when it is not a constant: runtime_shapes.split_parts)."""
    x = inputs[0]
    split = inputs[1] if len(inputs) > 1 else None
    shape = ctx.static_shape(x, "input")
    nd = len(shape)
    axis = int(ctx.attrs.get("axis", 0))
    if not -nd <= axis < nd:
        raise ctx.invalid(f"axis={axis} is out of range for an input of rank {nd}")
    axis %= nd
    keepdims = int(ctx.attrs.get("keepdims", 1))
    dim = shape[axis]
    if split is not None and ctx.maybe_value(split) is None:   # sizes known at run time
        if len(ctx.shape(split)) != 1:
            raise needs_value(ctx, "a scalar split known only at run time decides the number of parts",
                              "give split as a constant, or as a 1-D tensor of part sizes")
        n_parts = static_length(ctx, split, "split")
        return make_sequence(ctx.importer, split_parts(ctx, x, split, axis, n_parts), ctx.dtype(x), what=ctx.where())
    if split is None:
        sizes = [1] * dim
    else:
        value = np.asarray(ctx.value(split, "split"))
        if value.dtype.kind not in "iu":
            raise ctx.invalid(f"split must hold integers, got {value.dtype}")
        if value.ndim == 0:
            chunk = int(value)
            if chunk <= 0:
                raise ctx.invalid(f"split={chunk} must be positive")
            sizes = [min(chunk, dim - start) for start in range(0, dim, chunk)]
        else:
            sizes = [int(v) for v in value.reshape(-1)]
            if any(s < 0 for s in sizes) or sum(sizes) != dim:
                raise ctx.invalid(f"split sizes {sizes} must be non-negative and add up to {dim}, the length of "
                                  f"axis {axis}")
    items, start = [], 0
    for size in sizes:
        part = _op.strided_slice(x, [start], [start + size], axes=[axis])
        if split is None and not keepdims:
            part = _op.squeeze(part, [axis])
        items.append(part)
        start += size
    return make_sequence(ctx.importer, items, ctx.dtype(x), what=ctx.where())


@converter("ConcatFromSequence", min_version=11)
def concat_from_sequence(ctx, inputs):
    """The elements joined along `axis` (new_axis=1: stacked along a new axis `axis`)."""
    seq = inputs[0]
    new_axis = int(ctx.attrs.get("new_axis", 0))
    axis = int(ctx.attrs.get("axis"))
    elem = sequence_elem_type(ctx.importer, seq, ctx.where())
    static = _static_sequence(ctx, seq)
    if elem is None or (static is not None and not static.items):
        raise ctx.invalid("the sequence is empty; ConcatFromSequence needs at least one tensor")
    rank = elem.ndim + (1 if new_axis else 0)
    if not -rank <= axis < rank:
        raise ctx.invalid(f"axis={axis} is out of range for elements of rank {elem.ndim} (new_axis={new_axis})")
    axis %= rank
    if static is not None:
        return (_op.stack if new_axis else _op.concatenate)(list(static.items), axis)
    acc_type = TensorType([Any() if i == axis else d for i, d in
                           enumerate(elem.shape[:axis] + ((1,) if new_axis else ()) + elem.shape[axis:])], elem.dtype)
    acc, item = var("acc", acc_type), var("item", elem)
    grow = Function([acc, item], _op.concatenate([acc, _op.expand_dims(item, axis) if new_axis else item], axis),
                    ret_type=acc_type)
    first = _call(ctx, "hd", [seq], elem)
    first = _op.expand_dims(first, axis) if new_axis else first
    rest = _call(ctx, "tl", [seq], ctx.importer.adt.list_of(elem))
    return _call(ctx, "foldl", [grow, coerce(ctx.importer, first, acc_type), rest], acc_type)


@converter("SequenceMap", min_version=17)
def sequence_map(ctx, inputs):
    """The body applied to the i-th element of every sequence input (tensor inputs are passed
    whole); each body output collects into an output sequence."""
    body = ctx.attrs.get("body")
    importer = ctx.importer
    is_seq = [importer.adt.is_list(ctx.type(x)) if _static_sequence(ctx, x) is None else True for x in inputs]
    if not is_seq[0]:
        raise ctx.invalid("the first input must be a sequence")
    statics = [_static_sequence(ctx, x) for x, s in zip(inputs, is_seq) if s]
    if all(s is not None for s in statics):
        lengths = {len(s.items) for s in statics}
        if len(lengths) != 1:
            raise ctx.invalid(f"the input sequences have different lengths {sorted(lengths)}")
        outs = [[] for _ in body.output]
        for i in range(lengths.pop()):
            args, k = [], 0
            for x, s in zip(inputs, is_seq):
                args.append(statics[k].items[i] if s else x)
                k += s
            for collected, out in zip(outs, importer.convert_subgraph(body, ctx.values, ctx.opset, args)):
                collected.append(out)
        return [make_sequence(importer, items, onnx_value_dtype(body.output[j].type), what=ctx.where())
                for j, items in enumerate(outs)]
    return _sequence_map_runtime(ctx, body, inputs, is_seq)


def _sequence_map_runtime(ctx, body, inputs, is_seq):
    """A let-bound recursive function walking the sequences together (their lengths must agree)."""
    importer, kit = ctx.importer, ctx.importer.adt
    lists = [coerce(importer, x, kit.list_of(sequence_elem_type(importer, x, ctx.where()))) if s else x
             for x, s in zip(inputs, is_seq)]
    list_types = [ctx.type(x) for x, s in zip(lists, is_seq) if s]
    params = [var(f"xs{i}", t) for i, t in enumerate(list_types)]
    elems = [var(f"x{i}", t.args[0]) for i, t in enumerate(list_types)]
    rests = [var(f"rest{i}", t) for i, t in enumerate(list_types)]
    args, k = [], 0
    for x, s in zip(inputs, is_seq):
        args.append(elems[k] if s else x)
        k += s
    outs = importer.convert_subgraph(body, ctx.values, ctx.opset, args)
    out_types = [ctx.type(o) for o in outs]
    ret_type = TupleType([kit.list_of(t) for t in out_types])
    loop = var("sequence_map", FuncType([p.type_annotation for p in params], ret_type))
    recur = var("mapped_rest", ret_type)
    step = Let(recur, Call(loop, rests),
               Tuple([Call(kit.cons, [o, TupleGetItem(recur, j)], type_args=[t])
                      for j, (o, t) in enumerate(zip(outs, out_types))]))
    for e, r, p in reversed(list(zip(elems[1:], rests[1:], params[1:]))):
        step = Let(e, Call(importer.adt.function("hd"), [p]), Let(r, Call(importer.adt.function("tl"), [p]), step))
    done = Tuple([Call(kit.nil, [], type_args=[t]) for t in out_types])
    walk = Match(params[0], [Clause(PatternConstructor(kit.cons, [PatternVar(elems[0]), PatternVar(rests[0])]), step),
                             Clause(PatternConstructor(kit.nil, []), done)])
    result = importer.typed(Let(loop, Function(params, walk, ret_type=ret_type),
                                Call(loop, [x for x, s in zip(lists, is_seq) if s])), ret_type)
    return [TupleGetItem(result, j) for j in range(len(outs))]


# --- optionals --------------------------------------------------------------------------------------
@converter("Optional", min_version=15)
def optional(ctx, inputs):
    if inputs and inputs[0] is not None:
        item = inputs[0]
        static = _static_sequence(ctx, item)
        inner = ctx.type(item) if static is None else ctx.importer.adt.list_of(
            static.elem_type or placeholder_elem(static.dtype))
        return make_optional(ctx.importer, item, inner)
    type_proto = ctx.attrs.get("type")
    if type_proto is None:
        raise ctx.invalid("an Optional without an input needs the 'type' attribute")
    inner = onnx_value_type(lambda: ctx.importer.adt, type_proto, f"{ctx.where()}: attribute 'type'")
    if inner is None:
        raise ctx.fail("the 'type' attribute declares no element shape; Relay needs the rank of an empty optional")
    return make_optional(ctx.importer, None, inner)


def _static_optional(ctx, expr):
    static = static_of(ctx.importer, expr)
    return static if isinstance(static, StaticOptional) else None


@converter("OptionalHasElement", min_version=15)
def optional_has_element(ctx, inputs):
    """False for a missing input; True for a tensor or sequence (opset 18 accepts those); an
    Option's tag at run time."""
    if not inputs or inputs[0] is None:
        return const(np.bool_(False))
    x = inputs[0]
    static = _static_optional(ctx, x)
    if static is not None:
        return const(np.bool_(static.item is not None))
    kit = ctx.importer.adt
    if not kit.is_option(ctx.type(x)):
        return const(np.bool_(True))
    test = Match(x, [Clause(PatternConstructor(kit.some, [PatternWildcard()]), const(np.bool_(True))),
                     Clause(PatternWildcard(), const(np.bool_(False)))])
    return ctx.importer.typed(test, TensorType((), "bool"))


@converter("OptionalGetElement", min_version=15)
def optional_get_element(ctx, inputs):
    """The value of an Option (an empty one stops the program: at import when that is known, at run
    time otherwise); a tensor or sequence is returned as it is."""
    x = inputs[0]
    static = _static_optional(ctx, x)
    if static is not None:
        if static.item is None:
            raise ctx.invalid("the optional input is empty (it was built without a value)")
        return static.item
    kit = ctx.importer.adt
    ty = ctx.type(x)
    if not kit.is_option(ty):
        return x
    value = var("value", ty.args[0])
    return ctx.importer.typed(Match(x, [Clause(PatternConstructor(kit.some, [PatternVar(value)]), value)],
                                    complete=False), ty.args[0])
