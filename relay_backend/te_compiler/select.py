"""Implementation selection, as relay.backend.te_compiler.select_implementation.

Without autotvm: the valid specializations' implementations, highest plevel wins (the first
one on ties, as Python's max keeps it). With autotvm (the default): every tunable
implementation (an autotvm template) computes its outputs and asks the current dispatch
context for its config; the tuned one with the lowest measured cost wins. When none has a
record the highest plevel wins, and if that one is tunable Relay's warning "One or more
operators have not been tuned..." is logged once per build (autotvm/env.py).
"""
import contextlib

from ..autotvm import env as autotvm_env
from ..autotvm.task.dispatcher import query_config
from ..autotvm.task.topi_integration import TaskExtractEnv, get_workload
from ..diagnostics import get_logger
from ..docstrings import shared_parameters
from ..errors import CompileError
from ..strategy import op_strategy
from ..target import Target, as_target

logger = get_logger("te_compiler")     # relay_backend.te_compiler (TVM: "te_compiler")


def _condition_holds(condition, attrs, inputs, out_type) -> bool:
    try:
        return bool(condition(attrs, inputs, out_type))
    except (TypeError, ValueError, AttributeError):
        return False  # undecidable (e.g. a symbolic dim): the specialization does not apply


# the description of one op call both functions take (shared_parameters completes their docstrings)
CALL_PARAMETERS = {
    "op": ("OpDef", "The operator."),
    "attrs": ("Attrs", "The call's attributes."),
    "inputs": ("list of te.Tensor", "The te tensors of its arguments."),
    "out_type": ("Type", "The type of its result."),
    "target": ("Target", "The target whose strategy is asked."),
}


@shared_parameters(CALL_PARAMETERS)
def get_valid_implementations(op, attrs, inputs, out_type, target) -> list:
    """Every implementation of an op whose specialization condition holds for one call.

    Returns
    -------
    implementations : list of OpImplementation
        The candidates.
    """
    strategy = op_strategy(op, attrs, inputs, out_type, target)
    impls = []
    for spec in strategy.specializations:
        if spec.condition is None or _condition_holds(spec.condition, attrs, inputs, out_type):
            impls.extend(spec.implementations)
    return impls


def is_tunable(impl) -> bool:
    """Whether an implementation's compute is an autotvm template (register_topi_compute).

    Parameters
    ----------
    impl : OpImplementation
        The implementation.

    Returns
    -------
    tunable : bool
        True when its compute asks the dispatch context for a config.
    """
    return getattr(impl.compute, "autotvm_task_name", None) is not None


@shared_parameters(CALL_PARAMETERS)
def select_implementation(op, attrs, inputs, out_type, target, use_autotvm=True):
    """The best implementation of an op for one call, and its output tensors.

    Without autotvm the highest plevel wins; with it, the tunable implementation whose record
    (in the current dispatch context) has the lowest cost, else the highest plevel.

    Parameters
    ----------
    use_autotvm : bool, optional
        Whether to consult the autotvm dispatch context. Defaults to True.

    Returns
    -------
    result : tuple
        (the OpImplementation, its list of output te tensors); CompileError when no
        implementation fits.
    """
    target = as_target(target)
    impls = get_valid_implementations(op, attrs, inputs, out_type, target)
    if not impls:
        missing = "" if op.compute is not None or op.fstrategy is not None else f" ({op.missing('compute')})"
        raise CompileError(f"No valid {op.name} implementations for {target}{missing}")
    best_plevel = max(impls, key=lambda impl: impl.plevel)
    current = Target.current(allow_none=True)
    with (target if current is None or str(current) != str(target) else contextlib.nullcontext()), \
            _tracing_only_wanted(op):
        if not use_autotvm or not any(is_tunable(i) for i in impls):
            logger.info("Using %s for %s based on highest priority (%d)", best_plevel.name, op.name,
                        best_plevel.plevel)
            return best_plevel, list(best_plevel.compute(attrs, list(inputs), out_type))
        return _select_tuned(op, attrs, inputs, out_type, target, impls, best_plevel)


@contextlib.contextmanager
def _tracing_only_wanted(op):
    """While task extraction traces, an op outside its `ops` list adds no task."""
    env = TaskExtractEnv.current
    pause = env is not None and env.tracing and env.wanted_relay_ops is not None \
        and op.name not in env.wanted_relay_ops
    if pause:
        env.tracing = False
    try:
        yield
    finally:
        if pause:
            env.tracing = True


def _select_tuned(op, attrs, inputs, out_type, target, impls, best_plevel):
    outputs, workloads = {}, {}
    best, best_cfg = None, None
    scope = autotvm_env.GLOBAL_SCOPE
    old_silent, scope.silent = scope.silent, True
    try:
        for impl in impls:
            if not is_tunable(impl) and impl is not best_plevel:
                continue
            outs = list(impl.compute(attrs, list(inputs), out_type))
            outputs[id(impl)] = outs
            workload = workloads[id(impl)] = get_workload(outs)
            if workload is None:
                continue
            cfg = query_config(target, workload)
            if cfg.is_fallback:
                continue
            logger.info("Implementation %s for %s has cost %.2e", impl.name, op.name, cfg.cost or 0.0)
            if best_cfg is None or (best_cfg.cost or 0.0) > (cfg.cost or 0.0):
                best, best_cfg = impl, cfg
    finally:
        scope.silent = old_silent
    if best is not None:
        logger.info("Using %s for %s based on lowest cost (%.2e)", best.name, op.name, best_cfg.cost or 0.0)
        return best, outputs[id(best)]
    if workloads.get(id(best_plevel)) is not None:
        autotvm_env.note_untuned(target, workloads[id(best_plevel)])
    logger.info("Using %s for %s based on highest priority (%d)", best_plevel.name, op.name, best_plevel.plevel)
    return best_plevel, outputs[id(best_plevel)]
