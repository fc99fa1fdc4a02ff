"""ONNX graphs of real CNN architectures with random weights, built with onnx.helper.

ResNet-50, SqueezeNet 1.1, DenseNet-121, Inception v1 (GoogLeNet), ShuffleNet v2 (x0.5), and
VGG-11 / AlexNet-style nets: the real layer structure and channel widths, at any input size
the architecture allows (small ones keep tests fast); plus the small benchmark workloads (MLP
784-512-512-10, the seed CNN, a ResNet basic block) in SMALL_MODELS. Weights are He-scaled normals, BN
statistics near identity, so activations stay O(1) through 50+ layers. Each builder returns
(onnx.ModelProto, input_shape). The flatten at the head is written the way torch exports it
(Shape -> Gather -> Unsqueeze -> Concat -> Reshape) in some nets, to exercise shape folding.
"""
import numpy as np

OPSET = 13


class OnnxNet:
    """Accumulates nodes and initializers; each layer method returns its output's name."""

    def __init__(self, name: str, seed: int = 0):
        self.name, self.rng = name, np.random.default_rng(seed)
        self.nodes, self.inits, self._n = [], [], 0

    def _id(self, kind):
        self._n += 1
        return f"{kind}{self._n}"

    def weight(self, shape, scale=None, kind="w"):
        from onnx import numpy_helper
        name = self._id(kind)
        if scale is None:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            scale = np.sqrt(2.0 / fan_in)
        arr = (self.rng.standard_normal(shape) * scale).astype("float32")
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def tensor(self, arr, kind="c"):
        from onnx import numpy_helper
        name = self._id(kind)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, inputs, n_out=1, **attrs):
        from onnx import helper
        outs = [self._id(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=outs[0], **attrs))
        return outs[0] if n_out == 1 else outs

    # --- layers --------------------------------------------------------------------------------
    def conv(self, x, cin, cout, k, stride=1, pad=0, group=1, bias=True, gain=1.0):
        kh, kw = (k, k) if isinstance(k, int) else k
        ph, pw = (pad, pad) if isinstance(pad, int) else pad
        shape = (cout, cin // group, kh, kw)
        ins = [x, self.weight(shape, scale=gain * np.sqrt(2.0 / int(np.prod(shape[1:]))))]
        if bias:
            ins.append(self.weight((cout,), scale=0.05, kind="b"))
        return self.node("Conv", ins, kernel_shape=[kh, kw], strides=[stride, stride],
                         pads=[ph, pw, ph, pw], group=group)

    def bn(self, x, c):
        r = self.rng
        gamma = self.tensor(r.uniform(0.5, 1.5, c).astype("float32"), "gamma")
        beta = self.tensor((r.standard_normal(c) * 0.1).astype("float32"), "beta")
        mean = self.tensor((r.standard_normal(c) * 0.1).astype("float32"), "mean")
        var = self.tensor(r.uniform(0.5, 1.5, c).astype("float32"), "var")
        return self.node("BatchNormalization", [x, gamma, beta, mean, var], epsilon=1e-5)

    def conv_bn_relu(self, x, cin, cout, k, stride=1, pad=0, group=1, relu=True, gain=1.0):
        """gain < 1 on a residual branch's last conv keeps sums of branches from growing
        geometrically with depth (the role zero-init / fixup scaling plays in real training)."""
        y = self.bn(self.conv(x, cin, cout, k, stride, pad, group, bias=False, gain=gain), cout)
        return self.relu(y) if relu else y

    def relu(self, x):
        return self.node("Relu", [x])

    def maxpool(self, x, k, stride, pad=0, ceil=False):
        return self.node("MaxPool", [x], kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4,
                         ceil_mode=int(ceil))

    def avgpool(self, x, k, stride, pad=0):
        return self.node("AveragePool", [x], kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)

    def gap(self, x):
        return self.node("GlobalAveragePool", [x])

    def flatten(self, x):
        return self.node("Flatten", [x], axis=1)

    def torch_flatten(self, x):
        """x.view(x.size(0), -1) as torch.onnx exports it: a shape subgraph feeding Reshape."""
        shape = self.node("Shape", [x])
        batch = self.node("Gather", [shape, self.tensor(np.array(0, "int64"))], axis=0)
        batch = self.node("Unsqueeze", [batch, self.tensor(np.array([0], "int64"))])
        target = self.node("Concat", [batch, self.tensor(np.array([-1], "int64"))], axis=0)
        return self.node("Reshape", [x, target])

    def gemm(self, x, cin, cout):
        return self.node("Gemm", [x, self.weight((cout, cin)), self.weight((cout,), scale=0.05, kind="b")],
                         transB=1)

    def model(self, x_shape, out, out_shape, x="data"):
        from onnx import TensorProto, helper
        graph = helper.make_graph(self.nodes, self.name, [helper.make_tensor_value_info(x, TensorProto.FLOAT, x_shape)],
                                  [helper.make_tensor_value_info(out, TensorProto.FLOAT, list(out_shape))], initializer=self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="relay_backend")
        m.ir_version = 8
        return m, tuple(x_shape)


# --- architectures ---------------------------------------------------------------------------------
RESIDUAL_GAIN = 0.25    # ResNet-50 bottleneck branches: logits O(1-10), not ~1e4, at 224x224
LINEAR_GAIN = float(np.sqrt(0.5))   # a conv reading a non-relu'd input (He's sqrt(2) assumes relu)


def resnet50(image=64, batch=1, num_classes=1000, seed=0):
    n = OnnxNet("resnet50", seed)
    x = n.maxpool(n.conv_bn_relu("data", 3, 64, 7, 2, 3), 3, 2, 1)
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            s = stride if i == 0 else 1
            y = n.conv_bn_relu(x, cin, width, 1)
            y = n.conv_bn_relu(y, width, width, 3, s, 1)
            y = n.conv_bn_relu(y, width, width * 4, 1, relu=False, gain=RESIDUAL_GAIN)
            short = n.conv_bn_relu(x, cin, width * 4, 1, s, relu=False) if i == 0 else x
            x = n.relu(n.node("Add", [y, short]))
            cin = width * 4
    out = n.gemm(n.flatten(n.gap(x)), 2048, num_classes)
    return n.model([batch, 3, image, image], out, (batch, num_classes))


def squeezenet(image=64, batch=1, num_classes=1000, seed=0):
    """SqueezeNet 1.1."""
    n = OnnxNet("squeezenet1_1", seed)
    x = n.maxpool(n.relu(n.conv("data", 3, 64, 3, 2)), 3, 2, ceil=True)
    cin = 64

    def fire(x, cin, sq, ex):
        s = n.relu(n.conv(x, cin, sq, 1))
        return n.node("Concat", [n.relu(n.conv(s, sq, ex, 1)), n.relu(n.conv(s, sq, ex, 3, pad=1))], axis=1)
    for i, (sq, ex) in enumerate(((16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192),
                                  (64, 256), (64, 256))):
        x = fire(x, cin, sq, ex)
        cin = 2 * ex
        if i in (1, 3):
            x = n.maxpool(x, 3, 2, ceil=True)
    x = n.node("Dropout", [x])
    x = n.gap(n.relu(n.conv(x, cin, num_classes, 1)))
    return n.model([batch, 3, image, image], n.torch_flatten(x), (batch, num_classes))


def densenet121(image=64, batch=1, num_classes=1000, seed=0, blocks=(6, 12, 24, 16)):
    n = OnnxNet("densenet121", seed)
    x = n.maxpool(n.conv_bn_relu("data", 3, 64, 7, 2, 3), 3, 2, 1)
    c, growth = 64, 32
    for bi, layers in enumerate(blocks):
        feats = [x]
        for _ in range(layers):
            inp = feats[0] if len(feats) == 1 else n.node("Concat", feats, axis=1)
            y = n.conv(n.relu(n.bn(inp, c + growth * (len(feats) - 1))), c + growth * (len(feats) - 1),
                       4 * growth, 1, bias=False)
            y = n.conv(n.relu(n.bn(y, 4 * growth)), 4 * growth, growth, 3, pad=1, bias=False)
            feats.append(y)
        x = n.node("Concat", feats, axis=1)
        c += growth * layers
        if bi != len(blocks) - 1:
            x = n.avgpool(n.conv(n.relu(n.bn(x, c)), c, c // 2, 1, bias=False), 2, 2)
            c //= 2
    x = n.relu(n.bn(x, c))
    return n.model([batch, 3, image, image], n.gemm(n.flatten(n.gap(x)), c, num_classes), (batch, num_classes))


def inception_v1(image=64, batch=1, num_classes=1000, seed=0):
    """GoogLeNet (Inception v1) with its LRN layers, ceil-mode pools and 9 inception modules."""
    n = OnnxNet("inception_v1", seed)
    lrn = lambda x: n.node("LRN", [x], size=5, alpha=1e-4, beta=0.75, bias=1.0)  # noqa: E731
    x = n.maxpool(n.relu(n.conv("data", 3, 64, 7, 2, 3)), 3, 2, ceil=True)
    x = lrn(x)
    x = n.relu(n.conv(x, 64, 64, 1))
    x = lrn(n.relu(n.conv(x, 64, 192, 3, pad=1)))
    x = n.maxpool(x, 3, 2, ceil=True)

    def inception(x, cin, c1, c3r, c3, c5r, c5, pp):
        b1 = n.relu(n.conv(x, cin, c1, 1))
        b2 = n.relu(n.conv(n.relu(n.conv(x, cin, c3r, 1)), c3r, c3, 3, pad=1))
        b3 = n.relu(n.conv(n.relu(n.conv(x, cin, c5r, 1)), c5r, c5, 5, pad=2))
        b4 = n.relu(n.conv(n.maxpool(x, 3, 1, 1), cin, pp, 1))
        return n.node("Concat", [b1, b2, b3, b4], axis=1), c1 + c3 + c5 + pp
    cfg = [(64, 96, 128, 16, 32, 32), (128, 128, 192, 32, 96, 64), "pool", (192, 96, 208, 16, 48, 64),
           (160, 112, 224, 24, 64, 64), (128, 128, 256, 24, 64, 64), (112, 144, 288, 32, 64, 64),
           (256, 160, 320, 32, 128, 128), "pool", (256, 160, 320, 32, 128, 128), (384, 192, 384, 48, 128, 128)]
    c = 192
    for item in cfg:
        if item == "pool":
            x = n.maxpool(x, 3, 2, ceil=True)
        else:
            x, c = inception(x, c, *item)
    x = n.node("Dropout", [n.flatten(n.gap(x))])
    out = n.node("Softmax", [n.gemm(x, c, num_classes)], axis=1)
    return n.model([batch, 3, image, image], out, (batch, num_classes))


def shufflenet_v2(image=64, batch=1, num_classes=1000, seed=0, channels=(24, 48, 96, 192, 1024)):
    """ShuffleNet v2 x0.5: channel split (Split), depthwise convs, channel shuffle
    (Reshape -> Transpose -> Reshape)."""
    n = OnnxNet("shufflenet_v2_x0_5", seed)
    x = n.maxpool(n.conv_bn_relu("data", 3, channels[0], 3, 2, 1), 3, 2, 1)
    size = image // 4

    def shuffle(x, c, hw):
        y = n.node("Reshape", [x, n.tensor(np.array([batch, 2, c // 2, hw, hw], "int64"))])
        y = n.node("Transpose", [y], perm=[0, 2, 1, 3, 4])
        return n.node("Reshape", [y, n.tensor(np.array([batch, c, hw, hw], "int64"))])

    cin = channels[0]
    for cout, repeats in zip(channels[1:4], (4, 8, 4)):
        half = cout // 2
        for i in range(repeats):
            if i == 0:
                size = (size + 1) // 2
                b1 = n.conv_bn_relu(n.conv_bn_relu(x, cin, cin, 3, 2, 1, group=cin, relu=False), cin, half, 1,
                                    gain=LINEAR_GAIN)
                b2 = n.conv_bn_relu(x, cin, half, 1)
                b2 = n.conv_bn_relu(b2, half, half, 3, 2, 1, group=half, relu=False)
                b2 = n.conv_bn_relu(b2, half, half, 1, gain=LINEAR_GAIN)
            else:
                b1, b2 = n.node("Split", [x, n.tensor(np.array([half, half], "int64"))], n_out=2, axis=1)
                b2 = n.conv_bn_relu(b2, half, half, 1)
                b2 = n.conv_bn_relu(b2, half, half, 3, 1, 1, group=half, relu=False)
                b2 = n.conv_bn_relu(b2, half, half, 1, gain=LINEAR_GAIN)
            x = shuffle(n.node("Concat", [b1, b2], axis=1), cout, size)
            cin = cout
    x = n.conv_bn_relu(x, cin, channels[4], 1)
    x = n.node("ReduceMean", [x], axes=[2, 3], keepdims=0)
    return n.model([batch, 3, image, image], n.gemm(x, channels[4], num_classes), (batch, num_classes))


def vgg11(image=32, batch=1, num_classes=10, seed=0, width=1.0, hidden=4096):
    """VGG-11 with batch norm (conv widths scaled by `width`), classifier of two hidden layers."""
    n = OnnxNet("vgg11_bn", seed)
    x, cin = "data", 3
    for v in (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"):
        if v == "M":
            x = n.maxpool(x, 2, 2)
        else:
            c = max(8, int(v * width))
            x, cin = n.conv_bn_relu(x, cin, c, 3, 1, 1), c
    flat = cin * (image // 32) ** 2
    x = n.torch_flatten(x)
    x = n.node("Dropout", [n.relu(n.gemm(x, flat, hidden))])
    x = n.node("Dropout", [n.relu(n.gemm(x, hidden, hidden))])
    return n.model([batch, 3, image, image], n.gemm(x, hidden, num_classes), (batch, num_classes))


def alexnet(image=95, batch=1, num_classes=1000, seed=0, hidden=4096):
    """AlexNet (the torchvision layout plus the original's LRN after the first two convs)."""
    n = OnnxNet("alexnet", seed)
    lrn = lambda x: n.node("LRN", [x], size=5, alpha=1e-4, beta=0.75, bias=2.0)  # noqa: E731
    x = n.maxpool(lrn(n.relu(n.conv("data", 3, 64, 11, 4, 2))), 3, 2)
    x = n.maxpool(lrn(n.relu(n.conv(x, 64, 192, 5, 1, 2))), 3, 2)
    x = n.relu(n.conv(x, 192, 384, 3, 1, 1))
    x = n.relu(n.conv(x, 384, 256, 3, 1, 1))
    x = n.maxpool(n.relu(n.conv(x, 256, 256, 3, 1, 1)), 3, 2)
    side = _alexnet_side(image)
    x = n.flatten(x)
    x = n.relu(n.gemm(n.node("Dropout", [x]), 256 * side * side, hidden))
    x = n.relu(n.gemm(n.node("Dropout", [x]), hidden, hidden))
    return n.model([batch, 3, image, image], n.gemm(x, hidden, num_classes), (batch, num_classes))


def _alexnet_side(image):
    s = (image + 4 - 11) // 4 + 1
    s = (s - 3) // 2 + 1
    s = (s - 3) // 2 + 1
    return (s - 3) // 2 + 1


# --- small workloads (the benchmark set of the executor issues) ------------------------------------
def mlp(batch=1, image=28, hidden=(512, 512), num_classes=10, seed=0):
    """MLP 784-512-512-10: Flatten, then Gemm + Relu per hidden layer, then a Gemm."""
    n = OnnxNet("mlp", seed)
    x, cin = n.flatten("data"), image * image
    for width in hidden:
        x, cin = n.relu(n.gemm(x, cin, width)), width
    return n.model([batch, 1, image, image], n.gemm(x, cin, num_classes), (batch, num_classes))


def seed_cnn(batch=1, image=32, channels=16, num_classes=10, seed=0):
    """The seed CNN (testing/seed_cnn.py): conv 3->channels k3 pad1 (no bias), relu, global avg
    pool, flatten, dense with bias."""
    n = OnnxNet("seed_cnn", seed)
    x = n.gap(n.relu(n.conv("data", 3, channels, 3, pad=1, bias=False)))
    return n.model([batch, 3, image, image], n.gemm(n.flatten(x), channels, num_classes), (batch, num_classes))


def resnet_block(batch=1, channels=64, image=56, seed=0):
    """A ResNet basic block: conv3x3-bn-relu, conv3x3-bn, + identity, relu (same shape out)."""
    n = OnnxNet("resnet_block", seed)
    y = n.conv_bn_relu("data", channels, channels, 3, 1, 1)
    y = n.conv_bn_relu(y, channels, channels, 3, 1, 1, relu=False)
    shape = [batch, channels, image, image]
    return n.model(shape, n.relu(n.node("Add", [y, "data"])), shape)


MODELS = {"resnet50": resnet50, "squeezenet": squeezenet, "densenet121": densenet121,
          "inception_v1": inception_v1, "shufflenet_v2": shufflenet_v2, "vgg11": vgg11, "alexnet": alexnet}

SMALL_MODELS = {"mlp": mlp, "seed_cnn": seed_cnn, "resnet_block": resnet_block}

__all__ = ["OnnxNet", "MODELS", "SMALL_MODELS"] + list(MODELS) + list(SMALL_MODELS)
