"""Implementation selection: the valid specializations' implementations, highest plevel wins
(the first one on ties, as Python's max keeps it)."""
from ..docstrings import shared_parameters
from ..errors import CompileError
from ..strategy import op_strategy


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


@shared_parameters(CALL_PARAMETERS)
def select_implementation(op, attrs, inputs, out_type, target):
    """The best implementation of an op for one call (highest plevel), and its output tensors.

    Returns
    -------
    result : tuple
        (the OpImplementation, its list of output te tensors); CompileError when no
        implementation fits.
    """
    impls = get_valid_implementations(op, attrs, inputs, out_type, target)
    if not impls:
        missing = "" if op.compute is not None or op.fstrategy is not None else f" ({op.missing('compute')})"
        raise CompileError(f"No valid {op.name} implementations for {target}{missing}")
    best = max(impls, key=lambda impl: impl.plevel)
    outputs = best.compute(attrs, list(inputs), out_type)
    return best, list(outputs)
