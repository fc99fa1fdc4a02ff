"""The main job: build real models, run each through all four executors, and print how far every
compiled executor is from the reference interpreter, with latencies and compile times.

    python -m relay_backend.demo            # MLP, seed CNN, ResNet-18 (32x32), ONNX ResNet-50 (224x224)
    python -m relay_backend.demo --quick    # the first three, fewer timing repeats (CI)

The interpreter ("debug") runs every op's numpy reference and is itself checked against an
independent numpy forward pass where one exists (MLP, seed CNN, ResNet), and the ONNX
ResNet-50 against onnxruntime when it is installed.
"""
import argparse
import statistics
import sys
import time

import numpy as np

from . import build_module
from .progress import build_progress
from .testing import mlp, resnet, seed_cnn

EXECUTORS = ("debug", "graph", "vm", "aot")
TOLERANCE = 1e-4  # relative to the output's largest magnitude


def _median_ms(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def run_model(name, mod, params, inputs, numpy_reference, repeats, reference_label="vs numpy forward"):
    """Rows (model, executor, max |diff| vs the interpreter, median ms, compile s, status).
    `numpy_reference` (an independent forward pass, or onnxruntime's output: say which in
    `reference_label`) checks the interpreter; compile s is build + evaluate() alone, without
    the first call."""
    rows, reference = [], None
    for kind in EXECUTORS:
        with build_progress(f"{name} [{kind}]"):      # a bar on a terminal; quiet in logs
            start = time.perf_counter()
            func = build_module.create_executor(kind, mod=mod, params=params).evaluate()
            compile_s = time.perf_counter() - start
            out = func(**inputs).numpy().astype("float64")
        if kind == "debug":
            reference = out
            expected = numpy_reference if numpy_reference is not None else out
            label = reference_label if numpy_reference is not None else "reference"
        else:
            expected, label = reference, "vs interpreter"
        diff = float(np.max(np.abs(out - expected)))
        ok = diff <= TOLERANCE * max(1.0, float(np.max(np.abs(expected))))
        ms = _median_ms(lambda: func(**inputs), repeats)
        rows.append((name, kind, diff, label, ms, compile_s, "ok" if ok else "MISMATCH"))
    return rows


def _workloads(quick: bool):
    rng = np.random.default_rng(1)
    mod, params = mlp.get_workload(batch_size=1, num_hidden=(512, 512))
    data = rng.standard_normal((1, 1, 28, 28)).astype("float32")
    yield "MLP 784-512-512-10", mod, params, {"data": data}, mlp.numpy_forward(data, params), "vs numpy forward"

    mod, params = seed_cnn.get_workload()
    data = rng.standard_normal((1, 3, 32, 32)).astype("float32")
    yield "seed CNN", mod, params, {"data": data}, seed_cnn.numpy_forward(data, params), "vs numpy forward"

    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    data = rng.standard_normal((1, 3, 32, 32)).astype("float32")
    yield ("ResNet-18 (3x32x32)", mod, params, {"data": data}, resnet.numpy_forward(data, params, 18),
           "vs numpy forward")

    if quick:
        return
    try:
        from .frontend import from_onnx
        from .testing import onnx_models
    except ImportError as err:  # onnx is an optional extra
        print(f"skipping the ONNX ResNet-50: {err} (pip install -e '.[onnx]')")
        return
    model, shape = onnx_models.resnet50(image=224)
    mod, params = from_onnx(model, shape={"data": shape})
    data = rng.standard_normal(shape).astype("float32")
    yield "ONNX ResNet-50 (224x224)", mod, params, {"data": data}, _onnxruntime_output(model, data), "vs onnxruntime"


def _onnxruntime_output(model, data):
    """onnxruntime's output for the ONNX model (float64), or None when it is not installed."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"data": data})[0].astype("float64")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small models only, fewer timing repeats")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 20

    header = (f"{'model':26} {'executor':8} {'max |diff|':>10} {'against':17} {'median ms':>10} "
              f"{'compile s':>9}  status")
    print(header)
    print("-" * len(header))
    failed = False
    for name, mod, params, inputs, numpy_reference, ref_label in _workloads(args.quick):
        for model, kind, diff, label, ms, comp, status in run_model(name, mod, params, inputs,
                                                                    numpy_reference, repeats, ref_label):
            failed |= status != "ok"
            print(f"{model:26} {kind:8} {diff:10.2e} {label:17} {ms:10.3f} {comp:9.2f}  {status}", flush=True)
    print(f"\nok = within {TOLERANCE:g} x the output's largest magnitude. compile s is build + evaluate(), without the first run; "
          "kernels are cached in memory and on disk, so later builds of the same kernels are faster.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
