"""ONNX TfIdfVectorizer over integer tokens (pool_int64s; string pools stay unsupported, as string
tensors do), with static input shapes: the n-gram counts are built from constant gathers and
comparisons.

The pool lists the n-grams of each length n back to back (ngram_counts[n - 1] is where the n-grams
start); the k-th n-gram of the pool (counting every length, from 1) is reported at output position
ngram_indexes[k - 1]. Only lengths min_gram_length..max_gram_length are counted. An n-gram occurs
at start i with skip distance d (1 ..max_skip_count + 1) when x[i + d * j] equals its j-th token for
every j < n; 1-grams are counted once (distance 1), longer ones at every distance, as ONNX's
reference. The counts are weighted by `mode`: TF the counts, IDF the weight (or 1) where the count
is positive, TFIDF the weight (or 1) times the count. weights[k] belongs to the k-th n-gram of the
pool, as the spec and onnxruntime say (it lands at output position ngram_indexes[k]; ONNX's Python
reference indexes it by output position instead, which agrees when ngram_indexes is 0, 1, 2, ...).
"""
import numpy as np

from .... import op as _op
from ....runtime.limits import check_tensor_size
from ..common import const
from ._registry import converter


def _pool_grams(ctx):
    """{n: (grams (G, n) int64 array, output positions (G,))} of the counted lengths."""
    pool = ctx.attrs.ints("pool_int64s")
    if ctx.attrs.get("pool_strings") is not None:
        raise ctx.fail("a pool of strings is not supported (string tensors are not)", "use pool_int64s")
    if pool is None:
        raise ctx.invalid("pool_int64s (or pool_strings) is required")
    counts = list(ctx.attrs.ints("ngram_counts") or ())
    indexes = list(ctx.attrs.ints("ngram_indexes") or ())
    low, high = int(ctx.attrs.get("min_gram_length")), int(ctx.attrs.get("max_gram_length"))
    if not 1 <= low <= high:
        raise ctx.invalid(f"min_gram_length {low} and max_gram_length {high} must satisfy 1 <= min <= max")
    grams, gram_id = {}, 0
    for n, start in enumerate(counts, start=1):
        end = counts[n] if n < len(counts) else len(pool)
        if not 0 <= start <= end <= len(pool):
            raise ctx.invalid(f"ngram_counts {counts} do not split the pool of {len(pool)} tokens")
        found = (end - start) // n
        if low <= n <= high and found:
            tokens = np.array(pool[start:start + found * n], np.int64).reshape(found, n)
            positions = [indexes[gram_id + k] if gram_id + k < len(indexes) else -1 for k in range(found)]
            if min(positions) < 0:
                raise ctx.invalid(f"ngram_indexes has {len(indexes)} entries, fewer than the pool's n-grams")
            grams[n] = (tokens, np.array(positions, np.int64))
        gram_id += found
    return grams, low


def _occurrences(x, tokens, distance, length):
    """(rows, G) counts of each n-gram of `tokens` (G, n) in x (rows, length) at one skip distance."""
    n = tokens.shape[1]
    starts = length - distance * (n - 1)
    if starts <= 0:
        return None
    window = np.arange(starts).reshape(-1, 1) + distance * np.arange(n).reshape(1, -1)       # (S, n)
    picked = _op.take(x, const(window.astype("int64")), axis=1, mode="fast")                # (rows, S, n)
    equal = _op.equal(_op.expand_dims(picked, 2), const(tokens.reshape(1, 1, *tokens.shape)))
    return _op.sum(_op.cast(_op.all(equal, axis=-1), "float32"), axis=1)                   # (rows, G)


@converter("TfIdfVectorizer", min_version=9)
def tfidf_vectorizer(ctx, inputs):
    """[C] or [N, C] integer tokens -> the weighted n-gram counts of the pool."""
    x = inputs[0]
    shape = ctx.static_shape(x, "X")
    if len(shape) not in (1, 2):
        raise ctx.invalid(f"X must be [C] or [N, C], got shape {shape}")
    if not ctx.dtype(x).startswith("int"):
        raise ctx.fail(f"X of type {ctx.dtype(x)} is not supported", "give int32 or int64 tokens")
    mode = ctx.attrs.get("mode")
    if mode not in ("TF", "IDF", "TFIDF"):
        raise ctx.invalid(f"mode must be TF, IDF or TFIDF, got {mode!r}")
    grams, low = _pool_grams(ctx)
    skips = int(ctx.attrs.get("max_skip_count", 0))
    if skips < 0:
        raise ctx.invalid(f"max_skip_count must be >= 0, got {skips}")
    indexes = list(ctx.attrs.ints("ngram_indexes") or ())
    size = max(indexes) + 1 if indexes else 0
    weights = ctx.attrs.get("weights")
    if weights is not None and len(weights) != len(indexes):
        raise ctx.invalid(f"weights has {len(weights)} entries for {len(indexes)} n-grams (ngram_indexes)")
    check_tensor_size((max(len(indexes), 1), size), "float32", f"{ctx.where()}: the n-gram scatter (ngram_indexes)")
    rows = _op.cast(_op.reshape(x, (1, shape[0]) if len(shape) == 1 else shape), "int64")
    length = shape[-1]
    batch = 1 if len(shape) == 1 else shape[0]
    total = const(np.zeros((batch, size), np.float32))
    for n, (tokens, positions) in grams.items():
        scatter = np.zeros((len(positions), size), np.float32)
        scatter[np.arange(len(positions)), positions] = 1.0
        # a window of n tokens at distance d spans d * (n - 1) + 1 <= length: larger skips find
        # nothing, and max_skip_count may be any int (a loop up to it would never end)
        widest = 1 if n == 1 else min(skips + 1, max(length - 1, 0) // (n - 1))
        for distance in range(1, widest + 1):
            found = _occurrences(rows, tokens, distance, length)
            if found is not None:
                total = _op.add(total, _op.sum(_op.multiply(_op.expand_dims(found, 2), const(scatter)), axis=1))
    per_output = np.ones(size, np.float32)
    if weights is not None:
        per_output[np.array(indexes, np.int64)] = np.asarray(weights, np.float32)[:len(indexes)]
    w = const(per_output)
    if mode == "IDF":
        total = _op.where(_op.greater(total, const(np.float32(0))), _op.multiply(_op.ones_like(total), w),
                          _op.zeros_like(total))
    elif mode == "TFIDF":
        total = _op.multiply(total, w)
    return _op.reshape(total, (size,)) if len(shape) == 1 else total
