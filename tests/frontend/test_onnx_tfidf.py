"""TfIdfVectorizer over integer tokens (converters/tfidf.py) against onnxruntime (exact counts;
weighted outputs rtol 1e-6), on the debug interpreter and the graph executor: every mode, with
and without weights, 1- to 3-grams, skips, batched and 1-D input.

Node tests it makes pass: test_tfidfvectorizer_* (7)."""
import numpy as np
import pytest
from onnx import helper

from relay_backend.errors import OpNotImplemented

from .conftest import assert_close, make_model, raises_relay_error, run_ort, run_relay

POOL = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 1, 2, 3, 4, 5, 6]   # 4 unigrams, 3 bigrams, 2 trigrams (+ 0 left over)
COUNTS = [0, 4, 10]
INDEXES = [0, 4, 1, 6, 2, 3, 5, 7, 8]


def _model(shape, dtype, **attrs):
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], pool_int64s=POOL, ngram_counts=COUNTS,
                            ngram_indexes=INDEXES, **attrs)
    return make_model([node], [("x", dtype, list(shape))], [("y", "float32", None)], opset=11)


CASES = [  # (shape, dtype, mode, weights, min_gram_length, max_gram_length, max_skip_count)
    ((2, 14), "int32", "TF", None, 1, 1, 0), ((20,), "int64", "TF", None, 2, 2, 0),
    ((2, 14), "int32", "TF", None, 1, 2, 3), ((20,), "int64", "TF", None, 2, 3, 2),
    ((2, 14), "int64", "TF", None, 1, 3, 5), ((20,), "int32", "IDF", None, 1, 3, 5),
    ((2, 14), "int32", "IDF", True, 1, 2, 3), ((20,), "int64", "TFIDF", True, 1, 3, 5),
    ((2, 14), "int64", "TFIDF", None, 2, 3, 2),
]


@pytest.mark.parametrize("executor", ["debug", "graph"])
@pytest.mark.parametrize("shape,dtype,mode,weights,low,high,skip", CASES)
def test_tfidf_vectorizer(executor, shape, dtype, mode, weights, low, high, skip):
    attrs = {"mode": mode, "min_gram_length": low, "max_gram_length": high, "max_skip_count": skip}
    if weights:
        attrs["weights"] = [0.5 + k for k in range(9)]
    x = np.random.default_rng(low * 10 + skip).integers(1, 9, shape).astype(dtype)
    model = _model(shape, dtype, **attrs)
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}), rtol=1e-6, atol=0)


def test_tfidf_vectorizer_refuses_a_string_pool():
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], pool_strings=["a", "b"], ngram_counts=[0],
                            ngram_indexes=[0, 1], mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0)
    model = make_model([node], [("x", "int32", [4])], [("y", "float32", None)], opset=11)
    raises_relay_error(model, "pool of strings is not supported", OpNotImplemented)


def test_a_huge_max_skip_count_counts_what_the_longest_skip_finds():
    """max_skip_count may be any int64: skips wider than the input find nothing, so 2**40 counts
    the same as the widest skip that fits (the converter once looped up to max_skip_count)."""
    x = np.random.default_rng(5).integers(1, 9, (2, 14)).astype("int64")
    attrs = {"mode": "TF", "min_gram_length": 1, "max_gram_length": 3}
    huge = _model((2, 14), "int64", max_skip_count=2 ** 40, **attrs)
    fits = _model((2, 14), "int64", max_skip_count=13, **attrs)
    assert_close(run_relay(huge, {"x": x}, "debug"), run_ort(fits, {"x": x}), rtol=1e-6, atol=0)


def test_an_output_too_large_for_memory_is_a_clear_error():
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], pool_int64s=[1, 2], ngram_counts=[0],
                            ngram_indexes=[0, 2 ** 40], mode="TF", min_gram_length=1, max_gram_length=1,
                            max_skip_count=0)
    model = make_model([node], [("x", "int64", [4])], [("y", "float32", None)], opset=11)
    raises_relay_error(model, "ngram_indexes", MemoryError)
