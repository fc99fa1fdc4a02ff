"""What a measurement worker process runs: build one config, make the reference outputs of a
task, time one built candidate. Arguments and results are plain data (str, tuples, bytes,
numpy arrays), so any process pool or cluster (local, Ray) can carry them.

    build_job(task, config, tmp_dir)  -> BuildResult(filename or library bytes, kernel info, error, seconds)
    reference_job(task, tmp_dir, seed) -> path (or bytes) of an .npz: random inputs and the outputs of
                                          the task's default config on them, each in its primal layout
    run_job(build, reference, ...)    -> (costs, error_no, seconds, timestamp)

A tensor a template marked with a layout (task.tensor_layout: a config may block channels
differently, e.g. NCHW8c or NCHW16c) is kept in the reference in its primal layout (NCHW) and
converted to and from each candidate's layout, so candidates of every blocking are checked
against the same numbers.

A task travels as task_payload(task): its name, serialized args, target text, the module
that registered its template (imported first, so a template defined outside relay_backend,
e.g. in a test, is found) and its fused functions. A config travels as its JSON dict, or None
for the default.

What is built and timed: a task with fused functions (extract_from_program's: the primitive
functions of the program whose anchor the task is) builds each of them as the program does,
its real epilogue included, with the config applied to the task's workload only; its cost is
the sum of their times weighted by their calls in the program. A config the build cannot apply
to a function (other channel blocks than the function's layouts) is an instantiation error. A
task without (made with autotvm.task.create) builds its template with a relu after it.

Timing: time_evaluator's number / repeat / min_repeat_ms; `cache_flush_bytes` > 0 evicts the
caches before every repeat (TVM's enable_cpu_cache_flush); `thread_time` runs the parallel
loops on one thread and reads the calling thread's CPU time, which the other processes of a
shared machine do not inflate the way they inflate wall-clock time.
"""
import importlib
import io
import os
import tempfile
import time
import traceback
import uuid
from collections import namedtuple

import numpy as np

from ... import te
from ...codegen import build as codegen_build, llvm_target
from ...op.layout import Layout, transform_array
from ...runtime import ndarray as nd
from ...ir.serialization import load_json
from ...runtime.benchmark import module_time_evaluator
from ...runtime.module import load_module
from ...runtime.thread_count import set_num_threads
from ...te_compiler.lower import lower_to_te, schedule_lowered
from ...target import Target
from ...testing.tolerances import OutputMismatch, assert_allclose
from ..record import MeasureErrorNo
from ..task.config_space import ConfigEntity, FallbackConfigEntity
from ..task.dispatcher import DispatchContext
from ..task.space import InstantiationError
from ..task.task import Task, tensor_layout
from ..task.topi_integration import find_workload_op

KERNEL = "default_function"
CHECK_SCALE = 10.0       # x the float tolerances of testing.tolerances: reassociated long sums


class BuildResult(namedtuple("BuildResult", ("filename", "arg_info", "error", "time_cost"))):
    """A built candidate: the library (a file path, or its bytes when it must travel), its
    kernels as ((name, weight, arg info), ...) with the (shape, dtype, is_output, layout or
    None) of each argument, an error (kind, traceback, message) or None, and the build's
    seconds."""


def task_payload(task) -> dict:
    """A task as plain data a worker rebuilds it from (see the module doc)."""
    return {"name": task.name, "args": task.args, "target": str(task.target),
            "module": task.template_module,
            "fused": [list(pair) for pair in getattr(task, "fused_functions", ())]}


def config_payload(config):
    """A config as its JSON dict; None for the template's default."""
    return None if config is None or config.is_fallback else config.to_json_dict()


def _task(payload) -> Task:
    module = payload.get("module")
    if module:
        importlib.import_module(module)
    task = Task(payload["name"], payload["args"])
    task.target = Target(payload["target"])
    return task


class OnlyThisTask(DispatchContext):
    """Answers `config` for `workload` only (every other workload gets its fallback), so a
    fused function is built with the config on the task's op and nothing else."""

    def __init__(self, workload, config):
        super().__init__()
        self.workload, self.config = workload, config

    def _query_inside(self, target, workload):
        return self.config if workload == self.workload else None

    def update(self, target, workload, cfg):
        if workload == self.workload:
            self.config = cfg


def _config(config_json):
    return FallbackConfigEntity() if config_json is None else ConfigEntity.from_json_dict(config_json)


def _template_kernel(task, config) -> list:
    sch, args = task.instantiate(config)
    if not config.valid():
        raise InstantiationError("; ".join(config.errors))
    return [(KERNEL, 1, sch, args)]


def _fused_kernel(task, config, text: str, calls: int, index: int) -> tuple:
    """(name, calls, schedule, args) of one fused function built with `config` on the task."""
    func = load_json(text, "a tuning task's fused function")
    with OnlyThisTask(task.workload, None if config.is_fallback else config), task.target:
        lowered = lower_to_te(func, task.target)
        if not config.is_fallback:
            anchor = find_workload_op(lowered.outputs, task.name)
            if anchor is None or anchor.attrs.get("autotvm_config") is not config:
                raise InstantiationError(f"the config does not apply to fused function {index} of the program "
                                         f"(its layouts, e.g. channel blocks, are not the function's)")
            if not config.valid():
                raise InstantiationError("; ".join(config.errors))
        sch = schedule_lowered(lowered, task.target)
    return (f"fused_{index}", int(calls), sch, lowered.inputs + lowered.outputs)


def _kernels(payload, config_json) -> tuple:
    """(task, [(kernel name, weight, schedule, args)]) of a config (see the module doc)."""
    task, config = _task(payload), _config(config_json)
    fused = payload.get("fused") or []
    if not fused:
        return task, _template_kernel(task, config)
    return task, [_fused_kernel(task, config, text, calls, k) for k, (text, calls) in enumerate(fused)]


def _compile(task, kernels):
    """(module, info): one module holding every kernel; info is ((name, weight, arg info),
    ...), arg info the (shape, dtype, is_output, layout or None) of each argument."""
    with task.target:
        prims = {name: te.lower(sch, args, name=name) for name, _, sch, args in kernels}
    module = codegen_build(prims, target=task.target)
    info = tuple((name, weight, tuple((tuple(int(d.value) for d in t.shape), str(t.dtype),
                                        not isinstance(t.op, te.PlaceholderOp), tensor_layout(t)) for t in args))
                 for name, weight, _, args in kernels)
    return module, info


def build_job(payload, config_json, tmp_dir=None, as_bytes=False) -> BuildResult:
    """Build one config into a library under `tmp_dir` (the system's temporary directory when
    None; the library is returned as bytes when `as_bytes`)."""
    start = time.time()
    tmp_dir = tmp_dir or tempfile.gettempdir()
    try:
        task, kernels = _kernels(payload, config_json)
    except InstantiationError as err:
        return BuildResult(None, None, ("instantiation", traceback.format_exc(), str(err)), time.time() - start)
    except Exception as err:  # noqa: BLE001  (any failure of a candidate is its error record)
        return BuildResult(None, None, ("compile", traceback.format_exc(), f"{type(err).__name__}: {err}"),
                           time.time() - start)
    try:
        module, info = _compile(task, kernels)
        path = os.path.join(tmp_dir, f"candidate_{uuid.uuid4().hex}.so")
        module.export_library(path)
        if as_bytes:
            with open(path, "rb") as f:
                library = f.read()
            os.remove(path)
            return BuildResult(library, info, None, time.time() - start)
        return BuildResult(path, info, None, time.time() - start)
    except Exception as err:  # noqa: BLE001
        return BuildResult(None, None, ("compile", traceback.format_exc(), f"{type(err).__name__}: {err}"),
                           time.time() - start)


def random_inputs(arg_info, seed) -> list:
    """Random arrays for the inputs of `arg_info`: floats in [-1, 1), small ints, random bools."""
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype, is_output, _ in arg_info:
        if is_output:
            continue
        kind = np.dtype(dtype).kind
        if kind == "f":
            out.append(rng.uniform(-1, 1, shape).astype(dtype))
        elif kind == "b":
            out.append(rng.integers(0, 2, shape).astype(dtype))
        else:
            out.append(rng.integers(0, 8, shape).astype(dtype))
    return out


def _outputs(arg_info) -> list:
    return [nd.empty(shape, dtype) for shape, dtype, is_output, _ in arg_info if is_output]


def _primal(array, layout):
    """`array` (in `layout`, None: as it is) in its primal layout."""
    return array if layout is None else transform_array(array, layout, Layout(layout).primal)


def _from_primal(array, layout):
    return array if layout is None else transform_array(array, Layout(layout).primal, layout)


def _layouts(arg_info, outputs: bool) -> list:
    return [layout for *_, is_output, layout in arg_info if is_output == outputs]


def reference_job(payload, tmp_dir=None, seed=0, as_bytes=False):
    """The task's default config run once on seeded random inputs: an .npz (path or bytes)
    holding <kernel>.in0.., <kernel>.out0.. for each kernel of the task."""
    tmp_dir = tmp_dir or tempfile.gettempdir()
    task, kernels = _kernels(payload, None)
    module, info = _compile(task, kernels)
    arrays = {}
    for k, (name, _, arg_info) in enumerate(info):
        inputs = random_inputs(arg_info, seed + k)
        outputs = _outputs(arg_info)
        module[name](*[nd.array(a) for a in inputs], *outputs)
        arrays.update({f"{name}.in{j}": _primal(a, layout)
                       for j, (a, layout) in enumerate(zip(inputs, _layouts(arg_info, False)))})
        arrays.update({f"{name}.out{j}": _primal(o.numpy(), layout)
                       for j, (o, layout) in enumerate(zip(outputs, _layouts(arg_info, True)))})
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    if as_bytes:
        return buffer.getvalue()
    path = os.path.join(tmp_dir, f"reference_{uuid.uuid4().hex}.npz")
    with open(path, "wb") as f:
        f.write(buffer.getvalue())
    return path


def _library_path(library, tmp_dir):
    if isinstance(library, (bytes, bytearray)):
        path = os.path.join(tmp_dir, f"candidate_{uuid.uuid4().hex}.so")
        with open(path, "wb") as f:
            f.write(library)
        return path, True
    return library, False


def _kernel_arrays(data, name, arg_info, seed):
    """(inputs in the candidate's layouts, expected outputs or None) of kernel `name`."""
    if data is None:
        return random_inputs(arg_info, seed), None
    inputs = [_from_primal(data[f"{name}.in{k}"], layout) for k, layout in enumerate(_layouts(arg_info, False))]
    return inputs, [data[f"{name}.out{k}"] for k in range(len(_layouts(arg_info, True)))]


def _check(func, args, outputs, expected, arg_info):
    func(*args, *outputs)
    for k, (got, want, layout) in enumerate(zip(outputs, expected, _layouts(arg_info, True))):
        assert_allclose(_primal(got.numpy(), layout), want, what=f"output {k} vs the default config's", scale=CHECK_SCALE)


def run_job(build, reference, number, repeat, min_repeat_ms, cooldown_interval, tmp_dir=None,
            cache_flush_bytes=0, thread_time=False):
    """Time one built candidate: (costs, error_no, seconds, timestamp); a cost is the sum over
    the candidate's kernels of weight x time. With `reference` (an .npz path or bytes from
    reference_job) the kernels run on those inputs and must match those outputs; without, on
    random inputs unchecked. `cache_flush_bytes` and `thread_time`: see the module doc."""
    start = time.time()
    # OpenMP workers must wait passively, as in a compiling process (codegen sets it there):
    # a spinning worker steals the core the other thread needs and distorts every timing
    llvm_target.libgomp_path()
    if thread_time:
        set_num_threads(1)
    path, remove = _library_path(build.filename, tmp_dir or tempfile.gettempdir())
    data = None
    try:
        module = load_module(path)
        if reference is not None:
            data = np.load(io.BytesIO(reference) if isinstance(reference, (bytes, bytearray)) else reference)
        totals = np.zeros(repeat)
        for k, (name, weight, arg_info) in enumerate(build.arg_info):
            inputs, expected = _kernel_arrays(data, name, arg_info, k)
            args = [nd.array(a) for a in inputs]
            outputs = _outputs(arg_info)
            timer = module_time_evaluator(module, name, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
                                          cache_flush_bytes=cache_flush_bytes,
                                          clock=time.thread_time if thread_time else None)
            totals += weight * np.asarray(timer(*args, *outputs).results)
            if expected is not None:
                _check(module[name], args, outputs, expected, arg_info)
        costs = [float(c) for c in totals]
        if len(costs) > 2:                       # drop the extremes, as TVM does
            costs = sorted(costs)[1:-1]
        error_no = MeasureErrorNo.NO_ERROR
    except OutputMismatch as err:
        costs, error_no = (traceback.format_exc(), str(err)), MeasureErrorNo.WRONG_ANSWER
    except Exception as err:  # noqa: BLE001
        costs, error_no = (traceback.format_exc(), f"{type(err).__name__}: {err}"), MeasureErrorNo.RUNTIME_DEVICE
    finally:
        if data is not None:
            data.close()
        if remove:
            os.remove(path)
    stamp = time.time()
    if cooldown_interval:
        time.sleep(cooldown_interval)
    return tuple(costs), int(error_no), stamp - start + build.time_cost, stamp
