"""What a measurement worker process runs: build one config, make the reference outputs of a
task, time one built candidate. Arguments and results are plain data (str, tuples, bytes,
numpy arrays), so any process pool or cluster (local, Ray) can carry them.

    build_job(task, config, tmp_dir)  -> BuildResult(filename or library bytes, arg_info, error, seconds)
    reference_job(task, tmp_dir, seed) -> path (or bytes) of an .npz: random inputs and the outputs of
                                          the task's default config on them, each in its primal layout
    run_job(build, reference, ...)    -> (costs, error_no, seconds, timestamp)

A tensor a template marked with a layout (task.tensor_layout: a config may block channels
differently, e.g. NCHW8c or NCHW16c) is kept in the reference in its primal layout (NCHW) and
converted to and from each candidate's layout, so candidates of every blocking are checked
against the same numbers.

A task travels as task_payload(task): its name, serialized args, target text and the module
that registered its template (imported first, so a template defined outside relay_backend,
e.g. in a test, is found). A config travels as its JSON dict, or None for the default.
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
from ...runtime.module import load_module
from ...target import Target
from ...testing.tolerances import OutputMismatch, assert_allclose
from ..record import MeasureErrorNo
from ..task.config_space import ConfigEntity, FallbackConfigEntity
from ..task.space import InstantiationError
from ..task.task import Task, tensor_layout

KERNEL = "default_function"
CHECK_SCALE = 10.0       # x the float tolerances of testing.tolerances: reassociated long sums


class BuildResult(namedtuple("BuildResult", ("filename", "arg_info", "error", "time_cost"))):
    """A built candidate: the library (a file path, or its bytes when it must travel), the
    (shape, dtype, is_output, layout or None) of each kernel argument, an error (kind,
    traceback, message) or None, and the build's seconds."""


def task_payload(task) -> dict:
    """A task as plain data a worker rebuilds it from (see the module doc)."""
    return {"name": task.name, "args": task.args, "target": str(task.target),
            "module": task.template_module}


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


def _instantiate(payload, config_json):
    task = _task(payload)
    config = FallbackConfigEntity() if config_json is None else ConfigEntity.from_json_dict(config_json)
    sch, args = task.instantiate(config)
    if not config.valid():
        raise InstantiationError("; ".join(config.errors))
    return task, sch, args


def _compile(task, sch, args):
    prim = te.lower(sch, args, name=KERNEL)
    module = codegen_build({KERNEL: prim}, target=task.target)
    info = tuple((tuple(int(d.value) for d in t.shape), str(t.dtype), not isinstance(t.op, te.PlaceholderOp),
                  tensor_layout(t)) for t in args)
    return module, info


def build_job(payload, config_json, tmp_dir=None, as_bytes=False) -> BuildResult:
    """Build one config into a library under `tmp_dir` (the system's temporary directory when
    None; the library is returned as bytes when `as_bytes`)."""
    start = time.time()
    tmp_dir = tmp_dir or tempfile.gettempdir()
    try:
        task, sch, args = _instantiate(payload, config_json)
    except InstantiationError as err:
        return BuildResult(None, None, ("instantiation", traceback.format_exc(), str(err)), time.time() - start)
    except Exception as err:  # noqa: BLE001  (any failure of a candidate is its error record)
        return BuildResult(None, None, ("compile", traceback.format_exc(), f"{type(err).__name__}: {err}"),
                           time.time() - start)
    try:
        module, info = _compile(task, sch, args)
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
    holding in0.., out0.."""
    tmp_dir = tmp_dir or tempfile.gettempdir()
    task, sch, args = _instantiate(payload, None)
    module, info = _compile(task, sch, args)
    inputs = random_inputs(info, seed)
    outputs = _outputs(info)
    module[KERNEL](*[nd.array(a) for a in inputs], *outputs)
    arrays = {f"in{k}": _primal(a, layout) for k, (a, layout) in enumerate(zip(inputs, _layouts(info, False)))}
    arrays.update({f"out{k}": _primal(o.numpy(), layout)
                   for k, (o, layout) in enumerate(zip(outputs, _layouts(info, True)))})
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


def run_job(build, reference, number, repeat, min_repeat_ms, cooldown_interval, tmp_dir=None):
    """Time one built candidate: (costs, error_no, seconds, timestamp). With `reference` (an
    .npz path or bytes from reference_job) it runs on those inputs and must match those
    outputs; without, it runs on random inputs unchecked."""
    start = time.time()
    # OpenMP workers must wait passively, as in a compiling process (codegen sets it there):
    # a spinning worker steals the core the other thread needs and distorts every timing
    llvm_target.libgomp_path()
    path, remove = _library_path(build.filename, tmp_dir or tempfile.gettempdir())
    try:
        module = load_module(path)
        func = module[KERNEL]
        if reference is not None:
            source = io.BytesIO(reference) if isinstance(reference, (bytes, bytearray)) else reference
            with np.load(source) as data:
                inputs = [_from_primal(data[f"in{k}"], layout) for k, layout in enumerate(_layouts(build.arg_info, False))]
                expected = [data[f"out{k}"] for k in range(len(_layouts(build.arg_info, True)))]
        else:
            inputs, expected = random_inputs(build.arg_info, 0), None
        args = [nd.array(a) for a in inputs]
        outputs = _outputs(build.arg_info)
        timer = module.time_evaluator(KERNEL, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms)
        costs = list(timer(*args, *outputs).results)
        if expected is not None:
            func(*args, *outputs)
            for k, (got, want, layout) in enumerate(zip(outputs, expected, _layouts(build.arg_info, True))):
                assert_allclose(_primal(got.numpy(), layout), want, what=f"output {k} vs the default config's", scale=CHECK_SCALE)
        if len(costs) > 2:                       # drop the extremes, as TVM does
            costs = sorted(costs)[1:-1]
        error_no = MeasureErrorNo.NO_ERROR
    except OutputMismatch as err:
        costs, error_no = (traceback.format_exc(), str(err)), MeasureErrorNo.WRONG_ANSWER
    except Exception as err:  # noqa: BLE001
        costs, error_no = (traceback.format_exc(), f"{type(err).__name__}: {err}"), MeasureErrorNo.RUNTIME_DEVICE
    finally:
        if remove:
            os.remove(path)
    stamp = time.time()
    if cooldown_interval:
        time.sleep(cooldown_interval)
    return tuple(costs), int(error_no), stamp - start + build.time_cost, stamp
