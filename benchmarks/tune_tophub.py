"""The shipped tuning records: a time-boxed AutoTVM run over the benchmark workloads, then the
graph executor's latency with the default schedules and with the records, interleaved with
onnxruntime (2 threads; --one-thread: everything on one thread, timed in thread CPU time) in
one run.

    python -m benchmarks.tune_tophub                          # tune, validate, write, measure
    python -m benchmarks.tune_tophub --measure-only           # only the before/after table
    python -m benchmarks.tune_tophub --workloads mlp64,block,resnet50 --budget mlp64=300,resnet50=900

Tuning (per workload, its own log): the tasks extract_from_program yields at opt_level 3 (the
channel-blocked conv2d_NCHWc.x86 / dense_pack_prepacked.x86 a build at opt_level 3 runs),
largest first, each measured as the workload's fused kernels that hold it (real epilogues,
weighted by calls, on the default channel blocks; the caches evicted before every repeat as
FLUSH_BYTES says); a task under MIN_SHARE of the workload's FLOPs is left untuned. Each task gets the default config measured, then configs chosen by the
XGBoost tuner (knob features; GATuner without xgboost), with early stopping, until `--trials`
or its slice of the workload's `--budget` seconds (the budget left, shared by FLOPs among the
tasks left) runs out. The budget covers extraction, measurement and the tuner's model.

Validation: the workload built at opt_level 3 with sets of its best records (candidate_sets: all
together; for a few tasks each alone; for many, those >= 10% faster than their default in
isolation, with and without changed channel blocks) against the same build without records,
interleaved; the fastest set ships if it is at least 3% faster, else nothing ships for that
workload (--validate-only repeats this on the logs of the last run). Then each workload is timed
with the other workloads' kept records that apply to it (a shared task): those that slow it by
more than 3% are dropped (cross_check). Kept records go to
relay_backend/autotvm/tophub/<arch>-<cpu>.log for this host's CPU family; builds on that family
apply them by default (RB_TOPHUB=0 turns it off).

The table: the default build at opt_level 2 (relay.build's default: plain layouts) and 3
(channel-blocked layouts), the opt_level 3 build with the shipped records, and onnxruntime.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

import relay_backend as relay
from relay_backend import autotvm
from relay_backend.autotvm import record, tophub
from relay_backend.autotvm.record import MeasureInput
from relay_backend.autotvm.tuner import GATuner, callback
from relay_backend.testing import onnx_models as M
from relay_backend.transform import PassContext

from .bench_models import _check, _ort_session
from .common import interleaved_medians

WORKLOADS = {"mlp64": ("MLP 784-512-512-10 b64", M.mlp, {"batch": 64}),
             "block": ("ResNet block 64ch 56x56", M.resnet_block, {}),
             "resnet50": ("ResNet-50 224", M.resnet50, {"image": 224})}
DEFAULT_BUDGET_S = {"mlp64": 300, "block": 300, "resnet50": 900}   # the limit: 15 minutes each
# bytes the runner copies before each repeat to evict the caches: the small workloads' weights and
# activations stay in this machine's 32 MiB L3 from one run to the next, so only the inner caches
# (1 MiB: twice a core's L2) are evicted; ResNet-50's 100 MB of weights come from DRAM (a full flush)
FLUSH_BYTES = {"mlp64": 1 << 20, "block": 1 << 20, "resnet50": 64 << 20}
TIMING = {"threads": 2, "clock": time.perf_counter,     # --one-thread: 1 and time.thread_time
          "per_function": False}                         # --per-function: a task per fused function
ROUNDS = {"resnet50": 30}            # interleaved timing rounds where --rounds is too many
ALONE_LIMIT = 4                      # validate each record alone only for workloads with few tasks
MIN_SHARE = 0.01                     # tasks below this share of a workload's FLOPs stay untuned
OPT_LEVEL = 3                        # the tasks are opt_level 3's (channel-blocked layouts)


class OutOfTime(Exception):
    """A task's time slice ran out (raised by the tuning callback, caught by tune)."""


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


def _stop_at(deadline):
    """A tuning callback that ends the task once `deadline` (time.time()) has passed."""
    def check(tuner, inputs, results):
        if time.time() >= deadline:
            raise OutOfTime
    return check


def measure_option(key):
    """LocalBuilder on both cores; LocalRunner: each candidate (the workload's fused kernels that
    hold the task, epilogues included) in its own process, 12 repeats of one call each, the
    caches evicted before each (FLUSH_BYTES), the extremes dropped; with --one-thread on one
    thread, timed in thread CPU time."""
    builder = autotvm.LocalBuilder(timeout=60, n_parallel=2)
    runner = autotvm.LocalRunner(timeout=60, number=1, repeat=12, min_repeat_ms=0, cooldown_interval=0,
                                 enable_cpu_cache_flush=True, cache_flush_bytes=FLUSH_BYTES[key],
                                 thread_time=TIMING["threads"] == 1)
    return builder, runner, autotvm.measure_option(builder, runner)


def tune(key, trials, budget_s, log_path) -> dict:
    """Tune the tasks of workload `key` within `budget_s` seconds; returns {"tasks", "tuned",
    "measurements", "seconds"}."""
    start = time.time()
    deadline = start + budget_s
    _, _, _, mod, params = _load(key)
    tasks = sorted(autotvm.task.extract_from_program(mod, params, "llvm", per_fused_function=TIMING["per_function"]),
                   key=lambda t: -t.flop)
    total = sum(t.flop for t in tasks)
    chosen = [t for t in tasks if t.flop >= MIN_SHARE * total]
    builder, runner, option = measure_option(key)
    log = callback.log_to_file(log_path)
    measured = 0
    try:
        for k, task in enumerate(chosen):
            left_flop = sum(t.flop for t in chosen[k:])
            task_deadline = time.time() + (deadline - time.time()) * task.flop / left_flop
            if time.time() >= deadline:
                break
            batch = autotvm.measure.create_measure_batch(task, option)
            default = MeasureInput(task.target, task, task.config_space.get(_default_index(task)))
            result = batch([default])
            log(None, [default], result)
            measured += 1
            tuner = _tuner(task)
            tuner.resume([(default, result[0])])
            prefix = f"[{key} task {k + 1}/{len(chosen)} {task.name} {len(task.config_space)} configs]"
            try:
                tuner.tune(n_trial=trials + 1, measure_option=option, early_stopping=max(8, trials // 2),
                           callbacks=[callback.progress_bar(trials + 1, prefix=prefix), log, _stop_at(task_deadline)])
            except OutOfTime:
                pass
            measured += tuner.n_measured - 1
    finally:
        builder.close()
        runner.close()
    return {"tasks": len(tasks), "tuned": len(chosen), "measurements": measured, "seconds": time.time() - start}


def _build(mod, params, records, opt_level=OPT_LEVEL):
    """A graph executor module of `mod` built under `records` (a list or a log path; [] = none)."""
    with autotvm.apply_history_best(records), PassContext(opt_level=opt_level):
        return relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))


def _model_ms(mod, params, shape, records, rounds, base_records=()) -> dict:
    """Interleaved median ms of the graph executor built with `base_records` (none by default)
    and with `records`."""
    data = np.random.default_rng(0).standard_normal(shape).astype("float32")
    base, cand = _build(mod, params, list(base_records)), _build(mod, params, records)
    for gmod in (base, cand):
        gmod.set_input("data", data)
    result = interleaved_medians({"base": base.run, "cand": cand.run}, repeats=rounds, clock=TIMING["clock"])
    return {k: v[0] * 1e3 for k, v in result.items()}


def _per_task(log_path) -> dict:
    """workload -> (its first record: the default config, measured first; [error-free records])."""
    tasks = {}
    for inp, res in record.load_from_file(log_path):
        first, good = tasks.setdefault(inp.task.workload, ((inp, res), []))
        if res.error_no == 0:
            good.append((inp, res))
    return tasks


def _records_of_other_tasks(records_file, log_paths) -> list:
    """The records of `records_file` whose workload no log of this run measured: a run that tunes
    some workloads replaces their records and keeps every other workload's."""
    if not os.path.exists(records_file):
        return []
    measured = {workload for path in log_paths if os.path.exists(path) for workload in _per_task(path)}
    return [(inp, res) for inp, res in record.load_from_file(records_file) if inp.task.workload not in measured]


def _cost(pair) -> float:
    return float(np.mean(pair[1].costs))


def _blocks(config) -> dict:
    return {k: repr(config[k]) for k in config if k.startswith("block_")}


def candidate_sets(log_path, min_task_gain=0.10) -> list:
    """(name, records) sets to validate: every task's best record; for a few tasks each alone;
    for many, only the tasks whose best beat their default by `min_task_gain` in isolation, and
    those again restricted to configs that keep the default channel blocks (a changed block puts
    a layout_transform between two convolutions that disagree, which no task measures)."""
    tasks = _per_task(log_path)
    best = [min(good, key=_cost) for _, good in tasks.values() if good]
    sets = [("all tasks", best)]
    if 1 < len(best) <= ALONE_LIMIT:
        return sets + [(f"{p[0].task.name} {p[0].config}", [p]) for p in best]
    faster, same_blocks = [], []
    for default, good in tasks.values():
        if not good or default[1].error_no:
            continue
        top = min(good, key=_cost)
        if _cost(top) <= (1 - min_task_gain) * _cost(default):
            faster.append(top)
        kept = [p for p in good if _blocks(p[0].config) == _blocks(default[0].config)]
        top = min(kept, key=_cost) if kept else None
        if top is not None and _cost(top) <= (1 - min_task_gain) * _cost(default):
            same_blocks.append(top)
    return sets + [(f"{len(faster)} tasks >= {min_task_gain:.0%} faster alone", faster),
                   (f"{len(same_blocks)} of those on the default blocks", same_blocks)]


def validate(key, log_path, rounds, min_gain=0.03) -> list:
    """The records of workload `key` to ship: each candidate set (candidate_sets) built into
    the whole workload and timed against the default schedules (interleaved); the fastest set
    wins if it is at least `min_gain` faster, else nothing ships. A task is measured as one
    kernel with a relu after it; inside a model it is fused with other ops and shares the
    machine with the model's other kernels, which can reverse a ranking."""
    label, _, shape, mod, params = _load(key)
    winner, winner_gain, seen = None, min_gain, []
    for name, chosen in candidate_sets(log_path):
        if not chosen or chosen in seen:
            continue
        seen.append(chosen)
        ms = _model_ms(mod, params, shape, chosen, rounds)
        gain = 1 - ms["cand"] / ms["base"]
        print(f"  {label}: {name}: {ms['base']:.3f} -> {ms['cand']:.3f} ms ({gain:+.0%})", flush=True)
        if gain >= winner_gain:
            winner, winner_gain = chosen, gain
    print(f"  {label}: {'ships ' + str(len(winner)) + ' records' if winner else 'ships nothing'}", flush=True)
    return winner or []


def cross_check(kept_by_key, rounds, max_loss=0.03) -> dict:
    """`kept_by_key` without the records that slow another workload down: a record applies to
    every workload with its task (the ResNet block's convolution is also ResNet-50's), so each
    workload is timed with its own kept records plus the others' that apply to it, against its
    own alone; when that is more than `max_loss` slower, those other records are dropped."""
    kept = {key: list(pairs) for key, pairs in kept_by_key.items()}
    for key in kept_by_key:
        label, _, shape, mod, params = _load(key)
        wanted = {t.workload for t in autotvm.task.extract_from_program(mod, params, "llvm")}
        own = {inp.task.workload for inp, _ in kept[key]}
        foreign = [(other, pair) for other, pairs in kept.items() if other != key for pair in pairs
                   if pair[0].task.workload in wanted and pair[0].task.workload not in own]
        if not foreign:
            continue
        ms = _model_ms(mod, params, shape, kept[key] + [pair for _, pair in foreign], ROUNDS.get(key, rounds),
                       base_records=kept[key])
        loss = ms["cand"] / ms["base"] - 1
        names = ", ".join(f"{other}'s {pair[0].task.name}" for other, pair in foreign)
        print(f"  {label}: with {names}: {ms['base']:.3f} -> {ms['cand']:.3f} ms ({-loss:+.0%})"
              f"{': dropped' if loss > max_loss else ''}", flush=True)
        if loss > max_loss:
            for other, pair in foreign:
                kept[other] = [p for p in kept[other] if p is not pair]
    return kept


def measure(keys, records_file, rounds) -> list:
    """(label, default opt2 ms, default opt3 ms, tuned ms, onnxruntime ms, spreads) per
    workload, interleaved in one run."""
    rows = []
    for key in keys:
        label, model, shape, mod, params = _load(key)
        data = np.random.default_rng(0).standard_normal(shape).astype("float32")
        builds = {"opt2": _build(mod, params, [], 2), "opt3": _build(mod, params, []),
                  "tuned": _build(mod, params, records_file)}
        sess = _ort_session(model, TIMING["threads"])
        want = sess.run(None, {"data": data})[0].astype("float64")
        for name, gmod in builds.items():
            gmod.set_input("data", data)
            gmod.run()
            _check(label, name, gmod.get_output(0).numpy(), want)
        calls = {name: gmod.run for name, gmod in builds.items()}
        calls["ort"] = lambda: sess.run(None, {"data": data})
        result = interleaved_medians(calls, repeats=ROUNDS.get(key, rounds), clock=TIMING["clock"])
        rows.append((label, *(result[k][0] * 1e3 for k in calls), *(result[k][1] for k in calls)))
    return rows


def _budgets(text, keys) -> dict:
    budgets = {k: DEFAULT_BUDGET_S[k] for k in keys}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, seconds = item.partition("=")
        budgets[name.strip()] = float(seconds)
    return budgets


def main(argv=None):
    """The command line (see the module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=64, help="configs tried per task after its default, at most")
    parser.add_argument("--budget", default="", help="seconds of tuning per workload, e.g. resnet50=900,mlp64=300 "
                        f"(defaults: {DEFAULT_BUDGET_S})")
    parser.add_argument("--workloads", default="mlp64,block,resnet50", help=f"comma-separated: {','.join(WORKLOADS)}")
    parser.add_argument("--rounds", type=int, default=40, help="interleaved timing rounds")
    parser.add_argument("--measure-only", action="store_true")
    parser.add_argument("--per-function", action="store_true",
                        help="one task per fused function (two kernels of one op shape with different "
                             "epilogues are tuned apart), not per op workload")
    parser.add_argument("--one-thread", action="store_true",
                        help="run and time everything on one thread in thread CPU time (onnxruntime with 1 "
                             "intra-op thread): other processes on a shared machine do not inflate it")
    parser.add_argument("--validate-only", action="store_true",
                        help="validate the logs of an earlier run again (no tuning), then write and measure")
    args = parser.parse_args(argv)
    keys = [k.strip() for k in args.workloads.split(",") if k.strip()]
    TIMING["per_function"] = args.per_function
    if args.one_thread:
        relay.runtime.set_num_threads(1)
        TIMING.update(threads=1, clock=time.thread_time)
    budgets = _budgets(args.budget, keys)
    target_file = str(tophub.record_file())
    load_before = os.getloadavg()
    if not args.measure_only:
        kept = {}
        for key in keys:
            log_path = os.path.join(tempfile.gettempdir(), f"tune_tophub.{tophub.host_family()}.{key}.log")
            if not args.validate_only:
                if os.path.exists(log_path):
                    os.remove(log_path)
                stats = tune(key, args.trials, budgets[key], log_path)
                print(f"{key}: tuned {stats['tuned']} of {stats['tasks']} tasks, {stats['measurements']} measurements "
                      f"in {stats['seconds']:.0f} s (budget {budgets[key]:.0f} s); load {os.getloadavg()[0]:.1f}; "
                      f"every measurement in {log_path}", flush=True)
            kept[key] = validate(key, log_path, ROUNDS.get(key, args.rounds))
        logs = [os.path.join(tempfile.gettempdir(), f"tune_tophub.{tophub.host_family()}.{key}.log") for key in keys]
        kept = [pair for pairs in cross_check(kept, args.rounds).values() for pair in pairs]
        others = _records_of_other_tasks(target_file, logs)
        if others or kept:
            with open(target_file, "w", encoding="utf-8") as f:
                f.writelines(record.encode(inp, res) + "\n" for inp, res in others + kept)
        elif os.path.exists(target_file):      # nothing left to ship: no empty file either
            os.remove(target_file)
        print(f"{len(kept)} records kept in {target_file} ({len(others)} earlier records of tasks this run did not "
              f"tune kept beside them)", flush=True)
    rows = measure(keys, target_file, args.rounds)
    print(f"load average before/after: {load_before[0]:.1f} / {os.getloadavg()[0]:.1f}")
    print("| workload | default opt2 (ms) | default opt3 (ms) | tuned opt3 (ms) | onnxruntime (ms) | tuned / opt3 "
          "| tuned / best default | spreads o2/o3/t/ort |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, d2, d3, t, o, s2, s3, st, so in rows:
        print(f"| {label} | {d2:.2f} | {d3:.2f} | {t:.2f} | {o:.2f} | {t / d3:.2f}x | {t / min(d2, d3):.2f}x "
              f"| {s2:.2f}/{s3:.2f}/{st:.2f}/{so:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
