"""Threefry as TVM's random kernels use it: the counter-based generator behind relay.random.

A generator state ("key") is 10 uint64 words: the Threefry key (words 0-3), a path of splits
(4-5), an unused word (6), a counter (7), and the next path bit to set (8-9, a 128-bit one-hot
mask). A block is Threefry-4x64 with 20 rounds on (key, counter words 4-7), with TVM's
specifics: block i of a request adds i to every counter word, the key is injected before each
group of four rounds (five times, none after the last), and the state is permuted
(0, 3, 2, 1) after every round. threefry_generate draws ceil(n / 4) blocks and advances the
counter by n (by 4 more after a partial block); threefry_split appends a 0 (left) or 1 (right)
to the path, re-keying when the path is full.

Everything here exists twice on purpose: numpy functions (the references every executor is
checked against) and tir statement builders (the kernels), each written from TVM's algorithm.
"""
import numpy as np

from ... import te, tir
from ...tir import stmt as S
from ...tir.buffer import Buffer

ROTATIONS = [[14, 16], [52, 57], [23, 40], [5, 37], [25, 33], [46, 12], [58, 22], [32, 32]]
PERMUTATION = [0, 3, 2, 1]
PARITY = 0x1BD11BDAA9FC1A22
GROUPS = 5                      # 20 rounds, the key injected before each group of 4
MASK = (1 << 64) - 1
U64 = "uint64"


def seed_key(seed: int) -> np.ndarray:
    """The state threefry_key(seed) starts from: the seed's 32 little-endian bytes as the key,
    an empty path, counter 0, next path bit the leftmost."""
    key = np.frombuffer(int(seed % (1 << 256)).to_bytes(32, "little"), dtype=U64)
    return np.concatenate([key, np.array([0, 0, 0, 0, 1 << 63, 0], U64)])


# --- numpy --------------------------------------------------------------------------------------
def _rotl(x, r):
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def blocks_ref(key, counter, count: int) -> np.ndarray:
    """`count` Threefry blocks (count x 4 words): block i encrypts counter + i (every word)."""
    key = np.asarray(key, U64)
    full = list(key[:4]) + [np.uint64(PARITY) ^ key[0] ^ key[1] ^ key[2] ^ key[3]]
    with np.errstate(over="ignore"):
        steps = np.arange(count, dtype=U64)[:, None]
        state = [np.asarray(counter, U64)[j] + steps[:, 0] for j in range(4)]
        for group in range(GROUPS):
            for j in range(4):
                state[j] = state[j] + full[(group + j) % 5] + (np.uint64(group) if j == 3 else np.uint64(0))
            for k in range(4):
                for pair in range(2):
                    a, b = state[2 * pair], state[2 * pair + 1]
                    a = a + b
                    state[2 * pair], state[2 * pair + 1] = a, _rotl(b, ROTATIONS[(group * 4 + k) % 8][pair]) ^ a
                state = [state[PERMUTATION[j]] for j in range(4)]
    return np.stack(state, axis=-1) if count else np.zeros((0, 4), U64)


def _shift_path_ref(hi, lo):
    """The 128-bit one-hot (hi, lo) moved right by one."""
    if hi == 1:
        return np.uint64(0), np.uint64(1 << 63)
    if hi == 0:
        return np.uint64(0), lo >> np.uint64(1)
    return hi >> np.uint64(1), np.uint64(0)


def generate_ref(gen, count: int):
    """(new state, `count` random uint64) from state `gen`."""
    gen = np.asarray(gen, U64)
    tmp = gen.copy()
    with np.errstate(over="ignore"):
        if not gen[7] < np.uint64(MASK) - np.uint64(count):
            if gen[8] == 0 and gen[9] == 0:          # no room in the path: re-key
                tmp[:4] = blocks_ref(gen[:4], np.array([MASK, MASK, 0, 0], U64), 1)[0]
                tmp[4:] = np.array([0, 0, 0, 0, 1 << 63, 0], U64)
            else:
                tmp[4], tmp[5] = gen[4] | gen[8], gen[5] | gen[9]
                tmp[6] = tmp[7] = 0
                tmp[8], tmp[9] = _shift_path_ref(gen[8], gen[9])
        whole, rest = divmod(count, 4)
        out = [blocks_ref(tmp[:4], tmp[4:8], whole).reshape(-1)]
        if rest:
            tmp[7] = tmp[7] + np.uint64(whole * 4)
            out.append(blocks_ref(tmp[:4], tmp[4:8], 1).reshape(-1)[:rest])
        new = tmp.copy()
        new[6] = 0
        new[7] = tmp[7] + np.uint64(4 if rest else count)
    return new, np.concatenate(out)


def split_ref(gen):
    """(left, right) states from `gen`."""
    gen = np.asarray(gen, U64)
    left, right = gen.copy(), gen.copy()
    if gen[8] == 0 and gen[9] == 0:
        left[:4] = blocks_ref(gen[:4], gen[4:8], 1)[0]
        left[4:] = np.array([0, 0, 0, 0, 1 << 62, 0], U64)
        right[:4] = left[:4]
        right[4:] = np.array([1 << 63, 0, 0, 0, 1 << 62, 0], U64)
        return left, right
    left[8], left[9] = _shift_path_ref(gen[8], gen[9])
    right[4], right[5] = gen[4] | gen[8], gen[5] | gen[9]
    right[8], right[9] = left[8], left[9]
    return left, right


# --- tir ----------------------------------------------------------------------------------------
def _u64(value):
    return tir.const(value, U64)


def _rotl_te(x, r):
    """x rotated left by r (a uint64 expression in [1, 63])."""
    return te.bitwise_or(te.shift_left(x, r), te.shift_right(x, _u64(64) - r))


def blocks_stmt(key, counter, out: Buffer, out_offset, count):
    """Statements writing `count` blocks (4 words each) to out[out_offset:]; `key` and
    `counter` are 4 uint64 PrimExprs each (read once, before any write). The rounds are loops
    over a rotation table, so a kernel stays small."""
    full = Buffer("threefry_key", (5,), U64, scope="local")
    state = Buffer("threefry_state", (4,), U64, scope="local")
    table = Buffer("threefry_rotations", (16,), U64, scope="local")
    parity = _u64(PARITY)
    for j in range(4):
        parity = te.bitwise_xor(parity, key[j])
    setup = [S.BufferStore(full, key[j], [j]) for j in range(4)] + [S.BufferStore(full, parity, [4])]
    setup += [S.BufferStore(table, _u64(r), [2 * row + pair]) for row, pair_r in enumerate(ROTATIONS)
              for pair, r in enumerate(pair_r)]

    def round_(group, k):
        row = tir.floormod(group * 4 + k, 8)
        body = []
        for pair in range(2):
            a, b = 2 * pair, 2 * pair + 1
            body.append(S.BufferStore(state, state[a] + state[b], [a]))
            body.append(S.BufferStore(state, te.bitwise_xor(_rotl_te(state[b], table[row * 2 + pair]), state[a]), [b]))
        word1 = tir.Var("word1", U64)          # the permutation (0, 3, 2, 1) swaps words 1 and 3
        body.append(S.LetStmt(word1, state[1], S.seq(S.BufferStore(state, state[3], [1]),
                                                     S.BufferStore(state, word1, [3]))))
        return S.seq(*body)

    def group_(group):
        inject = [S.BufferStore(state, state[j] + full[tir.floormod(group + j, 5)]
                                + (group.astype(U64) if j == 3 else _u64(0)), [j]) for j in range(4)]
        k = tir.Var("round", "int32")
        return S.seq(*inject, S.For(k, 0, 4, "serial", round_(group, k)))

    def block(i):
        start = [S.BufferStore(state, counter[j] + i.astype(U64), [j]) for j in range(4)]
        group = tir.Var("group", "int32")
        finish = [S.BufferStore(out, state[j], [out_offset + i * 4 + j]) for j in range(4)]
        return S.seq(*start, S.For(group, 0, GROUPS, "serial", group_(group)), *finish)
    var = tir.Var("block", "int32")
    loop = S.For(var, 0, count, "serial", block(var))
    return S.Allocate(full, S.Allocate(state, S.Allocate(table, S.seq(*setup, loop), "local"), "local"), "local")
