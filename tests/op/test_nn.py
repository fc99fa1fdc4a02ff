"""Tests for relay_backend.op.nn: every sample of every nn op is checked twice — the type relation
against the reference's shape/dtype, and the reference against an independent numpy formulation
written here as plain loops/formulas (slow, tiny shapes). Then error messages, Any dims, and the
constructors' tvm.relay behaviour.

Tolerances (independent refs compute in float64): float16 1e-2, float32 1e-5, float64 1e-10
(relative and absolute); integers exact.
"""
import itertools
import math

import numpy as np
import pytest

from relay_backend.errors import AttrsError, OpNotImplemented, TypeInferenceError
from relay_backend.ir.expr import Call, Constant, TupleGetItem, TupleWrapper, var
from relay_backend.ir.types import Any, TensorType, TupleType
from relay_backend.op import get, list_ops
from relay_backend.op import nn

from .blocked_refs import (blocked_to_nchw, direct_conv_nchwc, direct_dense_pack, direct_depthwise_nchwc,
                           nchw_to_blocked)
from .nn_ext_independent import NN_EXT_INDEPENDENT

def attrs_of(name):
    return get(name).attrs_type


TOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-10}


# --- independent references (loops and formulas, float64) -------------------------------------------
def _f64(x):
    return np.asarray(x, dtype="float64")


def ind_conv2d(x, w, a):
    """Loops over NCHW / OIHW; other layouts are transposed in and out."""
    x = np.transpose(x, [a.data_layout.index(ch) for ch in "NCHW"])
    w = np.transpose(w, [a.kernel_layout.index(ch) for ch in "OIHW"])
    out = _ind_conv2d_nchw(x, w, a)
    return np.transpose(out, ["NCHW".index(ch) for ch in (a.out_layout or a.data_layout)])


def _ind_conv2d_nchw(x, w, a):
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    top, left, bottom, right = a.padding
    sh, sw = a.strides
    dh, dw = a.dilation
    oh = (h + top + bottom - (kh - 1) * dh - 1) // sh + 1
    ow = (wd + left + right - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    per_group_out = o // a.groups
    for b, oc, y, z in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // per_group_out
        acc = 0.0
        for ic, p, q in itertools.product(range(i), range(kh), range(kw)):
            row, col = y * sh + p * dh - top, z * sw + q * dw - left
            if 0 <= row < h and 0 <= col < wd:
                acc += float(x[b, g * i + ic, row, col]) * float(w[oc, ic, p, q])
        out[b, oc, y, z] = acc
    return out


def _pool_out(size, k, s, d, before, after, ceil_mode):
    span = (k - 1) * d + 1
    out = (math.ceil if ceil_mode else math.floor)((size + before + after - span) / s) + 1
    if ceil_mode and (out - 1) * s >= size + before:  # PyTorch: last window starts inside
        out -= 1
    return out


def ind_pool(x, a, kind):
    n, c, h, w = x.shape
    top, left, bottom, right = a.padding
    (kh, kw), (sh, sw), (dh, dw) = a.pool_size, a.strides, a.dilation
    oh = _pool_out(h, kh, sh, dh, top, bottom, a.ceil_mode)
    ow = _pool_out(w, kw, sw, dw, left, right, a.ceil_mode)
    out = np.zeros((n, c, oh, ow))
    for y, z in itertools.product(range(oh), range(ow)):
        rows = [y * sh - top + p * dh for p in range(kh)]
        cols = [z * sw - left + q * dw for q in range(kw)]
        inside = [(r, s) for r in rows for s in cols if 0 <= r < h and 0 <= s < w]
        vals = np.array([x[:, :, r, s] for r, s in inside], dtype="float64").reshape(len(inside), n, c)
        if kind == "max":
            out[:, :, y, z] = vals.max(axis=0) if inside else -np.inf
            continue
        if getattr(a, "count_include_pad", False):
            count = sum(1 for r in rows for s in cols if -top <= r < h + bottom and -left <= s < w + right)
        else:
            count = len(inside)
        out[:, :, y, z] = vals.sum(axis=0) / max(count, 1)
    return out


def ind_adaptive(x, a):
    n, c, h, w = x.shape
    size = a.output_size or (None, None)
    oh, ow = size[0] or h, size[1] or w
    out = np.zeros((n, c, oh, ow))
    for y, z in itertools.product(range(oh), range(ow)):
        r0, r1 = math.floor(y * h / oh), math.ceil((y + 1) * h / oh)
        c0, c1 = math.floor(z * w / ow), math.ceil((z + 1) * w / ow)
        out[:, :, y, z] = _f64(x[:, :, r0:r1, c0:c1]).mean(axis=(2, 3))
    return out


def _vec(v, axis, ndim):
    shape = [1] * ndim
    shape[axis % ndim] = -1
    return _f64(v).reshape(shape)


def ind_batch_norm(x, g, b, mean, var_, a):
    ax = a.axis
    out = (_f64(x) - _vec(mean, ax, x.ndim)) / np.sqrt(_vec(var_, ax, x.ndim) + a.epsilon)
    out = out * (_vec(g, ax, x.ndim) if a.scale else 1.0) + (_vec(b, ax, x.ndim) if a.center else 0.0)
    return out, _f64(mean), _f64(var_)


def ind_layer_norm(x, g, b, a):
    x = _f64(x)
    mu = x.mean(axis=a.axis, keepdims=True)
    sd = np.sqrt(x.var(axis=a.axis, keepdims=True) + a.epsilon)
    out = (x - mu) / sd
    return out * (_vec(g, a.axis, x.ndim) if a.scale else 1.0) + (_vec(b, a.axis, x.ndim) if a.center else 0.0)


def ind_lrn(x, a):
    x = np.moveaxis(_f64(x), a.axis, 0)
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        lo, hi = max(0, i - a.size // 2), min(x.shape[0], i - a.size // 2 + a.size)
        sq = (x[lo:hi] ** 2).sum(axis=0)
        out[i] = x[i] / (a.bias + a.alpha * sq / a.size) ** a.beta
    return np.moveaxis(out, 0, a.axis)


def ind_softmax(x, a):
    e = np.exp(_f64(x))
    return e / e.sum(axis=a.axis, keepdims=True)


def ind_pad(x, value, a):
    idx = []
    for d, (before, after) in zip(x.shape, a.pad_width):
        pos = np.arange(-before, d + after)
        if a.pad_mode == "edge":
            pos = np.clip(pos, 0, d - 1)
        elif a.pad_mode == "reflect":
            pos = np.abs(pos)
            pos = np.where(pos >= d, 2 * (d - 1) - pos, pos)
        idx.append(pos)
    if a.pad_mode == "constant":
        out = np.full([len(p) for p in idx], value, dtype=x.dtype)
        out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, a.pad_width))] = x
        return out
    return x[np.ix_(*idx)]


def ind_matmul(x, y, a):
    x, y = _f64(x), _f64(y)
    if a.transpose_a:
        x = np.swapaxes(x, -1, -2)
    return np.einsum("...mk,kn->...mn", x, y.T if a.transpose_b else y)


def ind_batch_matmul(x, y, a):
    x, y = _f64(x), _f64(y)
    x = np.swapaxes(x, 1, 2) if a.transpose_a else x
    y = np.swapaxes(y, 1, 2) if a.transpose_b else y
    b = max(x.shape[0], y.shape[0])
    return np.stack([x[i % x.shape[0]] @ y[i % y.shape[0]] for i in range(b)])


def ind_bias_like(x, v, a, fn):
    return fn(_f64(x), _vec(v, a.axis, x.ndim))


def in_layout(ind):
    """An NCHW independent reference applied through transposes (or, for a channel-blocked
    NCHW{b}c layout, channel-by-channel unblocking) for a pool's `layout`."""
    def run(x, a):
        if a.layout == "NCHW":
            return ind(x, a)
        if a.layout.endswith("c"):
            return nchw_to_blocked(ind(blocked_to_nchw(x), a), x.shape[-1])
        out = ind(np.transpose(x, [a.layout.index(c) for c in "NCHW"]), a)
        return np.transpose(out, ["NCHW".index(c) for c in a.layout])
    return run


INDEPENDENT = {
    "nn.dense": lambda x, w, a: np.einsum("...k,uk->...u", _f64(x), _f64(w)),
    "nn.matmul": ind_matmul,
    "nn.batch_matmul": ind_batch_matmul,
    "nn.conv2d": ind_conv2d,
    "nn.contrib_conv2d_NCHWc": lambda x, k, a: direct_conv_nchwc(x, k, a.strides, a.padding, a.dilation, a.groups),
    "nn.contrib_depthwise_conv2d_NCHWc": lambda x, k, a: direct_depthwise_nchwc(x, k, a.strides, a.padding,
                                                                              a.dilation),
    "nn.contrib_dense_pack": lambda x, w, a: direct_dense_pack(x, w),
    "nn.max_pool2d": in_layout(lambda x, a: ind_pool(x, a, "max")),
    "nn.avg_pool2d": in_layout(lambda x, a: ind_pool(x, a, "avg")),
    "nn.global_max_pool2d": in_layout(
        lambda x, a: np.max(_f64(x).reshape(x.shape[:2] + (-1,)), axis=2)[..., None, None]),
    "nn.global_avg_pool2d": in_layout(
        lambda x, a: np.mean(_f64(x).reshape(x.shape[:2] + (-1,)), axis=2)[..., None, None]),
    "nn.adaptive_avg_pool2d": in_layout(ind_adaptive),
    "nn.batch_norm": ind_batch_norm,
    "nn.layer_norm": ind_layer_norm,
    "nn.lrn": ind_lrn,
    "nn.softmax": ind_softmax,
    "nn.fast_softmax": ind_softmax,
    "nn.log_softmax": lambda x, a: np.log(ind_softmax(x, a)),
    "nn.bias_add": lambda x, b, a: ind_bias_like(x, b, a, lambda u, v: u + v),
    "nn.prelu": lambda x, al, a: ind_bias_like(x, al, a, lambda u, v: np.where(u > 0, u, u * v)),
    "nn.leaky_relu": lambda x, a: np.where(_f64(x) > 0, _f64(x), a.alpha * _f64(x)),
    "nn.relu": lambda x, a: np.where(x > 0, x, 0),
    "nn.batch_flatten": lambda x, a: np.array([x[i].ravel() for i in range(x.shape[0])]).reshape(x.shape[0], -1),
    "nn.pad": ind_pad,
    "nn.dropout": lambda x, a: (x, np.ones(x.shape)),
}
INDEPENDENT.update(NN_EXT_INDEPENDENT)   # the issue-20 nn ops (tests/op/nn_ext_independent.py)

NN_OPS = [op for op in list_ops() if op.name.startswith("nn.")]
CASES = [(op, i, s) for op in NN_OPS for i, s in enumerate(op.samples(np.random.default_rng(7)))]


def test_every_nn_op_has_an_independent_reference():
    assert sorted(INDEPENDENT) == sorted(op.name for op in NN_OPS)


@pytest.mark.parametrize("op,i,sample", CASES, ids=[f"{op.name}-{i}" for op, i, _ in CASES])
def test_rel_and_reference(op, i, sample):
    attrs = sample.attrs if sample.attrs is not None or op.attrs_type is None else op.attrs_type()
    arg_types = [TensorType(x.shape, x.dtype) for x in sample.inputs]
    out_type = op.rel(arg_types, attrs)
    got = op.ref(*sample.inputs, attrs)
    want = INDEPENDENT[op.name](*sample.inputs, attrs)
    if isinstance(out_type, TupleType):
        assert isinstance(got, tuple) and len(got) == len(out_type.fields)
        fields, got, want = out_type.fields, got, want
    else:
        fields, got, want = (out_type,), (got,), (want,)
    for t, g, w in zip(fields, got, want):
        assert g.shape == t.shape and str(g.dtype) == t.dtype, (t, g.shape, g.dtype)
        if g.dtype.kind == "f":
            tol = TOL[str(g.dtype)]
            np.testing.assert_allclose(g.astype("float64"), w, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(g, np.asarray(w).astype(g.dtype))


# --- known results -------------------------------------------------------------------------------------
def test_ceil_mode_drops_window_starting_in_trailing_padding():
    # PyTorch: MaxPool2d(2, 2, padding=1, ceil_mode=True) on 5x5 -> 3x3 (not 4x4).
    a = attrs_of("nn.max_pool2d")(pool_size=2, strides=2, padding=1, ceil_mode=True)
    assert get("nn.max_pool2d").rel([TensorType((1, 1, 5, 5))], a).shape == (1, 1, 3, 3)
    a = attrs_of("nn.max_pool2d")(pool_size=(3, 2), strides=2, ceil_mode=True)
    assert get("nn.max_pool2d").rel([TensorType((1, 1, 7, 7))], a).shape == (1, 1, 3, 4)


def test_avg_pool_values_by_hand():
    x = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    a = attrs_of("nn.avg_pool2d")(pool_size=2, strides=2, padding=1)
    got = get("nn.avg_pool2d").ref(x, a)
    # corner window covers only x[0,0]=0; next covers x[0,1:3] = (1+2)/2
    assert got[0, 0, 0, 0] == 0.0 and got[0, 0, 0, 1] == 1.5
    got = get("nn.avg_pool2d").ref(x, a.with_(count_include_pad=True))
    assert got[0, 0, 0, 1] == 0.75


def test_conv2d_reference_is_fast_enough_on_resnet_shape():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 64, 56, 56)).astype("float32")
    w = rng.standard_normal((64, 64, 3, 3)).astype("float32")
    out = get("nn.conv2d").ref(x, w, attrs_of("nn.conv2d")(padding=1))
    # spot-check one output pixel against a direct sum
    want = (x[0, :, 9:12, 19:22] * w[5]).sum()
    np.testing.assert_allclose(out[0, 5, 10, 20], want, rtol=1e-4, atol=1e-3)


# --- errors ----------------------------------------------------------------------------------------------
def test_dense_feature_mismatch_message():
    with pytest.raises(TypeInferenceError) as err:
        get("nn.dense").rel([TensorType((1, 4)), TensorType((16, 8))], attrs_of("nn.dense")())
    assert str(err.value) == ("nn.dense: input has 4 features but weight expects 8 "
                              "(data: Tensor[(1, 4), float32], weight: Tensor[(16, 8), float32])")


def test_conv2d_errors():
    rel, A = get("nn.conv2d").rel, attrs_of("nn.conv2d")
    with pytest.raises(TypeInferenceError, match=r"data has 3 input channels but weight expects 4.*data: Tensor"):
        rel([TensorType((1, 3, 8, 8)), TensorType((8, 4, 3, 3))], A())
    with pytest.raises(TypeInferenceError, match="groups=2 does not divide the 3 input channels"):
        rel([TensorType((1, 3, 8, 8)), TensorType((8, 1, 3, 3))], A(groups=2))
    with pytest.raises(TypeInferenceError, match="larger than the padded input"):
        rel([TensorType((1, 3, 2, 2)), TensorType((8, 3, 3, 3))], A())
    with pytest.raises(TypeInferenceError, match="same dtype"):
        rel([TensorType((1, 3, 8, 8)), TensorType((8, 3, 3, 3), "float16")], A())
    with pytest.raises(AttrsError, match="padding.*1, 2 or 4 values"):
        A(padding=(1, 2, 3))
    with pytest.raises(AttrsError, match="padding.*non-negative"):
        A(padding=-1)
    with pytest.raises(AttrsError, match="strides"):
        A(strides=(0, 1))
    with pytest.raises(OpNotImplemented, match="data_layout='NCHW4c'"):
        nn.conv2d(var("x"), var("w"), data_layout="NCHW4c")
    with pytest.raises(OpNotImplemented, match="kernel_layout='OIHWX'"):
        nn.conv2d(var("x"), var("w"), kernel_layout="OIHWX")


def test_other_errors():
    T = TensorType
    with pytest.raises(TypeInferenceError, match=r"gamma must have shape \(3,\)"):
        get("nn.batch_norm").rel([T((2, 3)), T((4,)), T((3,)), T((3,)), T((3,))], attrs_of("nn.batch_norm")())
    with pytest.raises(TypeInferenceError, match="pad_width has 1 .* rank 2"):
        get("nn.pad").rel([T((2, 3)), T(())], attrs_of("nn.pad")(((1, 1),)))
    with pytest.raises(TypeInferenceError, match="reflect padding"):
        get("nn.pad").rel([T((2, 3)), T(())], attrs_of("nn.pad")(((2, 0), (0, 0)), "reflect"))
    with pytest.raises(AttrsError, match="pad_mode"):
        attrs_of("nn.pad")(((1, 1),), "wrap")
    with pytest.raises(TypeInferenceError, match="batch dimensions 2 and 3"):
        get("nn.batch_matmul").rel([T((2, 3, 4)), T((3, 5, 4))], attrs_of("nn.batch_matmul")())
    with pytest.raises(TypeInferenceError, match="axis 2 is out of range"):
        get("nn.softmax").rel([T((2, 3))], attrs_of("nn.softmax")(2))
    with pytest.raises(AttrsError, match="rate"):
        nn.dropout(var("x"), rate=1.5)
    with pytest.raises(OpNotImplemented, match="layout='CHWN'"):
        nn.max_pool2d(var("x"), layout="CHWN")
    with pytest.raises(OpNotImplemented, match="out_layout='NCHW'"):
        nn.max_pool2d(var("x"), layout="NHWC", out_layout="NCHW")


# --- Any dims -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op,arg_types,attrs,expected", [
    (get("nn.dense"), [TensorType((Any(), 8)), TensorType((16, 8))], attrs_of("nn.dense")(), (Any(), 16)),
    (get("nn.conv2d"), [TensorType((Any(), 3, 8, 8)), TensorType((4, 3, 3, 3))], attrs_of("nn.conv2d")(padding=1),
     (Any(), 4, 8, 8)),
    (get("nn.conv2d"), [TensorType((1, 3, Any(), 8)), TensorType((4, 3, 3, 3))], attrs_of("nn.conv2d")(strides=2),
     (1, 4, Any(), 3)),
    (get("nn.max_pool2d"), [TensorType((Any(), 2, 6, 6))], attrs_of("nn.max_pool2d")(2, 2), (Any(), 2, 3, 3)),
    (get("nn.global_avg_pool2d"), [TensorType((Any(), 2, 6, 6))], attrs_of("nn.global_avg_pool2d")(), (Any(), 2, 1, 1)),
    (get("nn.batch_flatten"), [TensorType((Any(), 2, 3))], None, (Any(), 6)),
    (get("nn.batch_flatten"), [TensorType((2, Any(), 3))], None, (2, Any())),
    (get("nn.batch_matmul"), [TensorType((Any(), 2, 4)), TensorType((1, 3, 4))], attrs_of("nn.batch_matmul")(),
     (Any(), 2, 3)),
    (get("nn.bias_add"), [TensorType((Any(), 3)), TensorType((3,))], attrs_of("nn.bias_add")(), (Any(), 3)),
])
def test_any_batch_dims(op, arg_types, attrs, expected):
    assert op.rel(arg_types, attrs).shape == expected


# --- constructors ----------------------------------------------------------------------------------------
def test_constructors_follow_tvm_relay():
    x, w = var("x"), var("w")
    assert nn.relu(x).op.name == "nn.relu"
    out = nn.dropout(x)
    assert isinstance(out, TupleGetItem) and out.index == 0 and out.tuple_value.op.name == "nn.dropout"
    bn = nn.batch_norm(x, w, w, w, w)
    assert isinstance(bn, TupleWrapper) and len(bn) == 3 and bn.astuple().op.name == "nn.batch_norm"
    assert nn.matmul(x, w, transpose_b=True).op.name == "nn.dense"
    assert nn.matmul(x, w).op.name == "nn.matmul"
    p = nn.pad(x, ((1, 1), (2, 2)), pad_value=3.0)
    assert isinstance(p.args[1], Constant) and p.attrs.pad_width == ((1, 1), (2, 2))
    c = nn.conv2d(x, w, padding=1, strides=2, kernel_size=3)
    assert isinstance(c, Call) and c.attrs.padding == (1, 1, 1, 1) and c.attrs.strides == (2, 2)
    assert c.attrs.kernel_size == (3, 3) and nn.conv2d(x, w, padding=(1, 2)).attrs.padding == (1, 2, 1, 2)
    assert hash(c.attrs) == hash(nn.conv2d(x, w, padding=(1, 1, 1, 1), strides=(2, 2), kernel_size=(3, 3)).attrs)
    assert nn.adaptive_avg_pool2d(x, 7).attrs.output_size == (7, 7)
    assert nn.avg_pool2d(x, 3, count_include_pad=True).attrs.pool_size == (3, 3)
