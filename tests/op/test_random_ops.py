"""relay.random: the numpy Threefry (the references) against an INDEPENDENT pure-Python-int
Threefry-4x64 written from TVM's kernel (bit-exact), the compiled executors against each other
and the references on a program that threads the state, and the distributions' statistics."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.op.random import threefry as T

M64 = (1 << 64) - 1
ROT = [[14, 16], [52, 57], [23, 40], [5, 37], [25, 33], [46, 12], [58, 22], [32, 32]]


def _block(key, counter):
    """One Threefry-4x64 block, 20 rounds, TVM's key schedule (5 injections) and permutation."""
    ks = list(key) + [0x1BD11BDAA9FC1A22 ^ key[0] ^ key[1] ^ key[2] ^ key[3]]
    x = list(counter)
    for s in range(5):
        x = [(x[j] + ks[(s + j) % 5] + (s if j == 3 else 0)) & M64 for j in range(4)]
        for k in range(4):
            r = ROT[(s * 4 + k) % 8]
            for p in range(2):
                a = (x[2 * p] + x[2 * p + 1]) & M64
                b = x[2 * p + 1]
                x[2 * p], x[2 * p + 1] = a, (((b << r[p]) | (b >> (64 - r[p]))) & M64) ^ a
            x = [x[0], x[3], x[2], x[1]]
    return x


def _shift(hi, lo):
    return (0, 1 << 63) if hi == 1 else ((0, lo >> 1) if hi == 0 else (hi >> 1, 0))


def _generate(gen, n):
    gen = [int(v) for v in gen]
    tmp = list(gen)
    if not gen[7] < M64 - n:
        if gen[8] == 0 and gen[9] == 0:
            tmp = _block(gen[:4], [M64, M64, 0, 0]) + [0, 0, 0, 0, 1 << 63, 0]
        else:
            tmp[4:8] = [gen[4] | gen[8], gen[5] | gen[9], 0, 0]
            tmp[8], tmp[9] = _shift(gen[8], gen[9])
    out = []
    for i in range(n // 4):
        out += _block(tmp[:4], [(c + i) & M64 for c in tmp[4:8]])
    if n % 4:
        tmp[7] = (tmp[7] + n // 4 * 4) & M64
        out += _block(tmp[:4], tmp[4:8])[: n % 4]
    new = tmp[:6] + [0, (tmp[7] + (4 if n % 4 else n)) & M64] + tmp[8:]
    return new, out


def _split(gen):
    gen = [int(v) for v in gen]
    if gen[8] == 0 and gen[9] == 0:
        key = _block(gen[:4], gen[4:8])
        return key + [0, 0, 0, 0, 1 << 62, 0], key + [1 << 63, 0, 0, 0, 1 << 62, 0]
    hi, lo = _shift(gen[8], gen[9])
    return gen[:8] + [hi, lo], gen[:4] + [gen[4] | gen[8], gen[5] | gen[9]] + gen[6:8] + [hi, lo]


def test_seed_key_layout():
    key = T.seed_key(1 + (2 << 64))
    assert key.dtype == np.uint64 and key.tolist() == [1, 2, 0, 0, 0, 0, 0, 0, 1 << 63, 0]


@pytest.mark.parametrize("op", ["random.threefry_generate", "random.threefry_split"])
def test_numpy_threefry_is_bit_exact_with_python_ints(op):
    opdef = relay.op.get(op)
    for sample in opdef.samples(np.random.default_rng(0)):
        key = sample.inputs[0]
        got = opdef.ref(key, sample.attrs)
        if op.endswith("split"):
            want = _split(key)
        else:
            new, bits = _generate(key, int(np.prod(sample.attrs.out_shape, dtype=int)))
            want = [new, bits]
        assert [int(v) for v in got[0]] == want[0]
        assert [int(v) for v in np.ravel(got[1])] == want[1]


def _program():
    """Split a seed, draw bits, uniforms, normals and a multinomial from the threaded states."""
    key = relay.random.threefry_key(2024)
    left, right = relay.random.threefry_split(key)
    k1, bits = relay.random.threefry_generate(left, (5,))
    k2, u = relay.random.uniform(k1, (3, 4), low=-1.0, high=2.0)
    k3, z = relay.random.normal(right, (6,), "float64", mean=1.0, scale=0.5)
    _, m = relay.random.multinomial(k2, relay.const(np.array([[0.1, 0.0, 0.9], [1.0, 1.0, 2.0]], "float32")), 5)
    return relay.IRModule.from_expr(relay.Function([], relay.Tuple([bits, u, z, m, k3])))


@pytest.mark.parametrize("kind", ["graph", "vm", "aot"])
def test_same_numbers_on_every_executor(kind):
    mod = _program()
    want = [v.numpy() for v in relay.create_executor("debug", mod=mod).evaluate()()]
    got = [v.numpy() for v in relay.create_executor(kind, mod=mod).evaluate()()]
    np.testing.assert_array_equal(got[0], want[0])                 # bits: exact
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-6)   # uniform: float rounding
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got[3], want[3])
    np.testing.assert_array_equal(got[4], want[4])
    again = [v.numpy() for v in relay.create_executor(kind, mod=mod).evaluate()()]
    np.testing.assert_array_equal(again[0], got[0])                # deterministic


def test_distributions():
    key = relay.random.threefry_key(5)
    _, u = relay.random.uniform(key, (20000,))
    _, z = relay.random.normal(key, (20000,), "float64", mean=3.0, scale=2.0)
    _, m = relay.random.multinomial(key, relay.const(np.array([1.0, 0.0, 3.0], "float32")), 8000)
    mod = relay.IRModule.from_expr(relay.Function([], relay.Tuple([u, z, m])))
    u, z, m = (v.numpy() for v in relay.create_executor("vm", mod=mod).evaluate()())
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    assert abs(z.mean() - 3.0) < 0.05 and abs(z.std() - 2.0) < 0.05
    counts = np.bincount(m, minlength=3) / m.size
    assert counts[1] == 0 and abs(counts[0] - 0.25) < 0.02 and abs(counts[2] - 0.75) < 0.02


def test_errors():
    from relay_backend.errors import AttrsError, TypeInferenceError
    bad_key = relay.var("k", shape=(4,), dtype="uint64")
    with pytest.raises(TypeInferenceError, match="generator state"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.random.uniform(bad_key, (2,)).astuple()))
    with pytest.raises(AttrsError, match="out_dtype"):
        relay.random.uniform(relay.random.threefry_key(0), (2,), "int32")
