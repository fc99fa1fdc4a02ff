"""Tuning records: one measurement per line of JSON, TVM's autotvm log format (version 0.2).

    {"input": [target, task name, task args, task kwargs],
     "config": {"index": 7, "code_hash": null, "entity": [["tile_y", "sp", [-1, 8]], ...]},
     "result": [[costs in seconds...], error_no, all_cost, timestamp],
     "version": 0.2, "tvm_version": "<relay_backend version>"}

A failed measurement stores costs [1e9] and its MeasureErrorNo. Logs are appended one line per
measurement (tuner callback log_to_file), so a tuner killed mid-write leaves at most a partial
last line: load_from_file skips that one with a warning and names any other bad line.
Decoding only parses JSON and rebuilds registered classes; it never runs code from the file.

    python -m relay_backend.autotvm --mode pick --i tune.log --o best.log
    python -m relay_backend.autotvm --mode read --i tune.log [--begin 0 --end 5] [--ir]

(`python -m relay_backend.autotvm.record ...`, TVM's spelling, works too.)
"""
import enum
import json
import os
import warnings
from collections import namedtuple

import numpy as np

from ..diagnostics import get_logger
from ..config import VERSION
from ..errors import RelayError, SerializationError
from ..target import Target
from .task.config_space import ConfigEntity
from .task.task import Task, clean_json

AUTOTVM_LOG_VERSION = 0.2
logger = get_logger("autotvm")     # relay_backend.autotvm (TVM: "autotvm")


class MeasureInput(namedtuple("MeasureInput", ["target", "task", "config"])):
    """What one measurement builds and runs: a target, a task and one config of its space.

    Parameters
    ----------
    target : Target
        What the config is built for.
    task : Task
        The tuning task.
    config : ConfigEntity
        One config of the task's space.
    """


class MeasureResult(namedtuple("MeasureResult", ["costs", "error_no", "all_cost", "timestamp"])):
    """What one measurement gave.

    Parameters
    ----------
    costs : tuple
        Seconds per run, or on error (traceback, message).
    error_no : int
        A MeasureErrorNo (0: no error).
    all_cost : float
        Seconds the whole measurement took, the build included.
    timestamp : float
        When it finished (time.time()).
    """

    def __repr__(self) -> str:
        try:
            err = MeasureErrorNo(self.error_no).name
        except ValueError:
            err = str(self.error_no)
        return (f"MeasureResult(costs={self.costs!r}, error_no={err}, all_cost={self.all_cost}, "
                f"timestamp={self.timestamp!r})")


class MeasureErrorNo(enum.IntEnum):
    """Why a measurement failed (TVM's codes)."""

    NO_ERROR = 0
    INSTANTIATION_ERROR = 1     # the template rejected the config
    COMPILE_HOST = 2            # lowering or LLVM failed
    COMPILE_DEVICE = 3
    RUNTIME_DEVICE = 4          # the kernel crashed (signal) or raised
    WRONG_ANSWER = 5            # outputs differ from the default config's
    BUILD_TIMEOUT = 6
    RUN_TIMEOUT = 7
    UNKNOWN_ERROR = 8


def measure_str_key(inp, include_config=True) -> str:
    """A text key of a MeasureInput (target, task, and the config unless excluded)."""
    config = str(inp.config) if include_config else ""
    return "".join([str(inp.target), inp.task.name, str(inp.task.args), str(inp.task.kwargs), config])


def encode(inp, result, protocol="json") -> str:
    """One log line for (MeasureInput, MeasureResult); only the json protocol exists (TVM's
    pickle protocol would make loading a log run code)."""
    if protocol != "json":
        raise RelayError(f"record.encode: protocol {protocol!r} is not supported; use 'json'")
    costs = [float(c) for c in result.costs] if result.error_no == 0 else [1e9]
    row = {"input": [str(inp.target), inp.task.name, inp.task.args, inp.task.kwargs],
           "config": inp.config.to_json_dict(),
           "result": [costs, int(result.error_no), float(result.all_cost), float(result.timestamp)],
           "version": AUTOTVM_LOG_VERSION, "tvm_version": VERSION}
    return json.dumps(row)


def decode(row, protocol="json"):
    """(MeasureInput, MeasureResult) of a log line, None for a version-0.1 line; a
    SerializationError says what is wrong with any other line."""
    if protocol != "json":
        raise RelayError(f"record.decode: protocol {protocol!r} is not supported; use 'json'")
    try:
        data = json.loads(row)
    except json.JSONDecodeError as err:
        raise SerializationError(f"not a JSON record ({err.msg} at column {err.colno})") from None
    if not isinstance(data, dict):
        raise SerializationError(f"a record is a JSON object, got {type(data).__name__}")
    if data.get("v") == 0.1:
        warnings.warn("AutoTVM log version 0.1 is no longer supported; skipping its records", RuntimeWarning)
        return None
    try:
        target_text, task_name, task_args, _ = data["input"]
        costs, error_no, all_cost, timestamp = data["result"]
        target = Target(str(target_text))
        task = Task(str(task_name), clean_json(task_args))
        config = ConfigEntity.from_json_dict(data["config"])
        result = MeasureResult(tuple(float(c) for c in costs), int(error_no), float(all_cost), float(timestamp))
    except RelayError as err:
        raise SerializationError(f"invalid record: {err}") from None
    except (KeyError, TypeError, ValueError) as err:
        raise SerializationError(f"malformed record ({type(err).__name__}: {err})") from None
    if not result.costs:
        raise SerializationError("malformed record: no costs")
    config.cost = float(np.mean(result.costs))
    return MeasureInput(target, task, config), result


def _load_lines(lines, where: str):
    lines = list(lines)
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            record = decode(text)
        except SerializationError as err:
            if number == len(lines) and not line.endswith("\n"):
                warnings.warn(f"{where}: skipping the unfinished last line {number} ({err})", RuntimeWarning)
                return
            raise SerializationError(f"{where}:{number}: {err}") from None
        if record is not None:
            yield record


def load_from_buffer(file):
    """The records of an open log (a generator of (MeasureInput, MeasureResult))."""
    yield from _load_lines(file, getattr(file, "name", "<buffer>"))


def load_from_file(filepath):
    """The records of the log at `filepath` (a generator of (MeasureInput, MeasureResult))."""
    path = os.fspath(filepath)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as err:
        raise SerializationError(f"cannot read tuning log {path!r}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise SerializationError(f"tuning log {path!r} is not UTF-8 text") from None
    yield from _load_lines(lines, path)


def pick_best(in_file, out_file) -> int:
    """Write the best record per (target key / model, workload) of `in_file` (and of
    `out_file`, when it exists) to `out_file`; returns how many were written."""
    from .task.dispatcher import ApplyHistoryBest
    records = list(load_from_file(in_file))
    if isinstance(out_file, (str, os.PathLike)) and os.path.isfile(out_file):
        records += list(load_from_file(out_file))
    best = ApplyHistoryBest(records)
    wanted = {measure_str_key(inp) for inp, _ in best.best_by_model.values()}
    wanted |= {measure_str_key(inp) for inp, _ in best.best_by_targetkey.values()}
    lines = []
    for inp, res in records:
        key = measure_str_key(inp)
        if key in wanted:
            wanted.discard(key)
            lines.append(encode(inp, res) + "\n")
    if isinstance(out_file, (str, os.PathLike)):
        with open(out_file, "w", encoding="utf-8") as f:
            f.writelines(lines)
    else:
        out_file.writelines(lines)
    logger.info("picked %d best records from %s", len(lines), in_file)
    return len(lines)


def _main(argv=None) -> None:
    import argparse
    parser = argparse.ArgumentParser(description="read or distill an autotvm tuning log")
    parser.add_argument("--mode", choices=["read", "pick"], default="read")
    parser.add_argument("--i", required=True, help="input log")
    parser.add_argument("--o", default=None, help="output log (pick; default <input>.best.log)")
    parser.add_argument("--begin", type=int, default=0)
    parser.add_argument("--end", type=int, default=5)
    parser.add_argument("--ir", action="store_true", help="print each config's TIR")
    args = parser.parse_args(argv)
    if args.mode == "pick":
        print(pick_best(args.i, args.o or args.i + ".best.log"), "records written")
        return
    from .. import te
    from ..tir.printer import func_to_str
    for k, (inp, res) in enumerate(load_from_file(args.i)):
        if args.begin <= k < args.end:
            print(inp.target, inp.task, inp.config, res, sep="\n", end="\n\n")
            if args.ir:
                inp.task.target = inp.target
                sch, bufs = inp.task.instantiate(inp.config)
                print(func_to_str(te.lower(sch, bufs, "main")))


if __name__ == "__main__":
    # run the package's copy of this module: records made by this __main__ copy would be of
    # other classes than the ones ApplyHistoryBest checks for
    from relay_backend.autotvm import record as _record
    _record._main()
