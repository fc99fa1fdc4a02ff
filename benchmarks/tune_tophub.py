"""The shipped tuning records: a short AutoTVM run over the benchmark workloads, then the
graph executor's latency with the default schedules and with the records, interleaved with
onnxruntime (2 threads) in one run.

    python -m benchmarks.tune_tophub                       # tune (a few minutes), write, measure
    python -m benchmarks.tune_tophub --measure-only        # only the before/after table
    python -m benchmarks.tune_tophub --trials 24 --workloads mlp64,block

Tuning: every task of the workloads (extract_from_program: one per tunable implementation and
shape) gets its default config measured first, then `--trials` more configs chosen by the
XGBoost tuner (knob features; GATuner without xgboost), with early stopping. Each task's best
record is then checked end to end: the workload built with that record alone must run at least
3% faster than with the default schedules (interleaved), else it is dropped (tasks are
measured without the ops fused after them, which can reverse a ranking). The kept records go
to relay_backend/autotvm/tophub/<arch>-<cpu>.log for this host's CPU family; builds on that
family apply them by default (RB_TOPHUB=0 turns it off).
"""
import argparse
import os
import sys
import time

import numpy as np

import relay_backend as relay
from relay_backend import autotvm
from relay_backend.autotvm import record, tophub
from relay_backend.autotvm.record import MeasureInput
from relay_backend.autotvm.tuner import GATuner, callback
from relay_backend.testing import onnx_models as M

from .bench_models import _check, _ort_session
from .common import interleaved_medians

WORKLOADS = {"mlp64": ("MLP 784-512-512-10 b64", M.mlp, {"batch": 64}),
             "block": ("ResNet block 64ch 56x56", M.resnet_block, {})}


def _load(key):
    from relay_backend.frontend import from_onnx
    label, builder, kwargs = WORKLOADS[key]
    model, shape = builder(**kwargs)
    mod, params = from_onnx(model)
    return label, model, shape, mod, params


def _default_index(task):
    """The index of the task's hand-picked (fallback) config in its space."""
    fallback = autotvm.task.FallbackConfigEntity()
    task.instantiate(fallback)
    want = {k: repr(fallback[k]) for k in fallback}
    space = task.config_space
    return next(i for i in space.valid_indices() if {k: repr(space.get(i)[k]) for k in want} == want)


def _tuner(task):
    try:
        from relay_backend.autotvm.tuner import XGBTuner
        return XGBTuner(task, plan_size=8, feature_type="knob")
    except autotvm.task.space.TuningError:
        return GATuner(task, pop_size=8)


def tune(keys, trials, log_path) -> dict:
    """Tune every task of the workloads; returns {"tasks", "measurements", "seconds"}."""
    start, tasks, seen = time.time(), [], set()
    for key in keys:
        _, _, _, mod, params = _load(key)
        for task in autotvm.task.extract_from_program(mod, params, "llvm"):
            if task.workload not in seen:
                seen.add(task.workload)
                tasks.append(task)
    builder = autotvm.LocalBuilder(timeout=60, n_parallel=2)
    runner = autotvm.LocalRunner(timeout=20, number=5, repeat=3, min_repeat_ms=50, cooldown_interval=0)
    option = autotvm.measure_option(builder, runner)
    log = callback.log_to_file(log_path)
    measured = 0
    try:
        for k, task in enumerate(tasks):
            batch = autotvm.measure.create_measure_batch(task, option)
            default = MeasureInput(task.target, task, task.config_space.get(_default_index(task)))
            result = batch([default])
            log(None, [default], result)
            tuner = _tuner(task)
            tuner.resume([(default, result[0])])
            prefix = f"[task {k + 1}/{len(tasks)} {task.name} {len(task.config_space)} configs]"
            tuner.tune(n_trial=trials + 1, measure_option=option, early_stopping=max(8, trials // 2),
                       callbacks=[callback.progress_bar(trials + 1, prefix=prefix), log])
            measured += tuner.n_measured
    finally:
        builder.close()
        runner.close()
    return {"tasks": len(tasks), "measurements": measured, "seconds": time.time() - start}


def _model_ms(mod, params, shape, records, rounds) -> dict:
    """Interleaved median ms of the graph executor built without and with `records`."""
    data = np.random.default_rng(0).standard_normal(shape).astype("float32")
    with autotvm.apply_history_best([]):
        base = relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))
    with autotvm.apply_history_best(records):
        cand = relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))
    for gmod in (base, cand):
        gmod.set_input("data", data)
    result = interleaved_medians({"base": base.run, "cand": cand.run}, repeats=rounds)
    return {k: v[0] * 1e3 for k, v in result.items()}


def validate(keys, log_path, rounds, min_gain=0.03) -> list:
    """The records to ship: per workload, the best record of each of its tasks, all together and
    each alone, built into the whole workload and timed against the default schedules
    (interleaved); the fastest set wins if it is at least `min_gain` faster, else nothing ships
    for that workload. A task is measured as one kernel with a relu after it; inside a model it
    is fused with other ops and shares the machine with the model's other kernels, which can
    reverse a ranking."""
    best = {}
    for inp, res in record.load_from_file(log_path):
        if res.error_no == 0 and (inp.task.workload not in best or
                                  np.mean(res.costs) < np.mean(best[inp.task.workload][1].costs)):
            best[inp.task.workload] = (inp, res)
    kept = []
    for key in keys:
        label, _, shape, mod, params = _load(key)
        wanted = {t.workload for t in autotvm.task.extract_from_program(mod, params, "llvm")}
        pairs = [pair for workload, pair in best.items() if workload in wanted]
        candidates = [("all tasks", pairs)] + ([(f"{p[0].task.name} {p[0].config}", [p]) for p in pairs]
                                               if len(pairs) > 1 else [])
        winner, winner_gain = None, min_gain
        for name, chosen in candidates:
            ms = _model_ms(mod, params, shape, chosen, rounds)
            gain = 1 - ms["cand"] / ms["base"]
            print(f"  {label}: {name}: {ms['base']:.3f} -> {ms['cand']:.3f} ms ({gain:+.0%})")
            if gain >= winner_gain:
                winner, winner_gain = chosen, gain
        print(f"  {label}: {'ships ' + str(len(winner)) + ' records' if winner else 'ships nothing'}")
        kept += winner or []
    return kept


def measure(keys, records_file, rounds) -> list:
    """(label, default ms, tuned ms, onnxruntime ms, spreads) per workload, interleaved."""
    rows = []
    for key in keys:
        label, model, shape, mod, params = _load(key)
        data = np.random.default_rng(0).standard_normal(shape).astype("float32")
        with autotvm.apply_history_best([]):                 # a context of our own: no records
            default = relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))
        with autotvm.apply_history_best(records_file):
            tuned = relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))
        sess = _ort_session(model)
        want = sess.run(None, {"data": data})[0].astype("float64")
        for name, gmod in (("default", default), ("tuned", tuned)):
            gmod.set_input("data", data)
            gmod.run()
            _check(label, name, gmod.get_output(0).numpy(), want)
        result = interleaved_medians({"default": default.run, "tuned": tuned.run,
                                      "ort": lambda: sess.run(None, {"data": data})}, repeats=rounds)
        rows.append((label, *(result[k][0] * 1e3 for k in ("default", "tuned", "ort")),
                     *(result[k][1] for k in ("default", "tuned", "ort"))))
    return rows


def main(argv=None):
    """The command line (see the module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=16, help="configs tried per task after its default")
    parser.add_argument("--workloads", default="mlp64,block", help=f"comma-separated: {','.join(WORKLOADS)}")
    parser.add_argument("--rounds", type=int, default=40, help="interleaved timing rounds")
    parser.add_argument("--measure-only", action="store_true")
    args = parser.parse_args(argv)
    keys = [k.strip() for k in args.workloads.split(",") if k.strip()]
    target_file = str(tophub.record_file())
    load_before = os.getloadavg()
    if not args.measure_only:
        log_path = target_file + ".all"
        if os.path.exists(log_path):
            os.remove(log_path)
        stats = tune(keys, args.trials, log_path)
        print(f"tuned {stats['tasks']} tasks, {stats['measurements']} measurements in {stats['seconds']:.0f} s")
        kept = validate(keys, log_path, args.rounds)
        with open(target_file, "w", encoding="utf-8") as f:
            f.writelines(record.encode(inp, res) + "\n" for inp, res in kept)
        os.remove(log_path)
        print(f"{len(kept)} records kept in {target_file}")
    rows = measure(keys, target_file, args.rounds)
    print(f"load average before/after: {load_before[0]:.1f} / {os.getloadavg()[0]:.1f}")
    print("| workload | default (ms) | tuned records (ms) | onnxruntime (ms) | tuned / default | spreads d/t/o |")
    print("|---|---|---|---|---|---|")
    for label, d, t, o, sd, st, so in rows:
        print(f"| {label} | {d:.3f} | {t:.3f} | {o:.3f} | {t / d:.2f}x | {sd:.2f}/{st:.2f}/{so:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
