"""Gradient check cases: for every differentiable operator, two programs at different shapes
(broadcasting, strides, padding, groups, axes) with inputs away from the points where the op is
not differentiable. A case is (op name, builder(*vars) -> expr, [Input(...)]); check_grad tests
the inputs marked `check`."""
from typing import NamedTuple

import numpy as np

import relay_backend as relay
from relay_backend.op.nn.conv import conv2d

F64 = "float64"


class Input(NamedTuple):
    shape: tuple
    low: float = -1.0
    high: float = 1.0
    dtype: str = F64
    check: bool = True
    kind: str = "uniform"     # uniform | away_from_int | indices | bool | positive_distinct


class Case(NamedTuple):
    op: str
    build: object
    inputs: list
    eps: float = 1e-6
    note: str = ""

    def make(self, seed=0):
        rng = np.random.default_rng(seed)
        vars_, arrays = [], []
        for i, spec in enumerate(self.inputs):
            vars_.append(relay.var(f"p{i}", shape=spec.shape, dtype=spec.dtype))
            arrays.append(_array(spec, rng))
        func = relay.Function(vars_, self.build(*vars_))
        checked = [a for a, spec in zip(arrays, self.inputs) if spec.check]
        return func, arrays, checked


def _array(spec, rng):
    shape = spec.shape
    if spec.kind == "indices":
        return rng.integers(int(spec.low), int(spec.high), size=shape).astype(spec.dtype)
    if spec.kind == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if spec.kind == "away_from_int":         # k + [0.2, 0.4] or k + [0.6, 0.8]: no jumps nearby
        base = rng.integers(int(spec.low), int(spec.high), size=shape)
        frac = rng.uniform(0.2, 0.4, size=shape) + 0.4 * rng.integers(0, 2, size=shape)
        return (base + frac).astype(spec.dtype)
    if spec.kind == "distinct":              # a shuffled grid: no ties, gaps >> eps
        n = int(np.prod(shape))
        values = np.linspace(spec.low, spec.high, n)
        return rng.permutation(values).reshape(shape).astype(spec.dtype)
    values = rng.uniform(spec.low, spec.high, size=shape)
    if spec.kind == "nonzero":               # |x| in [0.2, high]
        values = np.sign(rng.uniform(-1, 1, size=shape) + 1e-9) * rng.uniform(0.2, spec.high, size=shape)
    return values.astype(spec.dtype)


def I(shape, low=-1.0, high=1.0, **kw):  # noqa: E743 - a short name keeps the table readable
    return Input(tuple(shape), low, high, **kw)


def _unary(op, fn, low=-1.0, high=1.0, kind="uniform", shapes=((2, 3), (4,))):
    return [Case(op, fn, [I(s, low, high, kind=kind)]) for s in shapes]


def _binary(op, fn, low=-1.0, high=1.0, kind="uniform", rhs_low=None, rhs_high=None):
    shift = 0.137 if kind == "distinct" else 0.0     # distinct grids: no ties between x and y
    r_lo = (rhs_low if rhs_low is not None else low) + shift
    r_hi = (rhs_high if rhs_high is not None else high) + shift
    return [Case(op, fn, [I((2, 3), low, high, kind=kind), I((2, 3), r_lo, r_hi, kind=kind)]),
            Case(op, fn, [I((2, 1, 3), low, high, kind=kind), I((4, 1), r_lo, r_hi, kind=kind)],
                 note="broadcasting")]


CASES = []
U = relay
CASES += _unary("exp", U.exp) + _unary("fast_exp", U.fast_exp) + _unary("negative", U.negative)
CASES += _unary("log", U.log, 0.5, 2.0) + _unary("sqrt", U.sqrt, 0.5, 2.0) + _unary("rsqrt", U.rsqrt, 0.5, 2.0)
CASES += _unary("sigmoid", U.sigmoid, -3, 3) + _unary("tanh", U.tanh, -2, 2) + _unary("fast_tanh", U.fast_tanh, -2, 2)
CASES += _unary("sin", U.sin, -3, 3) + _unary("cos", U.cos, -3, 3) + _unary("erf", U.erf, -2, 2)
CASES += _unary("fast_erf", U.fast_erf, -2, 2) + _unary("copy", U.copy)
CASES += _unary("abs", U.abs, 1.0, 2.0, kind="nonzero") + _unary("nn.relu", U.nn.relu, 1.0, 2.0, kind="nonzero")
for _name in ("floor", "ceil", "round", "sign"):
    CASES += _unary(_name, getattr(U, _name), -3, 3, kind="away_from_int")
CASES += _unary("zeros_like", U.zeros_like) + _unary("ones_like", U.ones_like)
CASES += [Case("cast", lambda x: relay.cast(x, "float64"), [I((2, 3), dtype="float32")], eps=1e-2),
          Case("cast", lambda x: relay.cast(x, "float32"), [I((4,))], eps=1e-2, note="narrowing")]
CASES += [Case("clip", lambda x: relay.clip(x, -0.5, 0.5), [I((2, 3), kind="away_from_int", low=-2, high=2)]),
          Case("clip", lambda x: relay.clip(x, 0.0, 10.0), [I((5,), 0.1, 2.0)])]
CASES += [Case("nn.leaky_relu", lambda x: relay.nn.leaky_relu(x, 0.2), [I((2, 3), 1.0, 2.0, kind="nonzero")]),
          Case("nn.leaky_relu", lambda x: relay.nn.leaky_relu(x, 0.05), [I((4,), 1.0, 2.0, kind="nonzero")])]
CASES += [Case("nn.prelu", lambda x, a: relay.nn.prelu(x, a), [I((2, 3, 2), 1.0, 2.0, kind="nonzero"), I((3,))]),
          Case("nn.prelu", lambda x, a: relay.nn.prelu(x, a, axis=0), [I((2, 3), 1.0, 2.0, kind="nonzero"), I((2,))])]
CASES += _binary("add", U.add) + _binary("subtract", U.subtract) + _binary("multiply", U.multiply)
CASES += _binary("divide", U.divide, 0.5, 2.0) + _binary("power", U.power, 0.5, 2.0)
CASES += _binary("maximum", U.maximum, kind="distinct") + _binary("minimum", U.minimum, kind="distinct")
CASES += [Case("floor_mod", U.floor_mod, [I((2, 3), 2.1, 2.9), I((2, 3), 1.0, 1.0 + 1e-3)]),
          Case("floor_mod", U.floor_mod, [I((3,), 0.2, 0.8), I((1,), 2.0, 2.0)])]
for _name in ("floor_divide", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    CASES += _binary(_name, getattr(U, _name), 0.5, 2.0, kind="distinct")
CASES += [Case("where", lambda c, x, y: relay.where(c, x, y),
               [I((2, 3), kind="bool", dtype="bool", check=False), I((2, 3)), I((2, 3))]),
          Case("where", lambda c, x, y: relay.where(c, x, y),
               [I((2, 1), kind="bool", dtype="bool", check=False), I((3,)), I((2, 3))], note="broadcasting")]
CASES += [Case("full", lambda v: relay.full(v, (2, 3), F64), [I(())]),
          Case("full", lambda v: relay.full(v, (4,), F64), [I(())])]

# the rarer elementwise ops (op/elemwise_math.py)
CASES += _unary("log2", U.log2, 0.5, 2.0) + _unary("log10", U.log10, 0.5, 2.0) + _unary("tan", U.tan, -1.2, 1.2)
CASES += _unary("sinh", U.sinh, -2, 2) + _unary("cosh", U.cosh, -2, 2) + _unary("asinh", U.asinh, -3, 3)
CASES += _unary("asin", U.asin, -0.9, 0.9) + _unary("acos", U.acos, -0.9, 0.9) + _unary("atan", U.atan, -3, 3)
CASES += _unary("acosh", U.acosh, 1.2, 4.0) + _unary("atanh", U.atanh, -0.9, 0.9)
CASES += _unary("trunc", U.trunc, -3, 3, kind="away_from_int")
for _name in ("isnan", "isinf", "isfinite"):
    CASES += _unary(_name, getattr(U, _name), -3, 3)
for _name in ("mod", "trunc_mod"):
    CASES += [Case(_name, getattr(U, _name), [I((2, 3), 2.1, 2.9), I((2, 3), 1.0, 1.0 + 1e-3)]),
              Case(_name, getattr(U, _name), [I((3,), -2.8, -2.2), I((1,), 2.0, 2.0)], note="negative dividend")]
CASES += _binary("trunc_divide", U.trunc_divide, 0.5, 2.0, kind="distinct")
CASES += [Case("cast_like", lambda x, y: relay.cast_like(x, y), [I((2, 3), dtype="float32"), I((4,), check=False)],
               eps=1e-2),
          Case("cast_like", lambda x, y: relay.cast_like(x, y), [I((4,)), I((), check=False)])]

# reductions
for _name in ("sum", "mean"):
    _fn = getattr(U, _name)
    CASES += [Case(_name, lambda x, f=_fn: f(x, axis=1), [I((2, 3, 2))]),
              Case(_name, lambda x, f=_fn: f(x, axis=[0, 2], keepdims=True), [I((2, 3, 2))]),
              Case(_name, lambda x, f=_fn: f(x), [I((4,))], note="all axes")]
for _name in ("max", "min"):
    _fn = getattr(U, _name)
    CASES += [Case(_name, lambda x, f=_fn: f(x, axis=1), [I((2, 3, 2), kind="distinct")]),
              Case(_name, lambda x, f=_fn: f(x, axis=0, keepdims=True, exclude=True), [I((3, 2), kind="distinct")])]
CASES += [Case("prod", lambda x: relay.prod(x, axis=1), [I((2, 3), 0.5, 1.5)]),
          Case("prod", lambda x: relay.prod(x), [I((4,), 0.5, 1.5)])]
CASES += [Case("variance", lambda x: relay.variance(x, axis=1), [I((2, 3))]),
          Case("variance", lambda x: relay.variance(x, axis=[0], keepdims=True, unbiased=True), [I((3, 2))])]
for _name in ("argmax", "argmin"):
    CASES += [Case(_name, lambda x, n=_name: getattr(relay, n)(x, axis=1), [I((2, 3), kind="distinct")]),
              Case(_name, lambda x, n=_name: getattr(relay, n)(x), [I((4,), kind="distinct")])]

# shapes and indexing
CASES += [Case("reshape", lambda x: relay.reshape(x, (3, 2)), [I((2, 3))]),
          Case("reshape", lambda x: relay.reshape(x, (-1,)), [I((2, 2, 2))])]
CASES += [Case("transpose", lambda x: relay.transpose(x, (1, 0)), [I((2, 3))]),
          Case("transpose", lambda x: relay.transpose(x, (2, 0, 1)), [I((2, 3, 2))])]
CASES += [Case("expand_dims", lambda x: relay.expand_dims(x, 1, 2), [I((2, 3))]),
          Case("expand_dims", lambda x: relay.expand_dims(x, -1), [I((4,))])]
CASES += [Case("squeeze", lambda x: relay.squeeze(x), [I((2, 1, 3))]),
          Case("squeeze", lambda x: relay.squeeze(x, axis=[0]), [I((1, 4))])]
CASES += [Case("nn.batch_flatten", relay.nn.batch_flatten, [I((2, 3, 2))]),
          Case("nn.batch_flatten", relay.nn.batch_flatten, [I((3, 2))])]
CASES += [Case("broadcast_to", lambda x: relay.broadcast_to(x, (2, 3)), [I((3,))]),
          Case("broadcast_to", lambda x: relay.broadcast_to(x, (2, 2, 3)), [I((2, 1, 1))])]
CASES += [Case("tile", lambda x: relay.tile(x, (2, 1)), [I((2, 3))]),
          Case("tile", lambda x: relay.tile(x, (2, 2)), [I((3,))])]
CASES += [Case("repeat", lambda x: relay.repeat(x, 2, 1), [I((2, 3))]),
          Case("repeat", lambda x: relay.repeat(x, 3, 0), [I((4,))])]
CASES += [Case("reverse", lambda x: relay.reverse(x, 1), [I((2, 3))]),
          Case("reverse", lambda x: relay.reverse(x, 0), [I((4,))])]
CASES += [Case("concatenate", lambda x, y: relay.concatenate([x, y], 1), [I((2, 3)), I((2, 1))]),
          Case("concatenate", lambda x, y: relay.concatenate([x, y, x], 0), [I((2,)), I((3,))])]
CASES += [Case("split", lambda x: relay.split(x, 3, 1).astuple(), [I((2, 3))]),
          Case("split", lambda x: relay.split(x, (1, 3), 0).astuple(), [I((4, 2))])]
CASES += [Case("stack", lambda x, y: relay.stack([x, y], 0), [I((2, 3)), I((2, 3))]),
          Case("stack", lambda x, y: relay.stack([x, y, y], -1), [I((3,)), I((3,))])]
CASES += [Case("strided_slice", lambda x: relay.strided_slice(x, (0, 1), (2, 3)), [I((3, 4))]),
          Case("strided_slice", lambda x: relay.strided_slice(x, (5, 0), (0, 3), (-2, 2)), [I((6, 3))],
               note="negative and positive strides")]
CASES += [Case("take", lambda x, i: relay.take(x, i, axis=1),
               [I((2, 4)), I((3,), 0, 4, dtype="int32", kind="indices", check=False)]),
          Case("take", lambda x, i: relay.take(x, i),
               [I((2, 3)), I((2, 2), 0, 6, dtype="int32", kind="indices", check=False)], note="flattened")]
CASES += [Case("layout_transform", lambda x: relay.layout_transform(x, "NCHW", "NHWC"), [I((1, 3, 2, 2))]),
          Case("layout_transform", lambda x: relay.layout_transform(x, "NCHW", "NCHW2c"), [I((2, 4, 1, 3))],
               note="blocked sub-axis")]
CASES += [Case("nn.pad", lambda x, v: relay.nn.pad(x, ((1, 0), (0, 2)), v), [I((2, 3)), I(())]),
          Case("nn.pad", lambda x, v: relay.nn.pad(x, ((2, 1),), v, pad_mode="reflect"),
               [I((4,)), I((), check=False)], note="reflect")]

# neural-network ops
CASES += [Case("nn.dense", relay.nn.dense, [I((2, 3)), I((4, 3))]),
          Case("nn.dense", relay.nn.dense, [I((2, 2, 3)), I((2, 3))], note="3-d data")]
CASES += [Case("nn.matmul", lambda a, b: relay.nn.matmul(a, b), [I((2, 3)), I((3, 4))]),
          Case("nn.matmul", lambda a, b: relay.nn.matmul(a, b, transpose_a=True, transpose_b=True),
               [I((2, 3, 2)), I((4, 3))])]
CASES += [Case("nn.batch_matmul", relay.nn.batch_matmul, [I((2, 2, 3)), I((2, 4, 3))]),
          Case("nn.batch_matmul", lambda a, b: relay.nn.batch_matmul(a, b, transpose_a=True, transpose_b=False),
               [I((1, 3, 2)), I((2, 3, 2))], note="transposed, batch 1 broadcasts")]
CASES += [Case("nn.conv2d", lambda x, w: conv2d(x, w, padding=(1, 1)), [I((1, 2, 4, 4)), I((3, 2, 3, 3))]),
          Case("nn.conv2d", lambda x, w: conv2d(x, w, strides=(2, 1), padding=(1, 0, 0, 1), dilation=(1, 2),
                                                groups=2), [I((1, 4, 5, 5)), I((2, 2, 2, 2))],
               note="strides, asymmetric padding, dilation, groups"),
          Case("nn.conv2d", lambda x, w: conv2d(x, w, padding=(1, 0), data_layout="NHWC", kernel_layout="HWIO"),
               [I((1, 4, 3, 2)), I((2, 2, 2, 3))], note="NHWC / HWIO")]
CASES += [Case("nn.bias_add", relay.nn.bias_add, [I((2, 3, 2)), I((3,))]),
          Case("nn.bias_add", lambda x, b: relay.nn.bias_add(x, b, axis=-1), [I((2, 3)), I((3,))])]
for _name, _fn in (("nn.softmax", relay.nn.softmax), ("nn.fast_softmax", relay.nn.fast_softmax),
                   ("nn.log_softmax", relay.nn.log_softmax)):
    CASES += [Case(_name, lambda x, f=_fn: f(x), [I((2, 3))]),
              Case(_name, lambda x, f=_fn: f(x, axis=0), [I((3, 2))])]
CASES += [Case("nn.batch_norm", lambda x, g, b, m, v: relay.nn.batch_norm(x, g, b, m, v).astuple(),
               [I((2, 3, 2)), I((3,)), I((3,)), I((3,)), I((3,), 0.5, 1.5)]),
          Case("nn.batch_norm", lambda x, g, b, m, v: relay.nn.batch_norm(x, g, b, m, v, axis=-1, center=False)[0],
               [I((3, 2)), I((2,)), I((2,)), I((2,)), I((2,), 0.5, 1.5)])]
CASES += [Case("nn.layer_norm", relay.nn.layer_norm, [I((2, 3)), I((3,)), I((3,))]),
          Case("nn.layer_norm", lambda x, g, b: relay.nn.layer_norm(x, g, b, axis=0), [I((3, 2)), I((3,)), I((3,))])]
CASES += [Case("nn.lrn", lambda x: relay.nn.lrn(x, size=3, alpha=0.5, beta=0.75, bias=1.0), [I((1, 4, 2))]),
          Case("nn.lrn", lambda x: relay.nn.lrn(x, size=2, axis=-1, alpha=0.3, beta=0.5, bias=2.0), [I((2, 3))])]
CASES += [Case("nn.dropout", lambda x: relay.nn.dropout(x, 0.3), [I((2, 3))]),
          Case("nn.dropout", lambda x: relay.nn.dropout_raw(x, 0.1).astuple(), [I((4,))])]
CASES += [Case("nn.max_pool2d", lambda x: relay.nn.max_pool2d(x, (2, 2), (2, 2)), [I((1, 2, 4, 4), kind="distinct")]),
          Case("nn.max_pool2d", lambda x: relay.nn.max_pool2d(x, (3, 2), (2, 1), padding=(1, 0), ceil_mode=True),
               [I((1, 1, 5, 3), kind="distinct")], note="padding, ceil_mode"),
          Case("nn.max_pool2d", lambda x: relay.nn.max_pool2d(x, (2, 2), (1, 1), layout="NHWC"),
               [I((1, 3, 3, 2), kind="distinct")], note="NHWC")]
CASES += [Case("nn.avg_pool2d", lambda x: relay.nn.avg_pool2d(x, (2, 2), (2, 2)), [I((1, 2, 4, 4))]),
          Case("nn.avg_pool2d", lambda x: relay.nn.avg_pool2d(x, (3, 3), (2, 2), padding=(1, 1), ceil_mode=True,
                                                             count_include_pad=True), [I((1, 1, 4, 5))],
               note="padding counted, ceil_mode")]
CASES += [Case("nn.global_avg_pool2d", relay.nn.global_avg_pool2d, [I((1, 2, 2, 3))]),
          Case("nn.global_avg_pool2d", relay.nn.global_avg_pool2d, [I((2, 1, 3, 1))])]
CASES += [Case("nn.global_max_pool2d", relay.nn.global_max_pool2d, [I((1, 2, 2, 3), kind="distinct")]),
          Case("nn.global_max_pool2d", relay.nn.global_max_pool2d, [I((2, 1, 3, 1), kind="distinct")])]
CASES += [Case("nn.adaptive_avg_pool2d", lambda x: relay.nn.adaptive_avg_pool2d(x, (2, 2)), [I((1, 1, 3, 5))]),
          Case("nn.adaptive_avg_pool2d", lambda x: relay.nn.adaptive_avg_pool2d(x, (3, None)), [I((1, 2, 2, 2))],
               note="upsampling bins")]

from .grad_cases_nn_ext import NN_EXT_CASES  # noqa: E402  (the issue-20 nn ops)

CASES += NN_EXT_CASES

CASES += [Case("gather_nd", lambda x, i: relay.gather_nd(x, i),
               [I((3, 4)), I((1, 5), -3, 3, dtype="int32", kind="indices", check=False)],
               note="row slices, repeated and negative rows"),
          Case("gather_nd", lambda x, i: relay.gather_nd(x, i, batch_dims=1),
               [I((2, 3, 2)), I((1, 2, 4), 0, 3, dtype="int64", kind="indices", check=False)],
               note="batch_dims")]

CASES += [Case("one_hot", lambda i, on, off: relay.one_hot(i, on, off, 4, -1, "float64"),
               [I((3,), 0, 4, dtype="int32", kind="indices", check=False), I(()), I(())]),
          Case("one_hot", lambda i, on, off: relay.one_hot(i, on, off, 3, 0, "float64"),
               [I((2, 2), -1, 4, dtype="int64", kind="indices", check=False), I(()), I(())],
               note="axis 0, indices out of range")]

CASES += [Case("reshape_like", lambda x, y: relay.reshape_like(x, y), [I((2, 6)), I((3, 4), check=False)]),
          Case("reshape_like", lambda x, y: relay.reshape_like(x, y, lhs_begin=1, rhs_end=2),
               [I((2, 3, 2)), I((6, 1, 5), check=False)], note="spans")]
CASES += [Case("collapse_sum_like", relay.collapse_sum_like, [I((2, 3, 4)), I((3, 1), check=False)]),
          Case("collapse_sum_like", relay.collapse_sum_like, [I((4, 2)), I((2,), check=False)])]
CASES += [Case("collapse_sum_to", lambda x: relay.collapse_sum_to(x, (3, 1)), [I((2, 3, 4))]),
          Case("collapse_sum_to", lambda x: relay.collapse_sum_to(x, ()), [I((2, 2))], note="to a scalar")]

CASES += [Case("contrib_reverse_reshape", lambda x: relay.reverse_reshape(x, (-1, 0)), [I((2, 3, 2))]),
          Case("contrib_reverse_reshape", lambda x: relay.reverse_reshape(x, (0, -3)), [I((4, 2, 3))])]

# ops without inputs have a registered (empty) gradient but nothing to check
NO_INPUTS = ("zeros", "ones", "arange",
             "shape_of", "ndarray_size")   # an integer result: no numeric derivative to compare with


def cases_by_op() -> dict:
    out = {}
    for case in CASES:
        out.setdefault(case.op, []).append(case)
    return out
