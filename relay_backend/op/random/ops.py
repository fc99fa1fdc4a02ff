"""The relay.random operator declarations, their samples and tvm.relay's constructors
(threefry_key, threefry_generate, threefry_split, uniform, normal, multinomial)."""
import numpy as np

from ... import te
from ...ir.expr import TupleWrapper, const
from .. import samples as SMP
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import kernel as K
from . import threefry as T


def _keys(rng):
    """States to start from: fresh seeds, a state deep into its path, one about to re-key on
    split (path full), one about to re-key on generate (counter and path exhausted)."""
    deep = T.split_ref(T.split_ref(T.seed_key(7))[1])[0]
    full_path = T.seed_key(11)
    full_path[8] = full_path[9] = 0
    spent = T.seed_key(3)
    spent[7] = np.uint64(T.MASK - 2)
    spent[8] = np.uint64(0)
    spent[9] = np.uint64(1)
    return [T.seed_key(0), T.seed_key(int(rng.integers(1, 1 << 62))), deep, full_path, spent]


def _generate_ref(key, attrs):
    new, bits = T.generate_ref(key, K._count(attrs.out_shape))
    return [new, bits.reshape(attrs.out_shape)]


def _generate_samples(rng):
    shapes = [(2, 3), (7,), (), (0, 4), (4,)]
    return [Sample([key], K.ThreefryGenerateAttrs(shape)) for key, shape in zip(_keys(rng), shapes)]


def _split_samples(rng):
    return [Sample([key]) for key in _keys(rng)]


def _scalar(value, dtype):
    return np.array(value, dtype)


def _uniform_samples(rng):
    keys = _keys(rng)
    return [Sample([keys[0], _scalar(0.0, "float32"), _scalar(1.0, "float32")], K.UniformAttrs((3, 5), "float32")),
            Sample([keys[2], _scalar(-2.0, "float64"), _scalar(3.0, "float64")], K.UniformAttrs((7,), "float64")),
            Sample([keys[4], _scalar(1.0, "float32"), _scalar(1.5, "float32")], K.UniformAttrs((), "float32"))]


def _normal_samples(rng):
    keys = _keys(rng)
    return [Sample([keys[1], _scalar(0.0, "float32"), _scalar(1.0, "float32")], K.NormalAttrs((4, 3), "float32")),
            Sample([keys[3], _scalar(5.0, "float64"), _scalar(0.5, "float64")], K.NormalAttrs((5,), "float64"))]


def _multinomial_samples(rng):
    keys = _keys(rng)
    return [Sample([keys[0], SMP.rand(rng, (3, 5), "float32", 0.0, 1.0)], K.MultinomialAttrs(4)),
            Sample([keys[2], np.array([0.0, 2.0, -1.0, 1.0], "float32")], K.MultinomialAttrs(6)),
            Sample([keys[1], SMP.rand(rng, (2, 2, 3), "float64", 0.0, 1.0)], K.MultinomialAttrs(1)),
            Sample([keys[3], SMP.rand(rng, (SMP.FLOAT16_REDUCTION_TERMS,), "float16", 0.0, 1.0)],   # summed in
                   K.MultinomialAttrs(3))]                                                        # float32


THREEFRY_GENERATE = defop(
    "random.threefry_generate", inputs=("key",), attrs=K.ThreefryGenerateAttrs, rel=K._generate_rel,
    pattern=OpPattern.OPAQUE, ref=lambda key, attrs: _generate_ref(key, attrs),
    compute=lambda attrs, inputs, out_type: list(K.generate_tensors(inputs[0], attrs.out_shape)), level=10,
    samples=_generate_samples, doc="(next state, uint64 random bits of out_shape)")
THREEFRY_SPLIT = defop(
    "random.threefry_split", inputs=("key",), rel=K._split_rel, pattern=OpPattern.OPAQUE,
    ref=lambda key, attrs: list(T.split_ref(key)), level=10, samples=_split_samples,
    compute=lambda attrs, inputs, out_type: list(te.extern([[10], [10]], [inputs[0]], lambda ins, outs: K._split_stmt(
        ins[0], outs[0], outs[1]), name="threefry_split", dtype=[T.U64, T.U64], tag="threefry_split")),
    doc="two independent states from one")
UNIFORM = defop("random.uniform", inputs=("key", "low", "high"), attrs=K.UniformAttrs,
                rel=K._distribution_rel("random.uniform", ("low", "high")), pattern=OpPattern.OPAQUE,
                ref=K._uniform_ref, compute=K._uniform_compute, level=10, samples=_uniform_samples,
                doc="(next state, values uniform in [low, high))")
NORMAL = defop("random.normal", inputs=("key", "mean", "scale"), attrs=K.NormalAttrs,
               rel=K._distribution_rel("random.normal", ("mean", "scale")), pattern=OpPattern.OPAQUE,
               ref=K._normal_ref, compute=K._normal_compute, level=10, samples=_normal_samples,
               doc="(next state, normal values by Box-Muller)")
MULTINOMIAL = defop("random.multinomial", inputs=("key", "probs"), attrs=K.MultinomialAttrs,
                    rel=K._multinomial_rel, pattern=OpPattern.OPAQUE, ref=K._multinomial_ref,
                    compute=K._multinomial_compute, level=10, samples=_multinomial_samples,
                    doc="(next state, int32 category indices drawn from probs' last axis)")


# The parameters the relay.random constructors share (constructor_docs completes their docstrings)
RANDOM_PARAMETERS = {
    "key": ("relay.Expr", "The generator state, a threefry key (from threefry_key, or the state a previous "
                          "call returned); never reuse a state, split or advance it."),
    "shape": ("tuple of int", "The shape of the values drawn."),
    "dtype": ("str, optional", "The float dtype of the values drawn."),
}
DRAWN = ("result", "relay.TupleWrapper", "(the next generator state, the values drawn).")


@documented({"seed": ("int", "The integer seed the state is derived from.")},
            ("result", "relay.Constant", "The threefry key, a constant."))
def threefry_key(seed):
    """relay.random.threefry_key: the generator state for an integer seed, as a constant."""
    return const(T.seed_key(int(seed)))


@documented(RANDOM_PARAMETERS, DRAWN)
def threefry_generate(key, shape):
    """relay.random.threefry_generate: (next state, uint64 random bits of `shape`)."""
    return TupleWrapper(THREEFRY_GENERATE(key, attrs=K.ThreefryGenerateAttrs(shape)), 2)


@documented(RANDOM_PARAMETERS, ("result", "relay.TupleWrapper", "Two new independent generator states."))
def threefry_split(key):
    """relay.random.threefry_split: two new independent states."""
    return TupleWrapper(THREEFRY_SPLIT(key), 2)


def _scalar_const(value, dtype):
    return value if not isinstance(value, (int, float)) else const(np.array(value, dtype), dtype=dtype)


@documented(RANDOM_PARAMETERS, DRAWN)
def uniform(key, shape, dtype="float32", low=0.0, high=1.0):
    """relay.random.uniform: (next state, values uniform in [low, high) of `shape`).

    Parameters
    ----------
    low : float or relay.Expr, optional
        The lower bound (included), a scalar. Defaults to 0.0.
    high : float or relay.Expr, optional
        The upper bound (excluded), a scalar. Defaults to 1.0.
    """
    return TupleWrapper(UNIFORM(key, _scalar_const(low, dtype), _scalar_const(high, dtype),
                                attrs=K.UniformAttrs(shape, dtype)), 2)


@documented(RANDOM_PARAMETERS, DRAWN)
def normal(key, shape, dtype="float32", mean=0.0, scale=1.0):
    """relay.random.normal: (next state, normal values of `shape`).

    Parameters
    ----------
    mean : float or relay.Expr, optional
        The mean of the distribution, a scalar. Defaults to 0.0.
    scale : float or relay.Expr, optional
        Its standard deviation, a scalar. Defaults to 1.0.
    """
    return TupleWrapper(NORMAL(key, _scalar_const(mean, dtype), _scalar_const(scale, dtype),
                               attrs=K.NormalAttrs(shape, dtype)), 2)


@documented(RANDOM_PARAMETERS, DRAWN)
def multinomial(key, probs, num_samples=1):
    """relay.random.multinomial: (next state, int32 indices of shape probs.shape[:-1] + (num_samples,)).

    Parameters
    ----------
    probs : relay.Expr
        The weights of the categories along the last axis, normalized by their sum (a negative
        weight counts as 0).
    num_samples : int, optional
        The number of categories drawn for each distribution, with replacement. Defaults to 1.
    """
    return TupleWrapper(MULTINOMIAL(key, probs, attrs=K.MultinomialAttrs(num_samples)), 2)


__all__ = ["threefry_key", "threefry_generate", "threefry_split", "uniform", "normal", "multinomial"]
