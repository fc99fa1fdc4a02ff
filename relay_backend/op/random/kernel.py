"""relay.random's operators (TVM v0.18 names): random.threefry_generate, random.threefry_split,
random.uniform, random.normal and random.multinomial.

Each takes a generator state (Tensor[(10,), uint64], threefry.py) and returns the next state
with its values, so a program threads the state through and the same state always gives the
same numbers, on every executor. uniform turns 23 (float32) or 52 (float64) random bits into
the mantissa of a number in [1, 2) and shifts it to [low, high); normal is Box-Muller on two
uniform draws; multinomial normalizes the (clipped) probabilities, accumulates them and picks,
per draw u, the category whose running total is the smallest above u (TVM's argmin form).
The bits are exact everywhere; uniform and normal agree with the numpy references to float
rounding (the compiled log and sin are polynomial approximations).
"""
import dataclasses
import math

import numpy as np

from ... import te, tir
from ...errors import AttrsError, TypeInferenceError
from ...ir.attrs import Attrs, always_printed, as_int_tuple
from ...ir.types import TensorType, TupleType, type_to_str
from ...runtime.limits import check_tensor_size
from ...tir import stmt as S
from ...tir.buffer import Buffer
from ..compute_common import arg_reducer
from ..relations import expect_tensor
from . import threefry as T

KEY_TYPE = TensorType((10,), T.U64)
FLOATS = ("float32", "float64")


def _key_arg(op_name, t):
    t = expect_tensor(t, f"{op_name} key")
    if t != KEY_TYPE:
        raise TypeInferenceError(f"{op_name}: key must be a generator state {type_to_str(KEY_TYPE)} "
                                 f"(relay.random.threefry_key(seed)), got {type_to_str(t)}")
    return t


def _flat(buf):
    return Buffer(buf.name + "_flat", (buf.size(),), buf.dtype, data=buf.data)


def _count(shape) -> int:
    return int(np.prod(shape, dtype="int64"))


# --- the generator kernels ---------------------------------------------------------------------
def _shifted_path(hi, lo):
    """(hi, lo) of the 128-bit one-hot path bit moved right by one."""
    zero = T._u64(0)
    new_hi = te.if_then_else((hi == T._u64(1)) | (hi == zero), zero, te.shift_right(hi, T._u64(1)))
    new_lo = te.if_then_else(hi == T._u64(1), T._u64(1 << 63),
                             te.if_then_else(hi == zero, te.shift_right(lo, T._u64(1)), zero))
    return new_hi, new_lo


def _store_words(buf, values, start=0):
    return [S.BufferStore(buf, v if not isinstance(v, int) else T._u64(v), [start + k]) for k, v in enumerate(values)]


def _generate_stmt(gen, new_gen, bits, count: int):
    tmp = Buffer("threefry_tmp", (10,), T.U64, scope="local")
    rest_buf = Buffer("threefry_rest", (4,), T.U64, scope="local")
    g = [gen[k] for k in range(10)]
    hi, lo = _shifted_path(g[8], g[9])
    rekey = S.seq(T.blocks_stmt(g[:4], [T._u64(T.MASK), T._u64(T.MASK), T._u64(0), T._u64(0)], tmp, 0, 1),
                  *_store_words(tmp, [0, 0, 0, 0, 1 << 63, 0], 4))
    next_path = S.seq(*_store_words(tmp, [te.bitwise_or(g[4], g[8]), te.bitwise_or(g[5], g[9]), 0, 0, hi, lo], 4))
    no_room = g[7] >= T._u64((T.MASK - count) % (1 << 64))
    body = _store_words(tmp, g) + [S.IfThenElse(no_room, S.IfThenElse((g[8] == T._u64(0)) & (g[9] == T._u64(0)),
                                                                    rekey, next_path))]
    whole, rest = divmod(count, 4)
    key, counter = [tmp[k] for k in range(4)], [tmp[k] for k in range(4, 8)]
    if whole:
        body.append(T.blocks_stmt(key, counter, bits, 0, whole))
    if rest:
        body.append(S.BufferStore(tmp, tmp[7] + T._u64(whole * 4), [7]))
        body.append(S.Allocate(rest_buf, S.seq(T.blocks_stmt(key, counter, rest_buf, 0, 1),
                                               *[S.BufferStore(bits, rest_buf[r], [whole * 4 + r]) for r in range(rest)]),
                               "local"))
    body += _store_words(new_gen, [tmp[k] for k in range(6)] + [0, tmp[7] + T._u64(4 if rest else count),
                                                                tmp[8], tmp[9]])
    return S.Allocate(tmp, S.seq(*body), "local")


def generate_tensors(key, shape, name="threefry_generate"):
    """te (new state, uint64 bits of `shape`) from the state tensor `key`."""
    count = _count(shape)
    return te.extern([[10], list(shape)], [key], lambda ins, outs: _generate_stmt(ins[0], outs[0], _flat(outs[1]), count),
                     name=name, dtype=[T.U64, T.U64], tag=name)


def _split_stmt(gen, left, right):
    g = [gen[k] for k in range(10)]
    hi, lo = _shifted_path(g[8], g[9])
    rekey = S.seq(T.blocks_stmt(g[:4], g[4:8], left, 0, 1),
                  *_store_words(left, [0, 0, 0, 0, 1 << 62, 0], 4),
                  *_store_words(right, [left[k] for k in range(4)] + [1 << 63, 0, 0, 0, 1 << 62, 0]))
    extend = S.seq(*_store_words(left, g[:8] + [hi, lo]),
                   *_store_words(right, g[:4] + [te.bitwise_or(g[4], g[8]), te.bitwise_or(g[5], g[9])] + g[6:8]
                                 + [hi, lo]))
    return S.IfThenElse((g[8] == T._u64(0)) & (g[9] == T._u64(0)), rekey, extend)


# --- attrs and relations -----------------------------------------------------------------------
def _shape_attr(op_name, shape):
    shape = as_int_tuple(shape, name="out_shape") or ()
    if any(d < 0 for d in shape):
        raise AttrsError(f"{op_name}: out_shape {shape} has a negative dim")
    check_tensor_size(shape, "uint64", f"{op_name} output")
    return shape


@dataclasses.dataclass(frozen=True)
class ThreefryGenerateAttrs(Attrs):
    out_shape: tuple = always_printed(())

    def __post_init__(self):
        object.__setattr__(self, "out_shape", _shape_attr("random.threefry_generate", self.out_shape))


@dataclasses.dataclass(frozen=True)
class UniformAttrs(Attrs):
    out_shape: tuple = always_printed(())
    out_dtype: str = always_printed("float32")

    def __post_init__(self):
        object.__setattr__(self, "out_shape", _shape_attr("random.uniform", self.out_shape))
        if self.out_dtype not in FLOATS:
            raise AttrsError(f"random: out_dtype must be one of {FLOATS}, got {self.out_dtype!r}")


NormalAttrs = UniformAttrs


@dataclasses.dataclass(frozen=True)
class MultinomialAttrs(Attrs):
    num_samples: int = always_printed(1)

    def __post_init__(self):
        if int(self.num_samples) < 0:
            raise AttrsError(f"random.multinomial: num_samples must be >= 0, got {self.num_samples}")
        object.__setattr__(self, "num_samples", int(self.num_samples))


def _generate_rel(arg_types, attrs):
    _key_arg("random.threefry_generate", arg_types[0])
    return TupleType([KEY_TYPE, TensorType(attrs.out_shape, T.U64)])


def _split_rel(arg_types, attrs):
    _key_arg("random.threefry_split", arg_types[0])
    return TupleType([KEY_TYPE, KEY_TYPE])


def _distribution_rel(op_name, names):
    def rel(arg_types, attrs):
        _key_arg(op_name, arg_types[0])
        for t, what in zip(arg_types[1:], names):
            t = expect_tensor(t, f"{op_name} {what}")
            if t != TensorType((), attrs.out_dtype):
                raise TypeInferenceError(f"{op_name}: {what} must be a scalar {attrs.out_dtype}, got {type_to_str(t)}")
        return TupleType([KEY_TYPE, TensorType(attrs.out_shape, attrs.out_dtype)])
    rel.__name__ = f"distribution_rel[{op_name}]"
    return rel


def _multinomial_rel(arg_types, attrs):
    _key_arg("random.multinomial", arg_types[0])
    probs = expect_tensor(arg_types[1], "random.multinomial probs")
    if len(probs.shape) < 1 or not probs.dtype.startswith("float"):
        raise TypeInferenceError(f"random.multinomial: probs must be a float tensor of rank >= 1, got "
                                 f"{type_to_str(probs)}")
    return TupleType([KEY_TYPE, TensorType(tuple(probs.shape[:-1]) + (attrs.num_samples,), "int32")])


# --- references --------------------------------------------------------------------------------
_FORMAT = {"float32": ("uint32", 9, 127 << 23), "float64": ("uint64", 12, 1023 << 52)}


def standard_uniform_ref(bits, dtype):
    """[0, 1) floats from random uint64 bits: their low word's top bits as a mantissa."""
    word, shift, exponent = _FORMAT[dtype]
    mantissa = (bits.astype(word) >> np.dtype(word).type(shift)) | np.dtype(word).type(exponent)
    return mantissa.view(dtype) - np.asarray(1, dtype)


def _uniform_ref(key, low, high, attrs):
    new, bits = T.generate_ref(key, _count(attrs.out_shape))
    values = standard_uniform_ref(bits, attrs.out_dtype).reshape(attrs.out_shape)
    return [new, (values * (high - low) + low).astype(attrs.out_dtype)]


def _normal_ref(key, mean, scale, attrs):
    new, bits = T.generate_ref(key, 2 * _count(attrs.out_shape))
    dtype = attrs.out_dtype
    u = standard_uniform_ref(bits, dtype).reshape((2,) + attrs.out_shape)
    with np.errstate(divide="ignore"):
        radius = np.sqrt(np.asarray(-2.0, dtype) * np.log(np.asarray(1.0, dtype) - u[0]))
    values = radius * np.sin(np.asarray(2.0 * math.pi, dtype) * u[1]) * scale + mean
    return [new, values.astype(dtype)]


def _multinomial_ref(key, probs, attrs):
    rows = probs.shape[:-1]
    new, bits = T.generate_ref(key, _count(rows + (attrs.num_samples,)))
    u = standard_uniform_ref(bits, "float32").reshape(rows + (attrs.num_samples,))
    p = np.maximum(probs.astype("float32"), np.float32(0))
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.cumsum(p, axis=-1)[..., -1:] if p.shape[-1] else np.zeros(rows + (1,), "float32")
        cumulative = np.cumsum(p / total, axis=-1)
    closest = cumulative[..., :, None] - u[..., None, :]
    closest = np.where(closest > 0, closest, np.float32(1))
    index = np.argmin(closest, axis=-2) if p.shape[-1] else np.zeros(u.shape, "int64")
    return [new, index.astype("int32")]


# --- computes ----------------------------------------------------------------------------------
def standard_uniform(bits, dtype, index):
    """te: the [0, 1) float of bits[index] (as standard_uniform_ref)."""
    word, shift, exponent = _FORMAT[dtype]
    mantissa = te.bitwise_or(te.shift_right(bits[index].astype(word), tir.const(shift, word)), tir.const(exponent, word))
    return te.reinterpret(dtype, mantissa) - tir.const(1.0, dtype)


def _uniform_compute(attrs, inputs, out_type):
    key, low, high = inputs
    new, bits = generate_tensors(key, attrs.out_shape)
    values = te.compute(attrs.out_shape, lambda *i: standard_uniform(bits, attrs.out_dtype, i) * (high[()] - low[()])
                        + low[()], name="T_uniform", tag="random")
    return [new, values]


def _normal_compute(attrs, inputs, out_type):
    key, mean, scale = inputs
    dtype = attrs.out_dtype
    new, bits = generate_tensors(key, (2,) + attrs.out_shape)

    def element(*i):
        u1 = tir.const(1.0, dtype) - standard_uniform(bits, dtype, (0,) + i)
        u2 = standard_uniform(bits, dtype, (1,) + i)
        radius = te.sqrt(tir.const(-2.0, dtype) * te.log(u1))
        return radius * te.sin(tir.const(2.0 * math.pi, dtype) * u2) * scale[()] + mean[()]
    return [new, te.compute(attrs.out_shape, element, name="T_normal", tag="random")]


def _multinomial_compute(attrs, inputs, out_type):
    key, probs = inputs
    shape = list(probs.shape)
    rows, n = shape[:-1], shape[-1]
    new, bits = generate_tensors(key, tuple(int(d) for d in rows) + (attrs.num_samples,))
    zero = tir.const(0.0, "float32")

    def clipped(at):
        return te.max(probs[at].astype("float32"), zero)
    t = te.reduce_axis((0, n), "t")
    total = te.compute(rows, lambda *r: te.sum(clipped(r + (t.var,)), axis=[t]), name="T_multinomial_total")
    c = te.reduce_axis((0, n), "c")
    cumulative = te.compute(shape, lambda *i: te.sum(te.if_then_else(c.var <= i[-1], clipped(i[:-1] + (c.var,))
                                                                      / total[i[:-1]], zero), axis=[c]),
                            name="T_multinomial_cumulative")
    reducer = arg_reducer(False, False, "float32")
    j = te.reduce_axis((0, n), "j")

    def pick(*i):
        gap = cumulative[i[:-1] + (j.var,)] - standard_uniform(bits, "float32", i)
        return reducer((j.var, te.if_then_else(gap > zero, gap, tir.const(1.0, "float32"))), axis=[j])
    index, _ = te.compute(rows + [attrs.num_samples], pick, name="T_multinomial")
    fixed = te.compute(rows + [attrs.num_samples], lambda *i: te.if_then_else(
        index[i] == tir.const(int(np.iinfo("int32").max), "int32"), tir.const(0, "int32"), index[i]),
        name="T_multinomial_index")
    return [new, fixed]
