"""Tuning tasks of a Relay program (autotvm.task.extract_from_program).

The program goes through the same optimisation pipeline as a build for `target` at opt_level 3
(as TVM extracts at opt_level 3; the current PassContext's required / disabled passes and config
are kept): params bound, folded, layouts altered (x86: the convolutions become
nn.contrib_conv2d_NCHWc with packed weights, a dense on a constant weight
nn.contrib_dense_pack), fused. So the tasks are the implementations a build at opt_level 3
selects, on the shapes it selects them for. Then each primitive function's op calls select their implementation with the
TaskExtractEnv tracing, so every tunable implementation valid for a call (not only the one
that would be chosen, as in TVM) contributes a task. One task per distinct (implementation,
shapes, dtypes, attrs); nothing is compiled with LLVM. Each task keeps the primitive
functions it was found in (task.fused_functions, with their call counts), so a measurement
times the kernels the program runs, epilogues included, and its space keeps the configs on the
layouts those functions were built with (task.keep_default_layouts).
"""

from ...diagnostics import get_logger
from ...errors import TuningError
from ...ir.expr import Call, Function
from ...ir.functor import all_nodes_post_order
from ...ir.serialization import save_json
from ...ir.module import IRModule
from ...target import as_target
from ...te_compiler.lower import lower_to_te
from ...transform.bind_params import bind_params_to_main
from ...transform.pass_infra import PassContext
from ...transform.pipeline import default_pipeline
from .. import env as env_module
from .dispatcher import DispatchContext, FallbackContext
from .task import create, keep_default_layouts
from .topi_integration import TaskExtractEnv

logger = get_logger("autotvm")     # relay_backend.autotvm (TVM: "autotvm")
EXTRACT_OPT_LEVEL = 3               # the opt_level tasks are extracted at (TVM's)


def _primitive_functions(mod) -> list:
    """The primitive functions called in `mod`, in the order the calls run, each with the
    number of calls of it."""
    found, calls = [], {}
    for _, func in mod.functions.items():
        for node in all_nodes_post_order(func):
            callee = node.op if isinstance(node, Call) else None
            if isinstance(callee, Function) and callee.is_primitive:
                if id(callee) not in calls:
                    found.append(callee)
                calls[id(callee)] = calls.get(id(callee), 0) + 1
    return [(func, calls[id(func)]) for func in found]


def _optimized(mod, params, target):
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise TuningError(f"extract_from_program: expected an IRModule or a Function, got {type(mod).__name__}")
    mod = bind_params_to_main(mod, params, "extract_from_program")
    current = PassContext.current()
    with PassContext(opt_level=max(EXTRACT_OPT_LEVEL, current.opt_level), required_pass=current.required_pass,
                     disabled_pass=current.disabled_pass, config=current.config):
        return default_pipeline(target=target, device_type=target.device_type)(mod)


def extract_from_program(mod, params, target, target_host=None, ops=None, measure_in_program=True,
                         per_fused_function=False) -> list:
    """The tuning tasks of `mod` (an IRModule or a Function) compiled for `target`; `ops`
    (op names or ops) keeps only the tasks of those operators. With `measure_in_program` (the
    default) each task is measured as the program's fused kernels that hold it, on their
    layouts (see the module doc); False measures the template alone, with every layout knob
    (e.g. channel blocks) in its space. `per_fused_function` (with measure_in_program) makes
    one task per fused function rather than per op workload: two kernels of one convolution
    shape with different epilogues are tuned apart, and a build asks for the function's own
    record before the op's (dispatcher.fused_function_scope)."""
    return extract_from_multiple_program([mod], [params], target, target_host, ops, measure_in_program,
                                         per_fused_function)


def extract_from_multiple_program(mods, params, target, target_host=None, ops=None, measure_in_program=True,
                                  per_fused_function=False) -> list:
    """The tuning tasks of several programs (each task once); `measure_in_program` and
    `per_fused_function` as in extract_from_program."""
    target = as_target(target)
    if target_host is not None:
        target = target.with_host(target_host)
    wanted = None if ops is None else {getattr(op, "name", op) for op in ops}
    env = TaskExtractEnv.get()
    env.reset(wanted, per_function=per_fused_function and measure_in_program)
    scope = env_module.GLOBAL_SCOPE
    old_silent, scope.silent = scope.silent, True     # no untuned warnings while extracting
    try:
        with env:
            for mod, param in zip(mods, params):
                for func, calls in _primitive_functions(_optimized(mod, param, target)):
                    env.current_function = (save_json(func), calls)
                    with target:
                        lower_to_te(func, target)
    finally:
        scope.silent = old_silent
        env.current_function = None
    if isinstance(DispatchContext.current, FallbackContext):
        DispatchContext.current.memory.clear()      # tasks are made fresh below
    tasks = []
    for name, args in env.get_tasks():
        task = create(name, args, target)
        task.fused_functions = env.functions_of(name, task.args) if measure_in_program else ()
        if task.fused_functions:
            keep_default_layouts(task)
        tasks.append(task)
    return tasks
