"""ONNX Scan, unrolled over its (static) sequence length, as the RNN converters unroll theirs: the
body is converted once per step with that step's state values and input slices, so the result is
plain dataflow that every executor runs.

Opset 9+: inputs are N initial states then M scan inputs (M = num_scan_inputs), each scanned along
its scan_input_axes entry (default 0), backwards where scan_input_directions says 1. The body takes
the N states and one slice of each scan input and returns N new states and K scan-output slices;
the node returns the final states and the K slices stacked along scan_output_axes (in reverse step
order where scan_output_directions says 1).

Opset 8: a leading sequence_lens input (omitted, or every length the full one) and a batch axis 0
on every state and scan input; `directions` applies to the scan inputs. Each batch entry is scanned
on its own (along axis 1 of the inputs) and the results are stacked along the batch axis again.
"""
import numpy as np

from .... import op as _op
from ..common import const
from ._registry import converter

MAX_UNROLLED_STEPS = 4096   # each step converts the body once


def _per_input(ctx, name, count, default):
    values = ctx.attrs.ints(name)
    if values is None:
        return [default] * count
    if len(values) != count:
        raise ctx.invalid(f"{name} has {len(values)} value(s) for {count} tensors")
    return list(values)


def _step(x, index, axis):
    return _op.take(x, const(np.int64(index)), axis=axis, mode="fast")


def _scan(ctx, states, scans, in_axes, in_dirs, out_axes, out_dirs, n_outputs):
    """(final states, stacked scan outputs) of the body run over the scan inputs' common length."""
    body = ctx.attrs.get("body")
    shapes = [ctx.static_shape(x, f"scan input {k}") for k, x in enumerate(scans)]
    ranks = [len(s) for s in shapes]
    axes = []
    for k, (axis, rank) in enumerate(zip(in_axes, ranks)):
        if not -rank <= axis < rank:
            raise ctx.invalid(f"scan_input_axes[{k}] = {axis} is out of range for a rank-{rank} scan input")
        axes.append(axis % rank)
    lengths = {s[a] for s, a in zip(shapes, axes)}
    if len(lengths) != 1:
        raise ctx.invalid(f"the scan inputs have different sequence lengths {sorted(lengths)}")
    steps = lengths.pop()
    if steps == 0:
        raise ctx.fail("a scan over 0 steps is not supported (its outputs' shapes come from the body)")
    if steps > MAX_UNROLLED_STEPS:
        raise ctx.fail(f"a scan over {steps} steps is not supported (it is unrolled; at most {MAX_UNROLLED_STEPS})")
    if len(body.input) != len(states) + len(scans) or len(body.output) != len(states) + n_outputs:
        raise ctx.invalid(f"the body has {len(body.input)} inputs and {len(body.output)} outputs; "
                          f"{len(states)} states and {len(scans)} scan inputs need {len(states) + len(scans)} "
                          f"inputs and {len(states) + n_outputs} outputs")
    collected = [[] for _ in range(n_outputs)]
    for t in range(steps):
        slices = [_step(x, steps - 1 - t if d else t, a) for x, a, d in zip(scans, axes, in_dirs)]
        outs = ctx.importer.convert_subgraph(body, ctx.values, ctx.opset, [*states, *slices])
        states = outs[:len(states)]
        for k, value in enumerate(outs[len(states):]):
            collected[k].append(value)
    stacked = []
    for k, (values, axis, direction) in enumerate(zip(collected, out_axes, out_dirs)):
        rank = len(ctx.shape(values[0])) + 1
        if not -rank <= axis < rank:
            raise ctx.invalid(f"scan_output_axes[{k}] = {axis} is out of range for a rank-{rank} scan output")
        stacked.append(_op.stack(values[::-1] if direction else values, axis % rank))
    return list(states), stacked


@converter("Scan", min_version=8)
def scan(ctx, inputs):
    """The final states and the stacked scan outputs of the unrolled body."""
    m = int(ctx.attrs.get("num_scan_inputs"))
    n_outputs = len(ctx.node.output)
    if ctx.since >= 9:
        n_states = len(inputs) - m
        if n_states < 0:
            raise ctx.invalid(f"num_scan_inputs = {m}, but the node has {len(inputs)} inputs")
        states, scans = list(inputs[:n_states]), list(inputs[n_states:])
        k = n_outputs - n_states
        finals, stacked = _scan(ctx, states, scans, _per_input(ctx, "scan_input_axes", m, 0),
                                _per_input(ctx, "scan_input_directions", m, 0),
                                _per_input(ctx, "scan_output_axes", k, 0),
                                _per_input(ctx, "scan_output_directions", k, 0), k)
        return finals + stacked
    return _scan_v8(ctx, inputs, m, n_outputs)


def _scan_v8(ctx, inputs, m, n_outputs):
    lens, rest = inputs[0], list(inputs[1:])
    n_states = len(rest) - m
    if n_states < 0:
        raise ctx.invalid(f"num_scan_inputs = {m}, but the node has {len(rest)} inputs after sequence_lens")
    states, scans = rest[:n_states], rest[n_states:]
    batch = ctx.static_shape(scans[0] if scans else states[0], "the first scan input")[0]
    if lens is not None:
        lengths = np.asarray(ctx.value(lens, "sequence_lens")).reshape(-1)
        full = ctx.static_shape(scans[0], "the first scan input")[1]
        if lengths.size != batch or (lengths != full).any():
            raise ctx.fail(f"sequence_lens {lengths.tolist()} shorter than the scan inputs' length {full} are "
                           "not supported", "pad every sequence to the full length")
    directions = _per_input(ctx, "directions", m, 0)
    k = n_outputs - n_states
    per_batch = []
    for b in range(batch):
        finals, stacked = _scan(ctx, [_step(s, b, 0) for s in states], [_step(x, b, 0) for x in scans],
                                [0] * m, directions, [0] * k, [0] * k, k)
        per_batch.append(finals + stacked)
    return [_op.stack([row[j] for row in per_batch], 0) for j in range(n_outputs)]
