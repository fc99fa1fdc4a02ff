"""Whole models on every executor against onnxruntime, numpy and torch, interleaved in one run.

Each workload is built ONCE as an ONNX model (relay_backend.testing.onnx_models) and imported
with relay_backend.frontend.from_onnx, so our executors and onnxruntime run the same graph
with the same weights:

- MLP 784-512-512-10 at batch 1 and 64, the seed CNN, a ResNet basic block (64 channels,
  56x56, batch norm): graph executor, VM, AOT (target llvm), the debug interpreter (MLP and
  seed CNN only), a hand-written float32 numpy forward, onnxruntime (2 threads, workers
  sleeping between runs, as in bench_kernels), torch (2 threads) when it is importable;
- ResNet-50, SqueezeNet 1.1, DenseNet-121 at 224x224, batch 1 (full run only): graph, VM,
  AOT, onnxruntime;
- every executor builds at opt_level 3 (OPT_LEVEL: FoldScaleAxis, AlterOpLayout), as TVM's
  benchmarks do;
- compile time per model: graph build cold (fresh TECompiler, empty disk cache: every kernel
  compiled, in parallel), warm in the same process (in-memory caches), in a second process
  (the disk cache: no LLVM runs), VM compile, AOT build cold (fresh TECompiler, empty disk
  cache, as the graph's cold build);
- the executors' own per-run cost: the graph executor's Python run loop (a one-add graph, and
  the seed CNN's run() minus the sum of its kernels run alone) and the VM's dispatch loop.

A workload is timed in two interleaved groups (`_timing_groups`): onnxruntime with our graph
executor, VM and AOT (the ratios the issue targets are about), then onnxruntime again with the
peers (debug interpreter, numpy, torch), whose ratios are to that second onnxruntime row. A
small model's rounds, and the executors' own per-run cost, go on for at least SMALL_WINDOW_S
seconds.

Every executor's output is checked against onnxruntime (without onnxruntime: against the debug
interpreter) before it is timed. An executor that fails to build, to run, or the check gives a
FAILED row (unit "FAILED", median nan) instead of vanishing, and `python -m benchmarks` then
exits non-zero.
`python -m benchmarks.bench_models --targets` times only the graph executor against
onnxruntime on the two issue-4 target workloads, over many rounds, and says met / not met. Rows are
(name, unit, median, ratio, spread); ratio = median / onnxruntime's median for that workload
(for the overhead rows: / the kernel called alone).
"""
import contextlib
import os
import shutil
import sys
import tempfile
import time

import numpy as np

import relay_backend as relay
from relay_backend.testing import onnx_models as M

from .bench_compile import second_process_build_s
from .common import interleaved_medians

ORT = "onnxruntime 2 threads"
ORT_WITH_PEERS = "onnxruntime 2 threads, timed with the peers"   # the peers' ratios are to this row
# Our executors build at opt_level 3, as TVM's own benchmarks and tuning scripts do: that
# level runs FoldScaleAxis (batch norm into conv weights) and AlterOpLayout (x86: NCHWc
# convolutions and packed dense weights, packed once at compile time).
OPT_LEVEL = 3
# A small model's rounds go on for at least this long (seconds; a quarter of it on the quick
# path), so a slow phase of the host cannot cover all of its samples (common.interleaved_medians).
SMALL_WINDOW_S = 8.0
# timed in the peers' group (_timing_groups), not with the compiled executors
PEER_EXECUTORS = ("debug interpreter",)
FAILED = "FAILED"       # the unit of a row whose executor failed to build, run or match


def failed_row(label: str, name: str, err) -> tuple:
    reason = " ".join(str(err).split())[:160]
    return (f"{label}, {name}: FAILED ({type(err).__name__}: {reason})", FAILED, float("nan"), None, 0.0)


def _workloads(quick: bool) -> list:
    """(label, builder, kwargs, small): small ones also run the interpreter and numpy."""
    out = [("MLP 784-512-512-10 b1", M.mlp, {"batch": 1}, True),
           ("MLP 784-512-512-10 b64", M.mlp, {"batch": 64}, True),
           ("seed CNN", M.seed_cnn, {}, True),
           ("ResNet block 64ch 56x56", M.resnet_block, {}, True)]
    if not quick:
        out += [("SqueezeNet 1.1 224", M.squeezenet, {"image": 224}, False),
                ("ResNet-50 224", M.resnet50, {"image": 224}, False),
                ("DenseNet-121 224", M.densenet121, {"image": 224}, False)]
    return out


# --- peers -----------------------------------------------------------------------------------
def _ort_session(model, threads: int = 2):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    # spinning workers would hold the second core while our kernels run (see bench_kernels)
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _inits(model) -> list:
    """The model's initializers as float32 arrays, in creation order."""
    from onnx import numpy_helper
    return [numpy_helper.to_array(t) for t in model.graph.initializer]


def _im2col_conv(x, w, pad):
    """NCHW conv, stride 1, as one BLAS matmul over a sliding-window view (float32)."""
    o, c, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))  # N C OH OW KH KW
    n, _, oh, ow = win.shape[:4]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
    return (cols @ w.reshape(o, -1).T).reshape(n, oh, ow, o).transpose(0, 3, 1, 2)


def _np_bn(x, gamma, beta, mean, var):
    scale = gamma / np.sqrt(var + 1e-5)
    return x * scale[:, None, None] + (beta - mean * scale)[:, None, None]


def _numpy_forward(builder, model):
    """A hand-written float32 numpy forward for the small workloads (None for the rest)."""
    p = _inits(model)
    if builder is M.mlp:
        def mlp(x):
            y = x.reshape(x.shape[0], -1)
            for k in range(0, len(p) - 2, 2):
                y = np.maximum(y @ p[k].T + p[k + 1], 0)
            return y @ p[-2].T + p[-1]
        return mlp
    if builder is M.seed_cnn:
        return lambda x: np.maximum(_im2col_conv(x, p[0], 1), 0).mean(axis=(2, 3)) @ p[1].T + p[2]
    if builder is M.resnet_block:
        def block(x):
            y = np.maximum(_np_bn(_im2col_conv(x, p[0], 1), *p[1:5]), 0)
            return np.maximum(_np_bn(_im2col_conv(y, p[5], 1), *p[6:10]) + x, 0)
        return block
    return None


def _torch_forward(builder, model):
    """The same small networks in torch (2 threads), or None without torch."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    torch.set_num_threads(2)
    p = [torch.from_numpy(np.ascontiguousarray(a)) for a in _inits(model)]

    def bn(x, g, b, m, v):
        return F.batch_norm(x, m, v, g, b, False, 0.0, 1e-5)
    if builder is M.mlp:
        def net(x):
            y = x.reshape(x.shape[0], -1)
            for k in range(0, len(p) - 2, 2):
                y = F.relu(F.linear(y, p[k], p[k + 1]))
            return F.linear(y, p[-2], p[-1])
    elif builder is M.seed_cnn:
        def net(x):
            return F.linear(F.relu(F.conv2d(x, p[0], padding=1)).mean(dim=(2, 3)), p[1], p[2])
    elif builder is M.resnet_block:
        def net(x):
            y = F.relu(bn(F.conv2d(x, p[0], padding=1), *p[1:5]))
            return F.relu(bn(F.conv2d(y, p[5], padding=1), *p[6:10]) + x)
    else:
        return None

    def run(x):
        with torch.inference_mode():
            return net(torch.from_numpy(x)).numpy()
    return run


# --- our executors ---------------------------------------------------------------------------
@contextlib.contextmanager
def _cold_compiler():
    """A fresh in-memory TECompiler and an empty on-disk cache (a new directory, yielded: a
    second process then builds from what the cold build stored), restored afterwards."""
    from relay_backend import config
    from relay_backend.te_compiler import get as get_compiler
    saved = {name: os.environ.get(name) for name in ("RB_NO_DISK_CACHE", "RB_CACHE_DIR")}
    folder = tempfile.mkdtemp(prefix="rb_bench_cache_")
    os.environ.pop("RB_NO_DISK_CACHE", None)
    os.environ["RB_CACHE_DIR"] = folder
    config.reload()
    get_compiler().clear()
    try:
        yield folder
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        config.reload()


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def _build_executors(mod, params, data, small: bool, compile_rows: list, label: str, failed: dict,
                     rebuild=None) -> dict:
    """name -> (run callable, output getter); appends compile-time rows. An executor that fails
    to build is reported on stderr and recorded in `failed` (name -> error); the others still run.
    rebuild: (onnx_models builder, kwargs), to time a second process's build of the model."""
    from relay_backend import vm as rvm
    out = {}
    opt = relay.transform.PassContext(opt_level=OPT_LEVEL)
    try:
        with _cold_compiler() as cache_dir, opt:
            _, cold = _timed(lambda: relay.build(mod, target="llvm", params=params))
        with opt:
            factory, warm = _timed(lambda: relay.build(mod, target="llvm", params=params))
        gmod = factory["default"](relay.cpu(0))
        gmod.set_input("data", data)
        out["graph executor"] = (gmod.run, lambda: gmod.get_output(0).numpy())
        compile_rows += [(f"{label}: compile graph, cold", "s", cold, None, 0.0),
                         (f"{label}: compile graph, warm (same process)", "s", warm, None, 0.0)]
        if rebuild is not None:
            try:
                second = second_process_build_s(*rebuild, cache_dir, OPT_LEVEL)
                compile_rows.append((f"{label}: compile graph, second process (disk cache)", "s",
                                     second, None, 0.0))
            except Exception as err:  # noqa: BLE001 - a FAILED row; the executor itself works
                compile_rows.append(failed_row(label, "compile graph, second process", err))
        shutil.rmtree(cache_dir, ignore_errors=True)
    except Exception as err:  # noqa: BLE001 - one broken executor must not hide the others
        print(f"[bench_models] {label}: graph executor failed: {err}", file=sys.stderr)
        failed["graph executor"] = err
    try:
        with opt:
            exe, t_vm = _timed(lambda: rvm.compile(mod, params=params))
        machine = rvm.VirtualMachine(exe, relay.cpu(0))
        machine.set_input("main", data)
        box = {}
        out["vm"] = (lambda: box.__setitem__("y", machine.invoke("main")), lambda: box["y"].numpy())
        compile_rows.append((f"{label}: compile vm", "s", t_vm, None, 0.0))
    except Exception as err:  # noqa: BLE001
        print(f"[bench_models] {label}: vm failed: {err}", file=sys.stderr)
        failed["vm"] = err
    try:
        with _cold_compiler() as cache_dir, opt:     # like "compile graph, cold": every kernel again
            factory, t_aot = _timed(lambda: relay.build(mod, target="llvm", params=params, executor="aot"))
        shutil.rmtree(cache_dir, ignore_errors=True)
        amod = relay.aot.AotModule(factory["default"](relay.cpu(0)))
        amod.set_input("data", data)
        out["aot"] = (amod.run, lambda: amod.get_output(0).numpy())
        compile_rows.append((f"{label}: compile aot, cold", "s", t_aot, None, 0.0))
    except Exception as err:  # noqa: BLE001
        print(f"[bench_models] {label}: aot failed: {err}", file=sys.stderr)
        failed["aot"] = err
    if small and label.startswith(("MLP", "seed")):   # the interpreter is numpy op by op
        run_debug = relay.create_executor("debug", mod=mod, params=params).evaluate()
        box = {}
        out["debug interpreter"] = (lambda: box.__setitem__("y", run_debug(data)), lambda: box["y"].numpy())
    return out


def _check(label, name, got, want, ref="onnxruntime"):
    scale = max(1.0, float(np.abs(want).max()))
    err = float(np.abs(np.asarray(got, dtype="float64") - want).max())
    if not err <= 1e-3 * scale:
        raise AssertionError(f"bench_models: {label} on {name} differs from {ref} by {err:.3g} "
                             f"(scale {scale:.3g}); a benchmark of wrong results is worthless")


def _workload_rows(label, builder, kwargs, small, repeats, compile_rows) -> list:
    from relay_backend.frontend import from_onnx
    model, shape = builder(**kwargs)
    data = np.random.default_rng(0).standard_normal(shape).astype("float32")
    mod, params = from_onnx(model)
    sess = _ort_session(model)
    failed = {}
    if sess is not None:
        ref, want = "onnxruntime", sess.run(None, {"data": data})[0].astype("float64")
    else:   # no onnxruntime: the debug interpreter (numpy op by op) is the oracle
        print(f"[bench_models] {label}: onnxruntime missing; checking against the debug interpreter",
              file=sys.stderr)
        ref, want = "the debug interpreter", None
        try:
            want = relay.create_executor("debug", mod=mod, params=params).evaluate()(data).numpy()
            want = want.astype("float64")
        except Exception as err:  # noqa: BLE001
            failed["debug interpreter (reference)"] = err
    execs = _build_executors(mod, params, data, small, compile_rows, label, failed, (builder, kwargs))
    cands, peers = {}, {}
    if sess is not None:
        cands[ORT] = lambda: sess.run(None, {"data": data})
    for name, (run, get) in execs.items():
        try:
            run()
            if want is not None:
                _check(label, name, get(), want, ref)
        except Exception as err:  # noqa: BLE001 - reported as a FAILED row, not fatal
            print(f"[bench_models] {label}: {name} failed: {err}", file=sys.stderr)
            failed[name] = err
            continue
        (peers if name in PEER_EXECUTORS else cands)[name] = run
    for name, fwd in (("numpy eager", _numpy_forward(builder, model) if small else None),
                      ("torch 2 threads", _torch_forward(builder, model) if small else None)):
        if fwd is None:
            continue
        try:
            if want is not None:
                _check(label, name, fwd(data), want, ref)
        except Exception as err:  # noqa: BLE001 - a peer's failure is reported, not fatal
            print(f"[bench_models] {label}: {name} left out: {err}", file=sys.stderr)
            continue
        peers[name] = lambda f=fwd: f(data)
    # small models run in ~1 ms: more rounds buy a steadier median on a shared machine
    reps = repeats * 4 if small else max(3, repeats // 3)
    fails = [failed_row(label, name, err) for name, err in failed.items()]
    window = _window(repeats) if small else 0.0
    rows = []
    for group in _timing_groups(cands, peers):
        timing = interleaved_medians(group, repeats=reps, warmup=1 if not small else 2, min_seconds=window)
        base = next((timing[k][0] for k in (ORT, ORT_WITH_PEERS) if k in timing), timing[next(iter(timing))][0])
        rows += [(f"{label}, {name}", "ms", t * 1e3, t / base, spread) for name, (t, spread) in timing.items()]
    return rows + fails


def _window(repeats) -> float:
    """Seconds a sub-millisecond measurement's rounds go on for (SMALL_WINDOW_S; a quarter
    of it on the quick path)."""
    return SMALL_WINDOW_S if repeats >= 10 else SMALL_WINDOW_S / 4


def _timing_groups(ours: dict, peers: dict) -> list:
    """The interleaved groups a workload is timed in: our compiled executors with onnxruntime
    (the issue targets' ratios), then the peers (the debug interpreter, numpy, torch) with
    onnxruntime again, their ratios to that group's onnxruntime. In one group the peers'
    working sets (the interpreter's and numpy's own weight copies and temporaries) evicted the
    weights of whoever ran next, and numpy's BLAS workers spin after each call: MLP b1 ran
    at 2-3x its time alone for every system (README, "Two timing groups per workload")."""
    groups = [ours] if len(ours) > (ORT in ours) else []
    if peers:
        groups.append({**({ORT_WITH_PEERS: ours[ORT]} if ORT in ours else {}), **peers})
    return groups


# --- the executors' own cost -----------------------------------------------------------------
def _one_add():
    x = relay.var("x", shape=(4,))
    return relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))


def _overhead_rows(repeats) -> list:
    from relay_backend import vm as rvm
    rows = []
    x = np.ones(4, "float32")
    gmod = relay.build(_one_add(), target="llvm")["default"](relay.cpu(0))
    gmod.set_input("x", x)
    execs = getattr(gmod, "_execs", None)       # the prepared kernel calls run() loops over
    machine = rvm.VirtualMachine(rvm.compile(_one_add()), relay.cpu(0))
    nd_x, nd_out = relay.nd.array(x), relay.nd.empty((4,), "float32")
    kernel = machine.exe.lib[machine.exe.primitive_ops[0]]
    cands = {"kernel": lambda: kernel(nd_x, nd_out), "graph": gmod.run, "vm": lambda: machine.invoke("main", nd_x)}
    if execs and len(execs) == 1:
        cands["prepared"] = execs[0]
    t = interleaved_medians(cands, repeats=max(repeats, 5) * 40, warmup=20, min_seconds=_window(repeats))
    base = t["prepared"][0] if "prepared" in t else t["kernel"][0]
    rows.append(("one add(4): graph run() per call", "us", t["graph"][0] * 1e6, t["graph"][0] / base,
                 t["graph"][1]))
    if "prepared" in t:
        rows.append(("one add(4): the prepared kernel call alone", "us", base * 1e6, 1.0, t["prepared"][1]))
    rows.append(("one add(4): vm invoke per call", "us", t["vm"][0] * 1e6, t["vm"][0] / t["kernel"][0],
                 t["vm"][1]))
    rows.append(("one add(4): checked kernel call alone", "us", t["kernel"][0] * 1e6, 1.0, t["kernel"][1]))

    # seed CNN: run() against the sum of its kernels run one at a time
    model, shape = M.seed_cnn()
    from relay_backend.frontend import from_onnx
    mod, params = from_onnx(model)
    gmod = relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))
    gmod.set_input("data", np.random.default_rng(0).standard_normal(shape).astype("float32"))
    execs = getattr(gmod, "_execs", None)
    if execs:
        cands = {"run": gmod.run, **{f"k{i}": e for i, e in enumerate(execs)}}
        t = interleaved_medians(cands, repeats=max(repeats, 5) * 20, warmup=5, min_seconds=_window(repeats))
        kernels = sum(t[f"k{i}"][0] for i in range(len(execs)))
        rows.append((f"seed CNN: graph run() ({len(execs)} kernels)", "us", t["run"][0] * 1e6,
                     t["run"][0] / kernels, t["run"][1]))
        rows.append(("seed CNN: sum of its kernels run alone", "us", kernels * 1e6, 1.0, 0.0))
        rows.append(("seed CNN: run loop overhead per run", "us", (t["run"][0] - kernels) * 1e6, None, 0.0))
    return rows


def run(repeats: int = 15) -> list:
    """All rows; fewer than 10 repeats (`python -m benchmarks --quick` passes 5) is the quick
    path: the four small workloads only."""
    quick = repeats < 10
    rows, compile_rows = [], []
    for label, builder, kwargs, small in _workloads(quick):
        try:
            rows += _workload_rows(label, builder, kwargs, small, repeats, compile_rows)
        except Exception as err:  # noqa: BLE001 - import/reference failure: one FAILED row
            print(f"[bench_models] {label} failed: {err}", file=sys.stderr)
            rows.append(failed_row(label, "workload", err))
    return rows + compile_rows + _overhead_rows(repeats)


TARGETS = (("MLP 784-512-512-10 b64", M.mlp, {"batch": 64}), ("ResNet block 64ch 56x56", M.resnet_block, {}))
TARGET_RATIO = 1.5      # issue 4: graph executor within 1.5x of onnxruntime (2 threads)


def check_targets(rounds: int = 60) -> list:
    """Graph executor vs onnxruntime only, many interleaved rounds: (label, graph ms, ort ms,
    ratio of medians, ratio of minimums, met) per target workload."""
    from relay_backend.frontend import from_onnx
    out = []
    for label, builder, kwargs in TARGETS:
        model, shape = builder(**kwargs)
        data = np.random.default_rng(0).standard_normal(shape).astype("float32")
        mod, params = from_onnx(model)
        gmod = relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))
        gmod.set_input("data", data)
        sess = _ort_session(model)
        gmod.run()
        _check(label, "graph executor", gmod.get_output(0).numpy(), sess.run(None, {"data": data})[0].astype("float64"))
        samples = {"graph": [], "ort": []}
        cands = {"graph": gmod.run, "ort": lambda: sess.run(None, {"data": data})}
        for fn in cands.values():
            fn()
        for _ in range(rounds):
            for name, fn in cands.items():
                start = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - start)
        med = {k: float(np.median(v)) for k, v in samples.items()}
        low = {k: min(v) for k, v in samples.items()}
        ratio = med["graph"] / med["ort"]
        out.append((label, med["graph"] * 1e3, med["ort"] * 1e3, ratio, low["graph"] / low["ort"],
                    ratio <= TARGET_RATIO))
    return out


if __name__ == "__main__":
    if "--targets" in sys.argv:
        for label, g, o, ratio, ratio_min, met in check_targets():
            print(f"{label:28} graph {g:7.3f} ms  onnxruntime {o:7.3f} ms  ratio {ratio:5.2f} "
                  f"(of minimums {ratio_min:5.2f})  target <= {TARGET_RATIO}: {'met' if met else 'NOT met'}")
        sys.exit(0)
    all_rows = run(5 if "--quick" in sys.argv else 15)
    for name, unit, median, ratio, spread in all_rows:
        r = f"{ratio:6.2f}" if ratio is not None else " " * 6
        print(f"{name:56} {median:9.3f} {unit:2} {r} {spread:5.0%}")
    sys.exit(1 if any(row[1] == FAILED for row in all_rows) else 0)
