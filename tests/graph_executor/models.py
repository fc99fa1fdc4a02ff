"""Small models shared by the graph executor tests (independent numpy references where cheap)."""
import numpy as np

import relay_backend as relay


def primitive(params, body, **attrs):
    """A function marked Primitive=1 (what FuseOps makes), with extra attrs."""
    fn = relay.Function(params, body).with_attr("Primitive", 1)
    for key, value in attrs.items():
        fn = fn.with_attr(key, value)
    return fn


def abs_reshape_exp():
    """main(x: (2, 6)) = exp(reshape(abs(x), (3, 4))) as three primitives, the reshape marked
    relay.reshape_only (so the graph executor makes it a __nop sharing its input's storage)."""
    x = relay.var("x", shape=(2, 6))
    p = [relay.var("p0", shape=(2, 6)), relay.var("p0", shape=(2, 6)), relay.var("p0", shape=(3, 4))]
    a = relay.Call(primitive([p[0]], relay.abs(p[0])), [x])
    r = relay.Call(primitive([p[1]], relay.reshape(p[1], newshape=(3, 4)), **{"relay.reshape_only": 1}), [a])
    e = relay.Call(primitive([p[2]], relay.exp(p[2])), [r])
    return relay.IRModule.from_expr(relay.Function([x], e))


def mlp(batch=4, features=16, hidden=32, classes=10, seed=0):
    """dense+bias+relu, dense+bias, softmax; returns (mod, params, numpy forward)."""
    x = relay.var("x", shape=(batch, features))
    w1, b1 = relay.var("w1", shape=(hidden, features)), relay.var("b1", shape=(hidden,))
    w2, b2 = relay.var("w2", shape=(classes, hidden)), relay.var("b2", shape=(classes,))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w1), b1))
    y = relay.nn.softmax(relay.nn.bias_add(relay.nn.dense(y, w2), b2))
    mod = relay.IRModule.from_expr(relay.Function([x, w1, b1, w2, b2], y))
    rng = np.random.default_rng(seed)
    params = {"w1": rng.standard_normal((hidden, features)).astype("float32") / 4,
              "b1": rng.standard_normal(hidden).astype("float32"),
              "w2": rng.standard_normal((classes, hidden)).astype("float32") / 6,
              "b2": rng.standard_normal(classes).astype("float32")}

    def forward(data):
        p = {k: v.astype("float64") for k, v in params.items()}
        h = np.maximum(data.astype("float64") @ p["w1"].T + p["b1"], 0)
        z = h @ p["w2"].T + p["b2"]
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return mod, params, forward


def _conv_bn_relu(data, name, channels, relu=True):
    w = relay.var(f"{name}_weight", shape=(channels, channels, 3, 3))
    y = relay.nn.conv2d(data, w, channels=channels, kernel_size=(3, 3), padding=(1, 1))
    vec = [relay.var(f"{name}_{k}", shape=(channels,)) for k in ("gamma", "beta", "mean", "var")]
    bn = relay.nn.batch_norm(y, *vec)
    y = bn[0]
    return relay.nn.relu(y) if relu else y


def resnet_block(channels=8, size=8, seed=0):
    """A ResNet basic block: conv-bn-relu, conv-bn, + identity, relu; (mod, params)."""
    data = relay.var("data", shape=(1, channels, size, size))
    y = _conv_bn_relu(data, "c1", channels)
    y = _conv_bn_relu(y, "c2", channels, relu=False)
    out = relay.nn.relu(relay.add(y, data))
    func = relay.Function(relay.analysis.free_vars(out), out)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(func))
    rng = np.random.default_rng(seed)
    params = {}
    for p in mod["main"].params[1:]:
        shape = tuple(int(d) for d in p.checked_type.shape)
        if p.name_hint.endswith("_var"):
            params[p.name_hint] = rng.uniform(0.5, 1.5, shape).astype("float32")
        else:
            params[p.name_hint] = (rng.standard_normal(shape) * 0.3).astype("float32")
    return relay.IRModule.from_expr(func), params
