"""ONNX If and Loop as Relay control flow (as TVM's ONNX frontend builds them).

If: a condition that folds to a constant selects its branch at import time (the graph executor
can run the result); otherwise a Relay `If` whose branches are converted subgraphs. The branches'
outputs are joined to one type per output (dims that differ become `?`).

Loop: a let-bound recursive function over (iteration number, condition, loop-carried values,
scan accumulators), called with the initial values: while `iteration < M` and the condition
hold, it runs the body and calls itself with the body's outputs; scan outputs are concatenated
along a new first axis. The carried values' types are found by converting the body until they
settle (a value that grows in the body gets `?` dims; a sequence that starts empty gets its
element type from what the body inserts). Both need the debug interpreter or the VM unless the
If condition is constant; the graph and AOT executors refuse them with an error naming the VM.
Subgraphs read values of the enclosing graphs by name (Relay closures capture them).
"""
import numpy as np

from .... import op as _op
from ....ir.expr import Call, Function, If, Let, Tuple, TupleGetItem, var
from ....ir.types import Any, FuncType, TensorType, TupleType, type_to_str
from ..adt import UnknownSequence, coerce, has_unknown, join_types, remember, settle, value_type
from ..common import const
from ._registry import converter

MAX_TYPE_ROUNDS = 6  # each round can only widen a dim to ? or fill in an element type


def _scalar_condition(ctx, cond, what):
    if ctx.dtype(cond) != "bool":
        raise ctx.invalid(f"{what} must be a bool tensor, got {ctx.dtype(cond)}")
    shape = ctx.shape(cond)
    if len(shape) > 1 or (shape and not (isinstance(shape[0], int) and shape[0] == 1)):
        raise ctx.invalid(f"{what} must hold one value, got shape {shape}")
    return _op.reshape(cond, ()) if shape else cond


def _tuple_or_single(fields):
    return fields[0] if len(fields) == 1 else Tuple(fields)


def _outputs_of(ctx, expr, count):
    return [expr] if count == 1 else [TupleGetItem(expr, i) for i in range(count)]


@converter("If")
def if_(ctx, inputs):
    importer = ctx.importer
    then_graph, else_graph = ctx.attrs.get("then_branch"), ctx.attrs.get("else_branch")
    value = ctx.maybe_value(inputs[0])
    if value is not None:
        if np.asarray(value).size != 1:
            raise ctx.invalid(f"the condition must hold one value, got shape {np.shape(value)}")
        chosen = then_graph if bool(np.asarray(value).reshape(-1)[0]) else else_graph
        return importer.convert_subgraph(chosen, ctx.values, ctx.opset, [])
    cond = _scalar_condition(ctx, inputs[0], "the condition")
    then_outs = importer.convert_subgraph(then_graph, ctx.values, ctx.opset, [])
    else_outs = importer.convert_subgraph(else_graph, ctx.values, ctx.opset, [])
    count = len(ctx.node.output)
    if len(then_outs) != count or len(else_outs) != count:
        raise ctx.invalid(f"the branches have {len(then_outs)} and {len(else_outs)} outputs, the node {count}")
    types = [settle(join_types(value_type(importer, a), value_type(importer, b), ctx.where()))
             for a, b in zip(then_outs, else_outs)]
    then_body = _tuple_or_single([coerce(importer, o, t) for o, t in zip(then_outs, types)])
    else_body = _tuple_or_single([coerce(importer, o, t) for o, t in zip(else_outs, types)])
    result = importer.typed(If(cond, then_body, else_body), types[0] if count == 1 else TupleType(types))
    return _outputs_of(ctx, result, count)


@converter("Loop")
def loop(ctx, inputs):
    importer = ctx.importer
    body = ctx.attrs.get("body")
    trip_count = inputs[0] if inputs and inputs[0] is not None else None
    cond = inputs[1] if len(inputs) > 1 and inputs[1] is not None else None
    initial = list(inputs[2:])
    n_carried = len(initial)
    n_scan = len(body.output) - 1 - n_carried
    if n_scan < 0 or len(body.input) != 2 + n_carried:
        raise ctx.invalid(f"the body has {len(body.input)} inputs and {len(body.output)} outputs for "
                          f"{n_carried} loop-carried value(s); it needs {2 + n_carried} inputs and at least "
                          f"{1 + n_carried} outputs")
    if trip_count is None and cond is None:
        raise ctx.invalid("neither a trip count nor a condition is given, so the loop never ends")
    if trip_count is not None:
        trip_count = _op.reshape(trip_count, ()) if ctx.shape(trip_count) else trip_count
        if ctx.dtype(trip_count) != "int64":
            raise ctx.invalid(f"the trip count must be int64, got {ctx.dtype(trip_count)}")
    first_cond = _scalar_condition(ctx, cond, "the condition") if cond is not None else const(np.bool_(True))

    iteration, cond_in, carried, outs = _settle_body(ctx, body, initial)
    types = [ctx.type(v) for v in carried]
    scans = outs[1 + n_carried:]
    acc_types, acc_inits = [], []
    for k, scan in enumerate(scans):
        ty = ctx.type(scan)
        if not isinstance(ty, TensorType):
            raise ctx.fail(f"scan output {k} has type {type_to_str(ty)}; scan outputs must be tensors")
        acc_types.append(TensorType((Any(),) + tuple(Any() if ty.is_dynamic else d for d in ty.shape), ty.dtype))
        # an element dim known only at run time starts as 0 (the first iteration replaces the accumulator)
        acc_inits.append(const(np.zeros((0,) + tuple(0 if ty.is_dynamic else int(d) for d in ty.shape), ty.dtype)))
    accs = [var(f"scan{k}", t) for k, t in enumerate(acc_types)]

    keep_going = cond_in if cond is not None else None
    if trip_count is not None:
        below = _op.less(iteration, trip_count)
        keep_going = below if keep_going is None else _op.logical_and(below, keep_going)
    next_cond = _scalar_condition(ctx, outs[0], "the body's condition output") if cond is not None \
        else const(np.bool_(True))
    ret_type = TupleType(types + acc_types)
    param_types = [ctx.type(iteration), ctx.type(cond_in)] + types + acc_types
    recur = var("loop", FuncType(param_types, ret_type))
    again = Call(recur, [_op.add(iteration, const(np.int64(1))), next_cond]
                 + [coerce(importer, o, t) for o, t in zip(outs[1:1 + n_carried], types)]
                 + [_append_scan(ctx, a, s, iteration) for a, s in zip(accs, scans)])
    step = Function([iteration, cond_in, *carried, *accs], If(keep_going, again, Tuple([*carried, *accs])),
                    ret_type=ret_type)
    start = [const(np.int64(0)), first_cond] + [coerce(importer, x, t) for x, t in zip(initial, types)] + acc_inits
    result = importer.typed(Let(recur, step, Call(recur, start)), ret_type)
    return [TupleGetItem(result, k) for k in range(n_carried + n_scan)]


def _append_scan(ctx, acc, scan, iteration):
    """acc with this iteration's scan output appended along a new first axis. When the output's
    shape is dynamic, the first iteration starts the accumulator afresh (its empty start value
    cannot know the element dims)."""
    grown = _op.concatenate([acc, _op.expand_dims(scan, 0)], 0)
    if not ctx.type(scan).is_dynamic:
        return grown
    acc_type = ctx.type(acc)
    first = coerce(ctx.importer, _op.expand_dims(scan, 0), acc_type)
    return If(_op.equal(iteration, const(np.int64(0))), first, coerce(ctx.importer, grown, acc_type))


def _settle_body(ctx, body, initial):
    """(iteration var, condition var, carried vars, body outputs) once the carried values' types
    are a fixed point: each round converts the body with the current types and widens them by
    what the body returns."""
    importer = ctx.importer
    types = [value_type(importer, x) for x in initial]
    for _ in range(MAX_TYPE_ROUNDS):
        iteration = var("iteration", TensorType((), "int64"))
        cond_in = var("cond", TensorType((), "bool"))
        carried = []
        for k, ty in enumerate(types):
            v = var(f"carried{k}", settle(ty))
            if has_unknown(ty) and importer.adt.is_list(ty):
                remember(importer, v, UnknownSequence(ty.args[0].dtype))
            carried.append(v)
        outs = importer.convert_subgraph(body, ctx.values, ctx.opset, [iteration, cond_in, *carried])
        widened = [join_types(t, value_type(importer, o), ctx.where()) for t, o in zip(types, outs[1:])]
        if widened == types and not any(has_unknown(t) for t in types):
            return iteration, cond_in, carried, outs
        if widened == types:  # still unknown after a round: nothing in the body says more
            types = [settle(t) for t in types]
        else:
            types = widened
    raise ctx.fail(f"the loop-carried values' types do not settle after {MAX_TYPE_ROUNDS} rounds "
                   f"({[type_to_str(settle(t)) for t in types]})")
