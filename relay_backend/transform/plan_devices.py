"""PlanDevices: settle the device of every value, here for a module that runs on one device.

TVM's PlanDevices solves device constraints across heterogeneous targets; this build runs a
whole module on one device, so planning means checking. Every `on_device(x, dev)` annotation
and every `function_on_device` attribute must name one and the same device type, the one the
module is compiled for when the caller says (`device_type`); a second device type is a
RelayError naming both and the annotation. The annotations are then removed (on_device(x)
becomes x, the function attributes are dropped), as TVM's pass removes them, so later passes
and the executors never see them.
"""
from ..errors import RelayError
from ..ir.excerpt import excerpt
from ..ir.expr import Call, Function
from ..ir.functor import ExprMutator, all_nodes_post_order
from ..op.annotation import PARAM_DEVICES_ATTR, RESULT_DEVICE_ATTR
from ..op.registry import OpDef
from ..runtime.device import DEVICE_NAMES
from .pass_infra import module_pass

ON_DEVICE = "on_device"


def _name(device_type: int) -> str:
    return DEVICE_NAMES.get(device_type, f"device type {device_type}")


class _DeviceChecker:
    """The one device type of a module: the given one, else the first one annotated."""

    def __init__(self, device_type=None):
        self.device_type = device_type
        self.first = None            # where the device type was first seen (for the message)

    def see(self, device_type: int, where: str) -> None:
        if self.device_type is None:
            self.device_type, self.first = device_type, where
            return
        if device_type != self.device_type:
            origin = f"(from {self.first})" if self.first else "(the device the module is compiled for)"
            raise RelayError(f"PlanDevices: {where} puts a value on {_name(device_type)}, but this module "
                             f"runs on {_name(self.device_type)} {origin}; this build executes a module on "
                             f"one device: remove the annotation or compile for {_name(device_type)}")


class _StripOnDevice(ExprMutator):
    """on_device(x) -> x after checking its device; function_on_device attrs are checked and dropped."""

    def __init__(self, checker: _DeviceChecker):
        super().__init__()
        self.checker = checker

    def visit_call(self, call):
        if isinstance(call.op, OpDef) and call.op.name == ON_DEVICE:
            self.checker.see(call.attrs.device_type, f"on_device in `{excerpt(call)}`")
            return self.visit(call.args[0])
        return super().visit_call(call)

    def visit_function(self, fn):
        new = super().visit_function(fn)
        return strip_function_devices(new, self.checker)


def strip_function_devices(fn: Function, checker: _DeviceChecker) -> Function:
    """`fn` without its function_on_device attributes, after checking the devices they name."""
    params = fn.attrs.get(PARAM_DEVICES_ATTR)
    result = fn.attrs.get(RESULT_DEVICE_ATTR)
    if params is None and result is None:
        return fn
    for i, dev in enumerate(params or ()):
        checker.see(int(dev), f"function_on_device (parameter {i})")
    if result is not None:
        checker.see(int(result), "function_on_device (result)")
    attrs = {k: v for k, v in fn.attrs.items() if k not in (PARAM_DEVICES_ATTR, RESULT_DEVICE_ATTR)}
    return Function(fn.params, fn.body, fn.ret_type, fn.type_params, attrs)


def _has_annotations(mod) -> bool:
    for fn in mod.functions.values():
        if not isinstance(fn, Function):
            continue
        for node in all_nodes_post_order(fn):
            if isinstance(node, Call) and isinstance(node.op, OpDef) and node.op.name == ON_DEVICE:
                return True
            if isinstance(node, Function) and (PARAM_DEVICES_ATTR in node.attrs or RESULT_DEVICE_ATTR in node.attrs):
                return True
    return False


def PlanDevices(device_type=None):  # noqa: N802 - tvm.relay naming
    """Module pass (opt_level 0): check that on_device / function_on_device annotations name one
    device, and remove them (one device per module here).

    Parameters
    ----------
    device_type : int, optional
        The device the module is built for (1 cpu, 2 cuda); annotations must name it. None
        (the default) only requires them to agree with each other.

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """
    def transform(mod, ctx):
        if not _has_annotations(mod):
            return mod
        checker = _DeviceChecker(device_type)
        out = mod.copy()
        for gv, fn in list(mod.functions.items()):
            if isinstance(fn, Function):
                out[gv] = _StripOnDevice(checker).visit(fn)
        return out

    return module_pass(transform, opt_level=0, name="PlanDevices")


__all__ = ["PlanDevices"]
