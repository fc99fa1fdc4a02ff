"""ONNX RNN, GRU and LSTM, unrolled over the sequence as TVM's ONNX frontend builds them.

Every time step becomes its own small block of Relay ops (so the time dimension must be static);
the input projection X·Wᵀ + Wb is computed for all steps at once before the loop. Directions
forward, reverse and bidirectional; the `activations` / `activation_alpha` / `activation_beta`
attributes (alphas and betas consumed in order by the activations that take them, with the ONNX
operators' defaults otherwise); `clip` (applied to every gate's input before its activation);
`initial_h`, `initial_c`, peepholes `P`, LSTM's `input_forget`, GRU's `linear_before_reset`;
`layout` 0 (time major) and 1 (batch major).

`sequence_lens` (TVM reads it for GRU only; here for all three, as onnxruntime): a batch entry
past its length keeps its hidden (and cell) state and outputs zeros; the reverse direction reads
each entry's own steps backwards (the time indices are permuted per entry with a gather, so a
run-time `sequence_lens` works too).

The gate equations are ONNX's (onnx/defs/rnn/defs.cc); weights are W[zrh] for GRU and W[iofc] for
LSTM, as the ONNX layout stores them.
"""
import numpy as np

from .... import op as _op
from ....op import nn as _nn
from ..common import const
from ._registry import converter

# activation name -> (builder(x, alpha, beta, c), default alpha, default beta); c(v) makes a constant
_ACTIVATIONS = {
    "Relu": (lambda x, a, b, c: _nn.relu(x), None, None),
    "Tanh": (lambda x, a, b, c: _op.tanh(x), None, None),
    "Sigmoid": (lambda x, a, b, c: _op.sigmoid(x), None, None),
    "Affine": (lambda x, a, b, c: _op.add(_op.multiply(x, c(a)), c(b)), 1.0, 0.0),
    "LeakyRelu": (lambda x, a, b, c: _nn.leaky_relu(x, a), 0.01, None),
    "ThresholdedRelu": (lambda x, a, b, c: _op.where(_op.greater(x, c(a)), x, c(0.0)), 1.0, None),
    "ScaledTanh": (lambda x, a, b, c: _op.multiply(c(a), _op.tanh(_op.multiply(x, c(b)))), 1.0, 1.0),
    "HardSigmoid": (lambda x, a, b, c: _op.clip(_op.add(_op.multiply(x, c(a)), c(b)), 0.0, 1.0), 0.2, 0.5),
    "Elu": (lambda x, a, b, c: _op.where(_op.greater(x, c(0.0)), x,
                                         _op.multiply(c(a), _op.subtract(_op.exp(x), c(1.0)))), 1.0, None),
    "Softsign": (lambda x, a, b, c: _op.divide(x, _op.add(c(1.0), _op.abs(x))), None, None),
    "Softplus": (lambda x, a, b, c: _op.log(_op.add(_op.exp(x), c(1.0))), None, None),
}

# per cell kind: (number of gates, default activations per direction)
_CELLS = {"RNN": (1, ["Tanh"]), "GRU": (3, ["Sigmoid", "Tanh"]), "LSTM": (4, ["Sigmoid", "Tanh", "Tanh"])}


def _activations(ctx, kind, num_directions, dtype):
    """One list of activation callables per direction."""
    per_direction = len(_CELLS[kind][1])
    names = ctx.attrs.get("activations")
    names = list(names) if names else _CELLS[kind][1] * num_directions
    if len(names) != per_direction * num_directions:
        raise ctx.invalid(f"{len(names)} activations given; {kind} needs {per_direction} per direction "
                          f"({per_direction * num_directions} for {num_directions} direction(s))")
    alphas = list(ctx.attrs.get("activation_alpha") or [])
    betas = list(ctx.attrs.get("activation_beta") or [])

    def make_const(v):
        return const(np.array(v, dtype=dtype))
    acts = []
    for name in names:
        key = next((k for k in _ACTIVATIONS if k.lower() == str(name).lower()), None)
        if key is None:
            raise ctx.fail(f"activation {name!r} is not supported", f"use one of {sorted(_ACTIVATIONS)}")
        build, alpha, beta = _ACTIVATIONS[key]
        if alpha is not None and alphas:
            alpha = float(alphas.pop(0))
        if beta is not None and betas:
            beta = float(betas.pop(0))
        acts.append(lambda x, build=build, alpha=alpha, beta=beta: build(x, alpha, beta, make_const))
    return [acts[d * per_direction:(d + 1) * per_direction] for d in range(num_directions)]


class _Setup:
    """The inputs of one RNN node, brought to time-major layout, with static sizes checked."""

    def __init__(self, ctx, inputs, kind):
        gates = _CELLS[kind][0]
        self.ctx, self.kind = ctx, kind
        x, w, r = inputs[0], inputs[1], inputs[2]
        get = lambda k: inputs[k] if len(inputs) > k else None  # noqa: E731
        self.layout = int(ctx.attrs.get("layout", 0))
        if self.layout not in (0, 1):
            raise ctx.invalid(f"layout={self.layout} must be 0 or 1")
        if self.layout == 1:
            x = _op.transpose(x, [1, 0, 2])
        self.x = x
        shape = ctx.shape(x)
        if len(shape) != 3 or not isinstance(shape[0], int):
            raise ctx.fail_shape(f"X has shape {shape}; the sequence length must be static to unroll the "
                                 "recurrence", "give static input shapes via from_onnx(model, shape={...})")
        self.steps, self.batch = int(shape[0]), shape[1]
        if self.steps == 0:
            raise ctx.fail("X has a sequence of 0 steps; the unrolled recurrence needs at least one")
        w_shape = ctx.static_shape(w, "W")
        self.num_directions, hidden_times_gates = w_shape[0], w_shape[1]
        direction = ctx.attrs.get("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ctx.invalid(f"direction={direction!r} must be forward, reverse or bidirectional")
        if (direction == "bidirectional") != (self.num_directions == 2):
            raise ctx.invalid(f"direction={direction} but W holds {self.num_directions} direction(s)")
        self.reverse_only = direction == "reverse"
        self.hidden = int(ctx.attrs.get("hidden_size", hidden_times_gates // gates))
        if hidden_times_gates != gates * self.hidden:
            raise ctx.invalid(f"W has {hidden_times_gates} rows; {kind} with hidden_size={self.hidden} needs "
                              f"{gates * self.hidden}")
        self.dtype = ctx.dtype(x)
        self.w, self.r, self.b = w, r, get(3)
        self.seq_lens = get(4)
        self.h0, self.c0, self.p = get(5), get(6), get(7)
        if self.layout == 1:
            self.h0 = None if self.h0 is None else _op.transpose(self.h0, [1, 0, 2])
            self.c0 = None if self.c0 is None else _op.transpose(self.c0, [1, 0, 2])
        clip = ctx.attrs.get("clip")
        self.clip = None if clip is None else float(clip)

    def direction(self, arrays, d):
        """`arrays[d]` (a [num_directions, ...] tensor) without its direction axis, or None."""
        if arrays is None:
            return None
        return _op.squeeze(_op.strided_slice(arrays, [d], [d + 1], axes=[0]), [0])

    def zeros_state(self, first_step):
        """A (batch, hidden) state of zeros; `first_step` (batch, gates * hidden) gives a dynamic batch."""
        if isinstance(self.batch, int):
            return const(np.zeros((self.batch, self.hidden), self.dtype))
        return _op.zeros_like(_op.strided_slice(first_step, [0], [self.hidden], axes=[1]))

    def gate_input(self, value):
        if self.clip is None:
            return value
        return _op.clip(value, -self.clip, self.clip)


def _time_order(setup, reverse):
    """How a direction reads the steps: None (in order), "reverse" (all entries backwards), or a
    (time * batch,) gather index that reads each batch entry's own steps backwards (sequence_lens;
    the steps past an entry's length stay where they are)."""
    if not reverse:
        return None
    if setup.seq_lens is None:
        return "reverse"
    if not isinstance(setup.batch, int):
        raise setup.ctx.fail_shape("a reverse direction with sequence_lens needs a static batch size",
                                   "give static input shapes via from_onnx(model, shape={...})")
    steps, batch = setup.steps, setup.batch
    t = const(np.arange(steps, dtype="int64").reshape(steps, 1))
    lens = _op.reshape(_op.cast(setup.seq_lens, "int64"), (1, batch))
    time = _op.where(_op.less(t, lens), _op.subtract(_op.subtract(lens, const(np.int64(1))), t), t)
    flat = _op.add(_op.multiply(time, const(np.int64(batch))), const(np.arange(batch, dtype="int64").reshape(1, -1)))
    return _op.reshape(flat, (-1,))


def _reorder(setup, tensor, order):
    """tensor (time, batch, k) read in `order` (see _time_order); each order is its own inverse."""
    if order is None:
        return tensor
    if isinstance(order, str):
        return _op.reverse(tensor, 0)
    width = setup.ctx.shape(tensor)[2]
    picked = _op.take(_op.reshape(tensor, (-3, 0)), order, axis=0)
    return _op.reshape(picked, (setup.steps, setup.batch, width))


def _active_mask(setup, step_index):
    """(batch, 1) bool: which batch entries are still inside their sequence at this step."""
    if setup.seq_lens is None:
        return None
    lens = _op.reshape(_op.cast(setup.seq_lens, "int64"), (-1, 1))
    return _op.less(const(np.int64(step_index)), lens)


def _run_direction(setup, d, reverse, acts, cell):
    """(outputs per step in time order, final states) of one direction."""
    w, r, b = setup.direction(setup.w, d), setup.direction(setup.r, d), setup.direction(setup.b, d)
    gates_times_hidden = setup.ctx.static_shape(setup.w, "W")[1]
    flat_x = _op.reshape(setup.x, (-3, 0))
    projected = _nn.dense(flat_x, w)  # (time * batch, gates * hidden)
    if b is not None:
        projected = _op.add(projected, _op.strided_slice(b, [0], [gates_times_hidden]))
    projected = _op.reshape(projected, (setup.steps, -1, gates_times_hidden))
    order = _time_order(setup, reverse)
    projected = _reorder(setup, projected, order)
    recurrent_bias = None if b is None else _op.strided_slice(b, [gates_times_hidden], [2 * gates_times_hidden])
    steps = [_op.squeeze(_op.strided_slice(projected, [t], [t + 1], axes=[0]), [0]) for t in range(setup.steps)]
    state = [setup.direction(setup.h0, d) if setup.h0 is not None else setup.zeros_state(steps[0])]
    if setup.kind == "LSTM":
        state.append(setup.direction(setup.c0, d) if setup.c0 is not None else setup.zeros_state(steps[0]))
    peephole = setup.direction(setup.p, d)
    outputs = []
    for step, x_proj in enumerate(steps):
        new_state = cell(setup, x_proj, state, r, recurrent_bias, peephole, acts)
        mask = _active_mask(setup, step)
        if mask is not None:
            outputs.append(_op.where(mask, new_state[0], _op.zeros_like(new_state[0])))
            new_state = [_op.where(mask, n, o) for n, o in zip(new_state, state)]
        else:
            outputs.append(new_state[0])
        state = new_state
    y = _op.stack(outputs, 0)  # (time, batch, hidden) in visiting order
    return _reorder(setup, y, order), state


def _split_gates(value, count):
    parts = _op.split(value, count, axis=-1)
    return [parts[i] for i in range(count)]


def _rnn_cell(setup, x_proj, state, r, rb, peephole, acts):
    h = state[0]
    total = _op.add(x_proj, _nn.dense(h, r))
    if rb is not None:
        total = _op.add(total, rb)
    return [acts[0](setup.gate_input(total))]


def _gru_cell(setup, x_proj, state, r, rb, peephole, acts):
    h = state[0]
    f, g = acts
    xz, xr, xh = _split_gates(x_proj, 3)
    rz, rr, rh = _split_rows(r, 3)
    bz, br, bh = (None, None, None) if rb is None else _split_gates(rb, 3)

    def plus_bias(value, bias):
        return value if bias is None else _op.add(value, bias)
    z = f(setup.gate_input(_op.add(xz, plus_bias(_nn.dense(h, rz), bz))))
    reset = f(setup.gate_input(_op.add(xr, plus_bias(_nn.dense(h, rr), br))))
    if int(setup.ctx.attrs.get("linear_before_reset", 0)):
        candidate = _op.add(xh, _op.multiply(reset, plus_bias(_nn.dense(h, rh), bh)))
    else:
        candidate = _op.add(xh, plus_bias(_nn.dense(_op.multiply(reset, h), rh), bh))
    hidden = g(setup.gate_input(candidate))
    one = const(np.array(1, setup.dtype))
    return [_op.add(_op.multiply(_op.subtract(one, z), hidden), _op.multiply(z, h))]


def _split_rows(matrix, count):
    parts = _op.split(matrix, count, axis=0)
    return [parts[i] for i in range(count)]


def _lstm_cell(setup, x_proj, state, r, rb, peephole, acts):
    h, c = state
    f, g, act_h = acts
    total = _op.add(x_proj, _nn.dense(h, r))
    if rb is not None:
        total = _op.add(total, rb)
    gi, go, gf, gc = _split_gates(total, 4)
    pi = po = pf = None
    if peephole is not None:
        pi, po, pf = _split_gates(peephole, 3)

    def peep(value, weight, cell_state):
        return value if weight is None else _op.add(value, _op.multiply(weight, cell_state))
    i = f(setup.gate_input(peep(gi, pi, c)))
    if int(setup.ctx.attrs.get("input_forget", 0)):
        forget = _op.subtract(const(np.array(1, setup.dtype)), i)
    else:
        forget = f(setup.gate_input(peep(gf, pf, c)))
    cand = g(setup.gate_input(gc))
    c_new = _op.add(_op.multiply(forget, c), _op.multiply(i, cand))
    o = f(setup.gate_input(peep(go, po, c_new)))
    return [_op.multiply(o, act_h(c_new)), c_new]


_CELL_FUNCTIONS = {"RNN": _rnn_cell, "GRU": _gru_cell, "LSTM": _lstm_cell}


def _convert(ctx, inputs, kind):
    setup = _Setup(ctx, inputs, kind)
    acts = _activations(ctx, kind, setup.num_directions, setup.dtype)
    ys, finals = [], []
    for d in range(setup.num_directions):
        reverse = d == 1 or setup.reverse_only
        y, state = _run_direction(setup, d, reverse, acts[d], _CELL_FUNCTIONS[kind])
        ys.append(y)
        finals.append(state)
    y = _op.stack(ys, 1)  # (time, directions, batch, hidden)
    outs = [y] + [_op.stack([state[k] for state in finals], 0) for k in range(len(finals[0]))]
    if setup.layout == 1:
        outs = [_op.transpose(outs[0], [2, 0, 1, 3])] + [_op.transpose(o, [1, 0, 2]) for o in outs[1:]]
    return outs


@converter("RNN", min_version=7)
def rnn(ctx, inputs):
    return _convert(ctx, inputs, "RNN")


@converter("GRU", min_version=7)
def gru(ctx, inputs):
    return _convert(ctx, inputs, "GRU")


@converter("LSTM", min_version=7)
def lstm(ctx, inputs):
    return _convert(ctx, inputs, "LSTM")
