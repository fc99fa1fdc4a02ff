"""relay.op.op: defining and adjusting operators from user code, with TVM's Python API.

    relay.op.register("my_add1", "x + 1")
    op = relay.op.get("my_add1")
    op.set_num_inputs(1)
    op.add_argument("data", "Tensor", "the input")
    op.add_type_rel("Identity")                       # or add_type_rel("MyRel", fn)
    op.set_support_level(10)
    relay.op.register_pattern("my_add1", relay.op.OpPattern.ELEMWISE)
    relay.op.register_compute("my_add1", lambda attrs, inputs, out_type: [...te tensors...])
    relay.op.register_reference("my_add1", lambda x, attrs: x + 1)

Each register_* attaches one TVM op attribute (op_attrs.py maps them onto OpDef fields), so a
user op is a registry entry like any built-in one: InferType calls its relation, FuseOps groups
it by its pattern, selection picks its highest-plevel implementation, the debug interpreter runs
its numpy reference (relay_backend's own `register_reference`; TVM has no oracle), and it
prints and parses by name. A piece an executor needs but the op lacks is reported when it is
needed, naming the register_* call that adds it. Ops inside the package are declared in one
block with defop instead (docs/adding_an_operator.md).
"""
from . import registry
from .op_strategy import OpImplementation, OpSpecialization, OpStrategy
from .pattern import OpPattern
from .op_attrs import GENERIC_SCHEDULES
from .registry import get, register_gradient, register_op_attr


def register(op_name: str, describe: str = "") -> None:
    """Create a new, empty operator called `op_name` (tvm.relay.op.register); a name already
    registered is an error."""
    registry.register_user_op(op_name, describe)


def register_compute(op_name: str, compute=None, level: int = 10):
    """compute(attrs, inputs: [te.Tensor], out_type) -> [te.Tensor] (FTVMCompute); usable as a
    decorator. With a pattern, it gives the op a generic implementation on every target."""
    return register_op_attr(op_name, "FTVMCompute", compute, level)


def register_strategy(op_name: str, fstrategy=None, level: int = 10):
    """fstrategy(attrs, inputs, out_type, target) -> OpStrategy (FTVMStrategy): the op's own
    implementations, which replace the generic one; the highest plevel is chosen."""
    return register_op_attr(op_name, "FTVMStrategy", fstrategy, level)


def register_schedule(op_name: str, schedule, level: int = 10):
    """schedule(attrs, outs, target) -> te.Schedule for the op's compute (FTVMSchedule)."""
    return register_op_attr(op_name, "FTVMSchedule", schedule, level)


def register_injective_schedule(op_name: str, level: int = 10):
    """Schedule the op's compute with the generic injective schedule."""
    return register_op_attr(op_name, "FTVMSchedule", "injective", level)


def register_broadcast_schedule(op_name: str, level: int = 10):
    """Schedule the op's compute with the generic broadcast (injective) schedule."""
    return register_op_attr(op_name, "FTVMSchedule", "broadcast", level)


def register_reduce_schedule(op_name: str, level: int = 10):
    """Schedule the op's compute with the generic reduction schedule."""
    return register_op_attr(op_name, "FTVMSchedule", "reduce", level)


def register_pattern(op_name: str, pattern, level: int = 10):
    """How the op fuses (TOpPattern): an OpPattern or its int value."""
    return register_op_attr(op_name, "TOpPattern", pattern, level)


def register_shape_func(op_name: str, data_dependent, shape_func=None, level: int = 10):
    """The op's output shape at run time, for the VM (FShapeFunc).

    A data-independent op needs none: its type relation runs on the concrete input shapes. For a
    data-dependent op (`data_dependent` true, or a list with any true entry) give
    shape_func(attrs, input_arrays) -> output type, called with the inputs' values."""
    if isinstance(data_dependent, (list, tuple)):
        data_dependent = any(data_dependent)
    get(op_name).set_attr("TShapeDataDependent", bool(data_dependent), level)
    return register_op_attr(op_name, "FShapeFunc", shape_func, level)


def register_reference(op_name: str, fref=None, level: int = 10):
    """fref(*numpy_inputs, attrs) -> numpy array (or tuple): the op's meaning in numpy, which the
    debug executor runs and FoldConstant folds with (FReference, relay_backend's own key)."""
    return register_op_attr(op_name, "FReference", fref, level)


def register_stateful(op_name: str, stateful: bool, level: int = 10):
    """Mark the op stateful (TOpIsStateful): FoldConstant leaves its calls alone."""
    return register_op_attr(op_name, "TOpIsStateful", bool(stateful), level)


class TempOpAttr:
    """Change an attribute of an op inside a `with` block (tvm's TempOpAttr); the old value is
    restored on the way out, also when the block raises.

        with TempOpAttr("nn.relu", "TOpPattern", OpPattern.OPAQUE):
            mod = relay.transform.FuseOps()(mod)
    """

    def __init__(self, op_name: str, attr_key: str, attr_value):
        self.op = get(op_name)
        self.attr_key = attr_key
        self.attr_value = attr_value
        self.older = None

    def __enter__(self):
        self.older = self.op.get_attr(self.attr_key)
        self.older_level = self.op.attr_level(self.attr_key)
        self.op.reset_attr(self.attr_key)
        self.op.set_attr(self.attr_key, self.attr_value)
        return self

    def __exit__(self, exc_type, exc, trace):
        self.op.reset_attr(self.attr_key)
        if self.older is not None:
            self.op.set_attr(self.attr_key, self.older, self.older_level or 10)
        return False


__all__ = ["get", "register", "register_compute", "register_strategy", "register_schedule",
           "register_injective_schedule", "register_broadcast_schedule", "register_reduce_schedule",
           "register_pattern", "register_shape_func", "register_gradient", "register_reference",
           "register_stateful", "register_op_attr", "TempOpAttr", "OpPattern", "OpStrategy",
           "OpImplementation", "OpSpecialization", "GENERIC_SCHEDULES"]
