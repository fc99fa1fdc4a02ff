"""The op-family templates program_gen draws from: each adds one (or a few) calls to the pool.

A template takes a ProgramBuilder, picks operands (pool values or fresh inputs of a suitable
shape), draws attributes, and adds the result; a candidate whose attrs or type relation are
rejected (AttrsError / TypeInferenceError) is simply dropped by `templates()`'s wrapper.
Domain-restricted ops are guarded so no NaN or overflow appears: log(|x| + 1), sqrt(|x|),
rsqrt(|x| + 1), exp(clip(x, -4, 4)), a / (|b| + 0.5), (|a| + 0.5) ** 2.
"""
import numpy as np

from .. import ir
from ..errors import AttrsError, TypeInferenceError
from ..ir.expr import Tuple, TupleGetItem
from ..ir.types import TensorType
from ..op import nn
from ..op import reduce as R
from ..op import tensor as T
from ..op import transform as X

MAX_ELEMENTS = 4096


# --- helpers -----------------------------------------------------------------------------------
def _size(shape) -> int:
    return int(np.prod([int(d) for d in shape], dtype=np.int64))


def _small(t: TensorType) -> bool:
    return _size(t.shape) <= MAX_ELEMENTS


def _finish(b, expr):
    """Type `expr` and pool it unless it is rejected, empty or too large."""
    ty = b.typed(expr)
    if not isinstance(ty, TensorType) or _size(ty.shape) == 0 or _size(ty.shape) > MAX_ELEMENTS:
        return None
    return b.add(expr)


def _any_shape(b):
    return b.shape(b.int(0, 4))


def _nchw(b):
    return (b.int(1, 2), b.int(1, 4), b.int(3, 8), b.int(3, 8))


def _broadcastable(s1, s2) -> bool:
    for x, y in zip(reversed(s1), reversed(s2)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def _broadcast_variant(b, shape):
    """A shape that broadcasts with `shape`: some dims set to 1, leading dims dropped or added."""
    dims = [1 if b.chance(30) else d for d in shape]
    dims = dims[b.int(0, len(dims)):] if b.chance(30) else dims
    if b.chance(15) and len(dims) < 4:
        dims = [b.int(1, 3)] + dims
    return tuple(dims)


# --- elementwise and broadcast ------------------------------------------------------------------
UNARY = {
    "negative": T.negative, "abs": T.abs, "tanh": T.tanh, "sigmoid": T.sigmoid, "sin": T.sin,
    "cos": T.cos, "erf": T.erf, "copy": T.copy, "relu": nn.relu,
    "exp": lambda x, b: T.exp(T.clip(x, -4.0, 4.0)),
    "log": lambda x, b: T.log(T.add(T.abs(x), b.const(1.0))),
    "sqrt": lambda x, b: T.sqrt(T.abs(x)),
    "rsqrt": lambda x, b: T.rsqrt(T.add(T.abs(x), b.const(1.0))),
    "clip": lambda x, b: T.clip(x, -float(b.int(0, 3)) - 0.5, float(b.int(0, 3)) + 0.5),
    "leaky_relu": lambda x, b: nn.leaky_relu(x, alpha=b.choice([0.01, 0.1, 0.5])),
}
_GUARDED = {"exp", "log", "sqrt", "rsqrt", "clip", "leaky_relu"}


def apply_unary(b, x, name=None):
    name = name or b.choice(sorted(UNARY))
    fn = UNARY[name]
    return fn(x, b) if name in _GUARDED else fn(x)


def unary_relu(x):
    return nn.relu(x)


def unary(b):
    _finish(b, apply_unary(b, b.operand(make_shape=lambda: _any_shape(b))))


BINARY = {
    "add": T.add, "subtract": T.subtract, "multiply": T.multiply, "maximum": T.maximum,
    "minimum": T.minimum,
    "divide": lambda x, y, b: T.divide(x, T.add(T.abs(y), b.const(0.5))),
    "power": lambda x, y, b: T.power(T.add(T.abs(x), b.const(0.5)), b.const(float(b.int(1, 3)))),
}


def binary(b):
    a = b.operand(make_shape=lambda: _any_shape(b))
    shape = b.type_of(a).shape
    mode = b.choice(["pool", "input", "scalar"])
    other = None
    if mode == "pool":
        other = b.operand(lambda t: _broadcastable(t.shape, shape))
    if other is None and mode != "scalar":
        other = b.new_input(_broadcast_variant(b, shape))
    if other is None:
        other = b.const(float(b.int(-4, 4)) / 2)
    if b.chance(30):
        a, other = other, a
    name = b.choice(sorted(BINARY))
    fn = BINARY[name]
    _finish(b, fn(a, other, b) if name in ("divide", "power") else fn(a, other))


# --- reductions ----------------------------------------------------------------------------------
def reduce(b):
    x = b.operand(lambda t: t.ndim >= 1, make_shape=lambda: b.shape(b.int(1, 4)))
    shape = b.type_of(x).shape
    rank = len(shape)
    axis = None
    if not b.chance(20):
        axes = sorted({b.int(0, rank - 1) for _ in range(b.int(1, rank))})
        axis = [a - rank if b.chance(25) else a for a in axes]
    keepdims, exclude = b.chance(50), b.chance(15)
    name = b.choice(["sum", "mean", "max", "min", "prod", "variance"])
    if name == "prod":
        reduced = list(range(rank)) if axis is None else [a % rank for a in axis]
        if exclude:
            reduced = [d for d in range(rank) if d not in reduced]
        if _size([shape[d] for d in reduced]) > 8:
            name = "sum"
    _finish(b, getattr(R, name)(x, axis=axis, keepdims=keepdims, exclude=exclude))


# --- shape and indexing ---------------------------------------------------------------------------
def _factor_shape(b, size):
    """A random shape with the given element count, possibly with one -1."""
    factors, n, p = [], size, 2
    while n > 1 and p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    if n > 1:
        factors.append(n)
    dims = [1] * b.int(1, 4)
    for f in factors:
        dims[b.int(0, len(dims) - 1)] *= f
    if b.chance(30):
        dims[b.int(0, len(dims) - 1)] = -1
    return dims


def reshape(b):
    x = b.operand(make_shape=lambda: _any_shape(b))
    shape = b.type_of(x).shape
    kind = b.choice(["reshape", "transpose", "expand_dims", "squeeze", "reverse", "flatten"])
    rank = len(shape)
    if kind == "reshape" or rank == 0:
        y = X.reshape(x, _factor_shape(b, _size(shape)))
    elif kind == "transpose":
        y = X.transpose(x, None if b.chance(20) else b._draw(_perm(rank)))
    elif kind == "expand_dims":
        y = X.expand_dims(x, b.int(-rank - 1, rank), num_newaxis=b.int(1, 2) if rank < 3 else 1)
    elif kind == "squeeze":
        ones = [i for i, d in enumerate(shape) if d == 1]
        y = X.squeeze(x, None if not ones or b.chance(30) else [b.choice(ones)])
    elif kind == "reverse":
        y = X.reverse(x, b.int(-rank, rank - 1))
    else:
        y = nn.batch_flatten(x)
    _finish(b, y)


def _perm(rank):
    from hypothesis import strategies as st
    return st.permutations(list(range(rank)))


def concatenate(b):
    x = b.operand(lambda t: t.ndim >= 1, make_shape=lambda: b.shape(b.int(1, 3)))
    shape = b.type_of(x).shape
    axis = b.int(0, len(shape) - 1)
    parts = [x]
    for _ in range(b.int(1, 2)):
        if b.chance(30):
            parts.append(x)
            continue
        other_shape = list(shape)
        other_shape[axis] = b.int(1, 3)
        same = b.operand(lambda t: t.shape == tuple(other_shape))
        parts.append(same if same is not None else b.new_input(other_shape))
    _finish(b, X.concatenate(parts, axis - len(shape) if b.chance(25) else axis))


def split(b):
    x = b.operand(lambda t: t.ndim >= 1 and max(t.shape) >= 2, make_shape=lambda: (b.int(2, 6), b.int(1, 4)))
    shape = b.type_of(x).shape
    axis = b.choice([i for i, d in enumerate(shape) if d >= 2] or [0])
    dim = shape[axis]
    divisors = [d for d in range(1, dim + 1) if dim % d == 0]
    if b.chance(50):
        parts = X.split(x, b.choice(divisors), axis)
    else:
        cuts = sorted({b.int(1, dim - 1) for _ in range(b.int(1, 2))}) if dim > 1 else []
        parts = X.split(x, cuts, axis)
    tup = parts.astuple()
    if b.typed(tup) is None:
        return
    if b.chance(25):
        v = ir.var(f"t{len(b.lets)}", b.type_of(tup))
        b._types[id(v)] = (v, b.type_of(tup))
        b.lets.append((v, tup))
        tup = v
    for _ in range(b.int(1, 2)):
        _finish(b, TupleGetItem(tup, b.int(0, len(parts) - 1)))


def take(b):
    x = b.operand(lambda t: t.ndim >= 1, make_shape=lambda: b.shape(b.int(1, 3)))
    shape = b.type_of(x).shape
    axis = None if b.chance(25) else b.int(0, len(shape) - 1)
    dim = _size(shape) if axis is None else shape[axis]
    mode = b.choice(["clip", "wrap", "fast"])
    lo, hi = (0, dim) if mode == "fast" else (-dim, 2 * dim)
    idx_shape = b.shape(b.int(0, 2), 1, 4)
    if b.chance(50):
        rng = np.random.default_rng(b.int(0, 1000))
        indices = b.const(rng.integers(lo, hi, size=idx_shape), "int32")
    else:
        indices = b.new_input(idx_shape, kind="indices", dtype="int32", bound=dim)
    _finish(b, X.take(x, indices, axis=axis, mode=mode))


def strided_slice(b):
    x = b.operand(lambda t: t.ndim >= 1, make_shape=lambda: b.shape(b.int(1, 3), 1, 6))
    shape = b.type_of(x).shape
    axes = sorted({b.int(0, len(shape) - 1) for _ in range(b.int(1, len(shape)))})
    begin, end, strides = [], [], []
    for ax in axes:
        d = shape[ax]
        if b.chance(20):  # a reversed slice
            s, lo = -b.int(1, 2), b.int(0, d - 1)
            begin.append(lo)
            end.append(b.int(-d - 1, lo - 1) if lo > 0 else -d - 1)
        else:
            s, lo = b.int(1, 2), b.int(0, d - 1)
            begin.append(lo - d if b.chance(20) else lo)
            end.append(b.int(lo + 1, d + 2))
        strides.append(s)
    if b.chance(40):
        y = X.strided_slice(x, begin, end, strides, axes=axes)
    else:  # leading axes only: pad begin/end/strides for the axes not chosen
        n = axes[-1] + 1
        full_b, full_e, full_s = [0] * n, [int(d) for d in shape[:n]], [1] * n
        for ax, bb, ee, ss in zip(axes, begin, end, strides):
            full_b[ax], full_e[ax], full_s[ax] = bb, ee, ss
        y = X.strided_slice(x, full_b, full_e, full_s)
    _finish(b, y)


# --- nn ------------------------------------------------------------------------------------------
def dense(b):
    x = b.operand(lambda t: t.ndim == 2 and t.shape[1] <= 64, make_shape=lambda: (b.int(1, 4), b.int(1, 16)))
    batch, k = b.type_of(x).shape
    units = b.int(1, 8)
    w = b.param((units, k), kind="weight", fan_in=k)
    y = nn.dense(x, w, units=units if b.chance(50) else None)
    if b.chance(50):
        y = nn.bias_add(y, b.param((units,)))
    _finish(b, y)


def conv2d(b):
    x = b.operand(lambda t: t.ndim == 4 and t.shape[1] <= 8 and max(t.shape[2:]) <= 12, make_shape=lambda: _nchw(b))
    _, c, h, w = b.type_of(x).shape
    groups = 1
    if b.chance(30):
        groups = b.choice([g for g in range(1, c + 1) if c % g == 0])
    out = groups * b.int(1, 3)
    kh, kw = b.int(1, 3), b.int(1, 3)
    pad = (b.int(0, kh - 1), b.int(0, kw - 1))
    padding = pad + ((b.int(0, kh - 1), b.int(0, kw - 1)) if b.chance(30) else pad)
    dilation = (b.int(1, 2), b.int(1, 2)) if b.chance(20) else (1, 1)
    strides = (b.int(1, 2), b.int(1, 2))
    weight = b.param((out, c // groups, kh, kw), kind="weight", fan_in=(c // groups) * kh * kw)
    _finish(b, nn.conv2d(x, weight, strides=strides, padding=padding, dilation=dilation, groups=groups,
                         channels=out if b.chance(50) else None, kernel_size=(kh, kw) if b.chance(50) else None))


def pool(b):
    x = b.operand(lambda t: t.ndim == 4, make_shape=lambda: _nchw(b))
    _, _, h, w = b.type_of(x).shape
    kind = b.choice(["max", "avg", "global_max", "global_avg", "adaptive_avg"])
    if kind == "global_max":
        return _finish(b, nn.global_max_pool2d(x))
    if kind == "global_avg":
        return _finish(b, nn.global_avg_pool2d(x))
    if kind == "adaptive_avg":
        return _finish(b, nn.adaptive_avg_pool2d(x, output_size=(b.int(1, h), b.int(1, w))))
    size = (b.int(1, 3), b.int(1, 3))
    strides = (b.int(1, 2), b.int(1, 2))
    padding = (b.int(0, size[0] - 1), b.int(0, size[1] - 1))
    ceil_mode = b.chance(25)
    if kind == "max":
        return _finish(b, nn.max_pool2d(x, size, strides, padding=padding, ceil_mode=ceil_mode))
    return _finish(b, nn.avg_pool2d(x, size, strides, padding=padding, ceil_mode=ceil_mode,
                                    count_include_pad=b.chance(50)))


def softmax(b):
    x = b.operand(lambda t: t.ndim >= 1, make_shape=lambda: b.shape(b.int(1, 3)))
    rank = b.type_of(x).ndim
    fn = nn.softmax if b.chance(60) else nn.log_softmax
    _finish(b, fn(x, axis=b.int(-rank, rank - 1)))


def batch_norm(b):
    x = b.operand(lambda t: t.ndim >= 2, make_shape=lambda: b.shape(b.int(2, 4)))
    shape = b.type_of(x).shape
    axis = 1 if b.chance(60) else b.int(0, len(shape) - 1)
    c = (shape[axis],)
    gamma, beta = b.param(c, kind="positive"), b.param(c)
    mean, var = b.param(c, kind="data"), b.param(c, kind="positive")
    out = nn.batch_norm(x, gamma, beta, mean, var, axis=axis, epsilon=b.choice([1e-5, 1e-3]),
                        center=not b.chance(20), scale=not b.chance(20))
    _finish(b, out[0])


# --- structure: tuples and control flow -----------------------------------------------------------
def tuple_(b):
    fields = [b.operand(make_shape=lambda: _any_shape(b)) for _ in range(b.int(2, 3))]
    tup = Tuple(fields)
    ty = b.type_of(tup)
    if b.chance(40):
        v = ir.var(f"t{len(b.lets)}", ty)
        b._types[id(v)] = (v, ty)
        b.lets.append((v, tup))
        tup = v
    _finish(b, TupleGetItem(tup, b.int(0, len(fields) - 1)))


def if_(b):
    """If on a scalar bool computed from the data: sum or mean of a value compared to a constant."""
    src = b.operand(make_shape=lambda: _any_shape(b))
    red = R.sum(src) if b.chance(50) else R.mean(src)
    cond = T.greater(red, b.const(float(b.int(-2, 2)) / 2))
    if b.typed(cond) is None:
        return
    a = b.operand(make_shape=lambda: _any_shape(b))
    then = apply_unary(b, a)
    other = a if b.chance(25) else apply_unary(b, a)
    if b.chance(30):
        then = apply_unary(b, then)
    if b.typed(then) is None or b.typed(other) is None or b.type_of(then) != b.type_of(other):
        return
    expr = ir.If(cond, then, other)
    b._types[id(expr)] = (expr, b.type_of(then))
    _finish(b, expr)


FAMILIES = {
    "unary": unary, "binary": binary, "reduce": reduce, "reshape": reshape, "concatenate": concatenate,
    "split": split, "take": take, "strided_slice": strided_slice, "dense": dense, "conv2d": conv2d,
    "pool": pool, "softmax": softmax, "batch_norm": batch_norm, "tuple": tuple_, "if": if_,
}


def _guard(template):
    def run(b):
        try:
            template(b)
        except (AttrsError, TypeInferenceError):
            pass  # a rejected candidate: nothing was pooled
    run.__name__ = template.__name__
    return run


def templates(control_flow: bool = True) -> dict:
    """name -> template (rejections swallowed); "if" only when control flow is allowed."""
    return {name: _guard(fn) for name, fn in FAMILIES.items() if control_flow or name != "if"}
