"""Tuning tasks: a template name plus the arguments that fix its shapes (autotvm.task.Task).

A task's `workload` = (name, *serialized args) is the key of records and of config queries.
Arguments serialize to JSON-able, hashable tuples, so a workload survives a log file:

    te.Tensor        -> ("TENSOR", shape, dtype)      (a placeholder again when instantiated; a
                        symbolic dimension is its expression's text, as TVM writes a Var's
                        name: such a workload can be queried, never measured)
    op Attrs         -> ("ATTRS", class name, ((field, value), ...))   (rebuilt from the class
                        registry of Attrs subclasses: a log never names code to import)
    relay TensorType -> ("TYPE", shape, dtype)
    lists / tuples   -> tuples; str, int, float, bool, None as they are

Templates live in TASK_TABLE by name. A relay_backend implementation registers a compute/
schedule pair (topi_integration.register_topi_compute / _schedule, relay calling convention:
compute(attrs, inputs, out_type), schedule(attrs, outs, target)); a hand-written template
registers one function with `template(name)` that returns (schedule, arg tensors), TVM style.
`Task.instantiate(config)` runs the template under that config and returns (schedule, args)
with the inputs first and the outputs last, as the kernel takes them; a relay-convention task
ends with an elementwise relu, as the fused kernels of a model do (see with_epilogue).
"""
import functools
import math

from ...docstrings import shared_parameters
from ...errors import AttrsError, TuningError
from ...ir.attrs import Attrs
from ...ir.types import TensorType, TupleType
from ...target import Target, as_target
from ... import te, tir
from ...tir import expr as E
from .config_space import ConfigSpace, FallbackConfigEntity
from .dispatcher import ApplyConfig, DispatchContext, fused_workload, query_config, split_fused


# --- arguments <-> workload ------------------------------------------------------------------
def _attrs_classes() -> dict:
    found, todo = {}, [Attrs]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            found.setdefault(sub.__name__, []).append(sub)
            todo.append(sub)
    return found


def _encode(x):
    if isinstance(x, te.Tensor):
        return ("TENSOR", tuple(_encode_dim(d) for d in x.shape), str(x.dtype))
    if isinstance(x, Attrs):
        return ("ATTRS", type(x).__name__, tuple((k, _encode(v)) for k, v in x.items()))
    if isinstance(x, TensorType):
        return ("TYPE", tuple(_encode_dim(d) for d in x.shape), str(x.dtype))
    if isinstance(x, TupleType):
        return ("TUPLE_TYPE", tuple(_encode(f) for f in x.fields))
    if isinstance(x, (list, tuple)):
        return tuple(_encode(a) for a in x)
    if isinstance(x, (E.IntImm, E.FloatImm, E.StringImm)):
        return x.value
    if x is None or isinstance(x, (str, bool, int, float)):
        return x
    raise TuningError(f"autotvm: cannot put a {type(x).__name__} ({str(x)[:60]}) in a workload; "
                      f"use tensors, attrs, types, numbers, strings or tuples of them")


def _encode_dim(d):
    """A static dimension as its int, a symbolic one as the text of its expression."""
    if isinstance(d, (E.IntImm, int)):
        return _const_int(d)
    return str(d)


def is_static_workload(workload) -> bool:
    """Whether every tensor shape in a (serialized) workload is static, so it can be measured.

    Parameters
    ----------
    workload : tuple
        A workload as args_to_workload makes it.

    Returns
    -------
    static : bool
        False when a tensor or type in it has a symbolic dimension.
    """
    if isinstance(workload, tuple):
        if len(workload) == 3 and workload[0] in ("TENSOR", "TYPE") and isinstance(workload[1], tuple):
            return all(isinstance(d, int) for d in workload[1])
        return all(is_static_workload(item) for item in workload)
    return True


def _const_int(d) -> int:
    if isinstance(d, E.IntImm):
        return int(d.value)
    if isinstance(d, int):
        return d
    raise TuningError(f"autotvm: a tunable workload needs static shapes, got dimension {d}")


def serialize_args(args) -> tuple:
    """The hashable, JSON-able form of a template's arguments."""
    return tuple(_encode(a) for a in args)


def args_to_workload(args, task_name=None) -> tuple:
    """(task_name, *serialize_args(args)), or just the serialized args without a name."""
    args = serialize_args(args)
    return (task_name,) + args if task_name is not None else args


def _decode(x):
    if isinstance(x, tuple) and x and isinstance(x[0], str):
        tag = x[0]
        if tag == "TENSOR" and len(x) == 3:
            return te.placeholder(tuple(x[1]), str(x[2]))
        if tag == "TYPE" and len(x) == 3:
            return TensorType(tuple(x[1]), str(x[2]))
        if tag == "TUPLE_TYPE" and len(x) == 2:
            return TupleType([_decode(f) for f in x[1]])
        if tag == "ATTRS" and len(x) == 3:
            return _decode_attrs(x[1], x[2])
    if isinstance(x, tuple):
        return tuple(_decode(a) for a in x)
    return x


def _decode_attrs(name, items):
    classes = _attrs_classes().get(name, [])
    if len(classes) > 1:   # a user's class may share a built-in op's name: the library's wins
        classes = [cls for cls in classes if cls.__module__.startswith("relay_backend.")] or classes
    if len(classes) != 1:
        raise TuningError(f"autotvm: workload names attrs class {name!r}, which is "
                          f"{'unknown' if not classes else 'ambiguous'} in this relay_backend")
    try:
        return classes[0](**{str(k): _decode(v) for k, v in items})
    except (TypeError, ValueError, AttrsError) as err:
        raise TuningError(f"autotvm: workload attrs {name}{dict(items)} are invalid: {err}") from None


def deserialize_args(args) -> list:
    """serialize_args' inverse: placeholders for tensors, Attrs and TensorTypes rebuilt."""
    return [_decode(a) for a in args]


def clean_json(x):
    """A value read from JSON as serialize_args made it: lists become tuples (hashable)."""
    if isinstance(x, list):
        return tuple(clean_json(a) for a in x)
    return x


# --- templates -------------------------------------------------------------------------------
class TaskTemplate:
    """What a task name runs: a compute/schedule pair, or one customized template function.
    `module` is where it was registered (measurement workers import it to find the template)."""

    def __init__(self):
        self.fcompute = None
        self.fschedule = None
        self.fcustomized = None
        self.module = None

    def __call__(self, *args):
        args = deserialize_args(split_fused(args)[0])     # a fused function's task: the op's args
        if self.fcustomized is not None:
            return self.fcustomized(*args)
        if self.fcompute is None or self.fschedule is None:
            raise TuningError(f"autotvm template registered from {self.module}: it has no "
                              f"{'compute' if self.fcompute is None else 'schedule'} function")
        inputs = _placeholders(args)
        for tensor in inputs:
            tensor.op.attrs[TASK_ARGUMENT] = True
        if args and isinstance(args[0], Attrs):              # relay convention
            outs = with_epilogue(list(self.fcompute(*args)))
            sch = self.fschedule(args[0], outs, Target.current(allow_none=True))
        else:                                                # TVM topi convention
            out = self.fcompute(*args)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            sch = self.fschedule(outs)
        return sch, _kernel_inputs(inputs, outs) + outs


TASK_ARGUMENT = "autotvm_task_argument"   # op attr: a placeholder a task made from its workload
LAYOUT = "layout"                         # op attr: the layout a tensor is blocked in (e.g. NCHW8c)
REPLACES = "autotvm_replaces"             # op attr: the task argument a re-blocked placeholder stands for


def is_task_argument(tensor) -> bool:
    """Whether `tensor` is an input a tuning task made from its workload (not a build's): a
    template may then re-block it as the config asks (see x86_conv_nchwc), which a build may not."""
    return bool(getattr(tensor.op, "attrs", {}).get(TASK_ARGUMENT))


def tensor_layout(tensor):
    """The layout a template marked `tensor` with (None: its shape is its meaning)."""
    return getattr(tensor.op, "attrs", {}).get(LAYOUT)


def _kernel_inputs(inputs, outs) -> list:
    """The kernel's inputs: the task's arguments in order, each replaced by the placeholder a
    template made instead of it (reblocked_placeholder) when the outputs read that one."""
    replaced, seen, stack = {}, set(), [t.op for t in outs]
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        if isinstance(op, te.PlaceholderOp) and REPLACES in op.attrs:
            replaced[id(op.attrs[REPLACES].op)] = op.output(0)
        stack.extend(t.op for t in op.input_tensors())
    return [replaced.get(id(t.op), t) for t in inputs]


def reblocked_placeholder(tensor, shape, layout: str):
    """A placeholder of `shape` in `layout` standing for task argument `tensor` (a template
    whose config re-blocks its inputs reads this one instead; the kernel then takes it in
    `tensor`'s place, and a measurement compares candidates in the primal layout)."""
    new = te.placeholder(tuple(shape), tensor.dtype, name=tensor.op.name)
    new.op.attrs.update({TASK_ARGUMENT: True, REPLACES: tensor, LAYOUT: layout})
    return new


def with_epilogue(outs) -> list:
    """`outs` followed by an elementwise relu when it is one float tensor: a relay-convention
    task (an op implementation) is built and measured as fused kernels use it, with an
    elementwise stage after the op, whose loops the schedule writes the result in. Without one
    the result is copied out of the accumulator instead, which LLVM compiles very differently
    (conv2d 64x56x56 3x3, same config: 26 ms with a plain copy-out, 13 ms with a relu after it,
    13-17 ms inside the model's fused conv+bn+relu), so configs would be ranked for a kernel
    no model runs."""
    if len(outs) != 1 or not str(outs[0].dtype).startswith("float"):
        return outs
    out = outs[0]
    zero = tir.const(0, out.dtype)
    marked = {LAYOUT: tensor_layout(out)} if tensor_layout(out) else None
    return [te.compute(out.shape, lambda *i: tir.max(out[i], zero), name="measure_epilogue", tag="elemwise",
                       attrs=marked)]


def _placeholders(args) -> list:
    out, stack = [], list(reversed(args))
    while stack:
        a = stack.pop()
        if isinstance(a, te.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            stack.extend(reversed(a))
    return out


class MissingTask(TaskTemplate):
    """The template of a name nothing registered (a log from another version or program)."""

    def __init__(self, name):
        super().__init__()
        self.name = name

    def __call__(self, *args):
        raise TuningError(f"autotvm task {self.name!r} has no registered template in this process: "
                          f"import the module that defines it, or the log is out of date")


TASK_TABLE = {}


def _register(name, slot, func):
    tmpl = TASK_TABLE.setdefault(name, TaskTemplate())
    old = getattr(tmpl, slot)
    if old is not None and (old.__module__, old.__qualname__) != (func.__module__, func.__qualname__):
        raise TuningError(f"autotvm task {name!r} already has a {slot[1:]} "
                          f"({old.__module__}.{old.__qualname__})")
    setattr(tmpl, slot, func)
    tmpl.module = func.__module__
    return func


def register_task_compute(name, func):
    """Make `func` the compute of template `name`."""
    return _register(name, "fcompute", func)


def register_task_schedule(name, func):
    """Make `func` the schedule of template `name`."""
    return _register(name, "fschedule", func)


def register_customized_task(name, func):
    """Make `func` (returning (schedule, tensors)) the whole template `name`."""
    return _register(name, "fcustomized", func)


def lookup_template(name) -> TaskTemplate:
    """The template registered as `name`, or a MissingTask that says it is not."""
    return TASK_TABLE.get(name) or MissingTask(name)


def workload_config(task_name, args, kwargs) -> tuple:
    """(workload, config) of a call of tunable `task_name` with `args`: the current dispatch
    context's answer for the current target. Keyword arguments are refused: they would not be
    part of the workload."""
    if kwargs:
        raise TuningError(f"autotvm task {task_name}: keyword arguments ({sorted(kwargs)}) are not part "
                          f"of a workload; pass them positionally")
    workload = args_to_workload(args, task_name)
    return workload, query_config(Target.current(allow_none=True), workload)


# the parameters the three template decorators share (shared_parameters completes their docstrings)
TEMPLATE_DECORATOR_PARAMETERS = {
    "task_name": ("str", "The task's name (the first item of its workloads and records)."),
    "func": ("callable", "The function to decorate; None returns the decorator."),
}


@shared_parameters(TEMPLATE_DECORATOR_PARAMETERS)
def template(task_name, func=None):
    """Decorate `f(*args) -> (schedule, [tensors])` as tunable template `task_name`; inside it
    `autotvm.get_config()` is the config the current dispatch context chose.

    Returns
    -------
    decorated : callable
        The wrapper, or a decorator making it.
    """
    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            _, cfg = workload_config(task_name, args, kwargs)
            with ApplyConfig(cfg):
                return f(*args)
        register_customized_task(task_name, f)
        return wrapper
    return decorate(func) if func is not None else decorate


def get_config():
    """The config of the template being run (from the current dispatch context)."""
    return DispatchContext.current.query(Target.current(allow_none=True), None)


# --- tasks -----------------------------------------------------------------------------------
class Task:
    """A tunable task: template `name` with serialized `args`; `config_space` and `flop` once
    created with `create`. `fused_functions` holds, for a task extract_from_program found, the
    primitive (fused) functions of the program whose anchor it is, as (JSON text, calls): a
    measurement then times those kernels, each with its real epilogue (bias, residual add,
    relu...), weighted by its calls, instead of the template with a relu after it."""

    def __init__(self, name, args):
        self.name = name
        self.args = tuple(args)
        self.kwargs = {}
        self.config_space = None
        self.func = lookup_template(name)
        self.flop = None
        self.target = None
        self.target_host = None
        self.fused_functions = ()

    @property
    def workload(self) -> tuple:
        return (self.name,) + self.args

    @property
    def template_module(self):
        """The module that registered this task's template (None when unknown here)."""
        return getattr(self.func, "module", None)

    def instantiate(self, config):
        """(schedule, [input tensors..., output tensors...]) of the template under `config`."""
        config.flop = 0
        with ApplyConfig(config), (self.target or Target.current() or as_target("llvm")):
            sch, arg_bufs = self.func(*self.args)
        if not self.flop:
            config.flop = config.flop or compute_flop(sch)
            self.flop = config.flop
        return sch, arg_bufs

    def __repr__(self) -> str:
        return f"Task(func_name={self.name}, args={self.args}, workload={self.workload})"


def create(task_name, args, target, target_host=None) -> Task:
    """A Task whose config_space holds every knob its template defines for `args` (named as
    its compute names them: a template whose config re-blocks its inputs is named by the
    default blocking, see register_topi_compute's workload_args)."""
    naming = getattr(lookup_template(task_name).fcompute, "workload_args", None)
    serialized, digest = split_fused(serialize_args(args))
    if naming is not None:
        serialized = serialize_args(naming(tuple(deserialize_args(serialized))))
    task = Task(task_name, serialized if digest is None else fused_workload(serialized, digest))
    task.target = as_target(target)
    if target_host is not None:
        task.target = task.target.with_host(target_host)
    task.target_host = task.target.host
    task.config_space = ConfigSpace()
    with ApplyConfig(task.config_space), task.target:
        sch, _ = task.func(*task.args)
    task.config_space.code_hash = getattr(sch, "code_hash", None)
    task.flop = task.config_space.flop or compute_flop(sch)
    return task


LAYOUT_KNOB_PREFIX = "block_"   # knobs that choose a layout AlterOpLayout applies (x86_blocks)


def layout_knobs_of(config) -> dict:
    """{knob: repr} of the knobs of `config` that choose a layout (LAYOUT_KNOB_PREFIX)."""
    return {k: repr(config[k]) for k in config if k.startswith(LAYOUT_KNOB_PREFIX)}


def keep_default_layouts(task) -> None:
    """Restrict the space of `task` to the configs with its default layouts (the blocks of its
    fallback config): a fused function of the program was built on those layouts, so only
    those configs can be measured on it (a config with other blocks needs other layouts around
    the kernel, which only a whole build makes)."""
    fallback = FallbackConfigEntity()
    task.instantiate(fallback)
    wanted = layout_knobs_of(fallback)
    if wanted:
        task.config_space.restrict(lambda entities: all(repr(entities[k]) == v for k, v in wanted.items()))


# --- flop count ------------------------------------------------------------------------------
_ARITH = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Max, E.Min)


def _count_ops(expr) -> int:
    """Arithmetic nodes of an expression (index arithmetic included, as TVM's count does)."""
    from ...tir.functor import walk
    total = 0
    for node in walk(expr):
        if isinstance(node, _ARITH) and str(getattr(node, "dtype", "")).startswith("float"):
            total += 1
        elif isinstance(node, E.Call) and str(getattr(node, "dtype", "")).startswith("float"):
            total += 1
    return total


def compute_flop(sch) -> int:
    """Floating-point operations of the compute stages of `sch` (every output element times the
    float operations of its body; a reduction counts its reduce extent times source + combine)."""
    total = 0
    for stage in sch.stages:
        op = stage.op
        if not isinstance(op, te.ComputeOp):
            continue
        points = math.prod(_const_int(iv.dom.extent) for iv in op.axis)
        for body in op.body:
            if isinstance(body, E.Reduce):
                inner = math.prod(_const_int(iv.dom.extent) for iv in body.axis)
                total += points * inner * (_count_ops(body.source[body.value_index]) + 1)
            else:
                total += points * _count_ops(body)
    return total
