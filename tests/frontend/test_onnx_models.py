"""Real architectures (relay_backend.testing.onnx_models, random weights) imported from ONNX and
run through the debug interpreter and every available compiled executor (AOT on the small
variants, marked slow), compared with onnxruntime. Tolerance: |out - ref| <= 1e-4 * max|ref|
(float32 accumulation over deep nets)."""
import numpy as np
import pytest

from .conftest import available_executors, run_ort

from relay_backend.testing import onnx_models as M  # noqa: E402

SMALL = {  # name -> builder kwargs (small inputs the architecture allows)
    "resnet50": dict(image=64), "squeezenet": dict(image=64), "densenet121": dict(image=64),
    "inception_v1": dict(image=64), "shufflenet_v2": dict(image=64), "vgg11": dict(image=32),
    "alexnet": dict(image=95)}
FULL = {"resnet50": 224, "squeezenet": 224, "densenet121": 224, "inception_v1": 224, "shufflenet_v2": 224,
        "vgg11": 224, "alexnet": 224}


def _check(name, kind, **kw):
    import relay_backend as relay
    model, shape = M.MODELS[name](**kw)
    x = np.random.default_rng(7).standard_normal(shape).astype("float32")
    ref = run_ort(model, {"data": x})[0]
    mod, params = relay.frontend.from_onnx(model)
    out = relay.create_executor(kind, mod=mod, params=params or None).evaluate()(x).numpy()
    assert out.shape == ref.shape
    err = np.abs(out - ref).max()
    assert err <= 1e-4 * np.abs(ref).max(), f"{name} on {kind}: max error {err} vs max|ref| {np.abs(ref).max()}"


# (model, executor) pairs in the default suite; the rest are model-level: `-m slow`
DEFAULT_SUITE = {("squeezenet", "graph"), ("shufflenet_v2", "vm")}


def _cases():
    for name in SMALL:
        for kind in available_executors():
            marks = [] if (name, kind) in DEFAULT_SUITE else [pytest.mark.slow]
            yield pytest.param(name, kind, marks=marks, id=f"{name}-{kind}")


@pytest.mark.parametrize("name,kind", list(_cases()))
def test_small(name, kind):
    _check(name, kind, **SMALL[name])


# AOT compiles one C program with the system compiler: the small variants whose compile stays well
# under a minute (AlexNet/VGG with a narrow classifier: a 4096-wide one takes 2-3 minutes of cc).
AOT_SMALL = {"squeezenet": SMALL["squeezenet"], "shufflenet_v2": SMALL["shufflenet_v2"],
             "alexnet": dict(image=95, hidden=256), "vgg11": dict(image=32, width=0.25, hidden=256)}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(AOT_SMALL))
def test_small_aot(name):
    import shutil
    if shutil.which("cc") is None:
        pytest.skip("no system C compiler (cc) for the AOT executor")
    _check(name, "aot", **AOT_SMALL[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FULL))
@pytest.mark.parametrize("kind", available_executors())
def test_full_size(name, kind):
    kw = dict(image=FULL[name])
    if name == "vgg11":
        kw.update(num_classes=1000)
    _check(name, kind, **kw)


def test_shape_subgraph_folds_to_constants():
    """SqueezeNet's torch-style flatten (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) folds:
    the imported main has no shape computation left, just a reshape with a constant newshape."""
    import relay_backend as relay
    model, _ = M.squeezenet(image=64)
    assert {"Shape", "Gather", "Concat"} <= {n.op_type for n in model.graph.node}
    mod, _ = relay.frontend.from_onnx(model)
    text = mod.astext()
    last = text.strip().splitlines()[-2].strip()
    assert "take(" not in text, "the Gather of the shape subgraph was not folded"
    assert last.startswith("reshape(") and "newshape=[1, -1]" in last, last


def test_unfrozen_params_become_main_parameters():
    import relay_backend as relay
    model, shape = M.alexnet(image=95, hidden=64)
    mod, params = relay.frontend.from_onnx(model, freeze_params=False)
    names = [p.name_hint for p in mod["main"].params]
    assert names[0] == "data" and set(names[1:]) == set(params) and len(params) == len(model.graph.initializer)
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    out = relay.create_executor("debug", mod=mod, params=params).evaluate()(x).numpy()
    ref = run_ort(model, {"data": x})[0]
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
