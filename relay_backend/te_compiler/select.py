"""Implementation selection: the valid specializations' implementations, highest plevel wins
(the first one on ties, as Python's max keeps it)."""
from ..errors import CompileError
from ..strategy import op_strategy


def _condition_holds(condition, attrs, inputs, out_type) -> bool:
    try:
        return bool(condition(attrs, inputs, out_type))
    except (TypeError, ValueError, AttributeError):
        return False  # undecidable (e.g. a symbolic dim): the specialization does not apply


def get_valid_implementations(op, attrs, inputs, out_type, target) -> list:
    """Every implementation of `op` whose specialization condition holds for this call."""
    strategy = op_strategy(op, attrs, inputs, out_type, target)
    impls = []
    for spec in strategy.specializations:
        if spec.condition is None or _condition_holds(spec.condition, attrs, inputs, out_type):
            impls.extend(spec.implementations)
    return impls


def select_implementation(op, attrs, inputs, out_type, target):
    """(best implementation, its output te tensors) for one op call."""
    impls = get_valid_implementations(op, attrs, inputs, out_type, target)
    if not impls:
        missing = "" if op.compute is not None or op.fstrategy is not None else f" ({op.missing('compute')})"
        raise CompileError(f"No valid {op.name} implementations for {target}{missing}")
    best = max(impls, key=lambda impl: impl.plevel)
    outputs = best.compute(attrs, list(inputs), out_type)
    return best, list(outputs)
