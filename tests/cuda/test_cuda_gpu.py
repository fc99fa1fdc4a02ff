"""On a real CUDA GPU (pycuda + a device; skipped elsewhere): the demo's models (MLP, seed CNN,
ResNet-18 at 32x32) through the graph executor and the VM on target "cuda", compared with the
llvm target's graph executor, with timings printed (`-s` shows them)."""
import time

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.runtime.cuda_driver import PyCudaBackend
from relay_backend.testing import mlp, resnet, seed_cnn

GPU_COUNT, WHY = PyCudaBackend().count()
pytestmark = [pytest.mark.cuda, pytest.mark.compile,
              pytest.mark.skipif(GPU_COUNT == 0, reason=f"needs a CUDA GPU and pycuda: {WHY}")]


def _models():
    rng = np.random.default_rng(1)
    mod, params = mlp.get_workload(batch_size=1, num_hidden=(512, 512))
    yield "mlp", mod, params, rng.standard_normal((1, 1, 28, 28)).astype("float32")
    mod, params = seed_cnn.get_workload()
    yield "seed_cnn", mod, params, rng.standard_normal((1, 3, 32, 32)).astype("float32")
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    yield "resnet18", mod, params, rng.standard_normal((1, 3, 32, 32)).astype("float32")


def _median_ms(fn, repeats=10):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


@pytest.mark.parametrize("name,mod,params,data", list(_models()), ids=lambda v: v if isinstance(v, str) else "")
def test_graph_and_vm_on_cuda_match_llvm(name, mod, params, data):
    cpu = relay.create_executor("graph", mod=mod, params=params, target="llvm").evaluate()
    want = cpu(data).numpy()
    timings = {"llvm graph": _median_ms(lambda: cpu(data))}
    for kind in ("graph", "vm"):
        run = relay.create_executor(kind, mod=mod, device=relay.cuda(0), target="cuda",
                                    params=params).evaluate()
        got = run(data)
        assert got.device == relay.cuda(0)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4 * max(1, np.abs(want).max()),
                                   err_msg=f"{name} on cuda ({kind})")
        timings[f"cuda {kind}"] = _median_ms(lambda: run(data))
    factory = relay.build(mod, target="cuda", params=params)
    gmod = relay.graph_executor.GraphModule(factory["default"](relay.cuda(0)))
    gmod.set_input("data", data)
    timings["cuda graph run() only"] = _median_ms(gmod.run)
    print(f"\n{name}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in timings.items()))
