"""Annotation operators (tvm.relay.annotation): identities that tell passes something.

    y = relay.annotation.stop_fusion(relay.exp(x))       # FuseOps ends a group here
    y = relay.annotation.on_device(y, relay.cpu())        # the device a value lives on
    f = relay.annotation.function_on_device(f, ["cpu"], "cpu")
    y = relay.annotation.compiler_begin(x, "ccompiler")   # region markers for partitioning
    y = relay.annotation.checkpoint(y)                    # recompute point for AD

Every one is an identity on its tensor (type, numpy reference and te compute), OPAQUE as in
TVM, so none fuses with its neighbours. FuseOps removes `stop_fusion` after grouping, so the
producer and the consumers it separated are two kernels with nothing in between.
`on_device` and `function_on_device` are consumed by transform.PlanDevices: this build runs a
module on one device, so they are accepted when they name that device and rejected with a
clear error when they name a second one. compiler_begin / compiler_end carry the external
compiler's name; left in a program they run as identity kernels (as TVM's compute does).
"""
import dataclasses

from .. import te
from ..errors import AttrsError
from ..ir.attrs import Attrs
from ..ir.expr import Function
from ..runtime.device import Device, device as _make_device
from . import samples as S
from .constructor_docs import documented
from .pattern import OpPattern
from .registry import defop
from .relations import identity_rel

STOP_FUSION = "annotation.stop_fusion"
PARAM_DEVICES_ATTR = "param_virtual_devices"      # TVM's attr keys (device type per parameter,
RESULT_DEVICE_ATTR = "result_virtual_device"      # and of the result)


def _identity_ref(x, attrs):
    return x.copy()


def _identity_compute(attrs, inputs, out_type):
    x = inputs[0]
    return [te.compute(x.shape, lambda *i: x[i], name="identity", tag="identity")]


def _device_type(dev, what: str) -> int:
    """The device type (1 cpu, 2 cuda) of a Device, a name ("cpu", "cuda") or a type number."""
    if isinstance(dev, Device):
        return dev.device_type
    try:
        return _make_device(dev, 0).device_type
    except (ValueError, TypeError, KeyError) as err:
        raise AttrsError(f"{what}: {dev!r} is not a device (use relay_backend.cpu(), \"cpu\", "
                         f"\"cuda\" or a device type number): {err}") from None


@dataclasses.dataclass(frozen=True)
class CompilerAttrs(Attrs):
    """The external compiler a compiler_begin / compiler_end region is meant for.

    Parameters
    ----------
    compiler : str
        The name of the external compiler (BYOC codegen), as "ccompiler". Defaults to "".
    """
    compiler: str = ""


@dataclasses.dataclass(frozen=True)
class OnDeviceAttrs(Attrs):
    """The attributes of on_device: where a value lives and what the constraint binds.

    Parameters
    ----------
    device_type : int
        The device type number (1 cpu, 2 cuda), at least 1. Defaults to 1.
    device_id : int
        The device's index among devices of that type. Defaults to 0.
    constrain_result : bool
        Whether the result of the annotated expression must be on the device. Defaults to False.
    constrain_body : bool
        Whether the annotated expression itself must be computed on the device. Defaults to True.
    """
    device_type: int = 1
    device_id: int = 0
    constrain_result: bool = False
    constrain_body: bool = True

    def __post_init__(self):
        if isinstance(self.device_type, bool) or not isinstance(self.device_type, int) or self.device_type < 1:
            raise AttrsError(f"on_device: device_type must be a device type number >= 1, got "
                             f"{self.device_type!r}")


def _samples(rng):
    return S.unary(("float32", "int32", "float64"))(rng)


def _compiler_samples(rng):
    return [s._replace(attrs=CompilerAttrs("ccompiler")) for s in _samples(rng)]


def _on_device_samples(rng):
    return [s._replace(attrs=OnDeviceAttrs(1, 0)) for s in _samples(rng)]


_COMMON = dict(inputs=("data",), rel=identity_rel, pattern=OpPattern.OPAQUE, ref=_identity_ref,
               level=10, compute=_identity_compute)
STOP_FUSION_OP = defop(STOP_FUSION, samples=_samples, **_COMMON)
CHECKPOINT_OP = defop("annotation.checkpoint", samples=_samples, **_COMMON)
COMPILER_BEGIN_OP = defop("annotation.compiler_begin", attrs=CompilerAttrs, samples=_compiler_samples,
                          **_COMMON)
COMPILER_END_OP = defop("annotation.compiler_end", attrs=CompilerAttrs, samples=_compiler_samples,
                        **_COMMON)
ON_DEVICE_OP = defop("on_device", attrs=OnDeviceAttrs, samples=_on_device_samples, **_COMMON)


def stop_fusion(data):
    """`data`, with fusion stopped here (tvm.relay.annotation.stop_fusion).

    FuseOps puts the producer of `data` and its consumers in different kernels.

    Parameters
    ----------
    data : relay.Expr
        The expression at which fusion stops.

    Returns
    -------
    result : relay.Expr
        `data`, annotated; it computes the same value.
    """
    return STOP_FUSION_OP(data)


def checkpoint(data):
    """`data`, marked as a checkpoint (tvm.relay.annotation.checkpoint).

    Gradient passes recompute the marked expression from its inputs rather than keep its
    intermediate values.

    Parameters
    ----------
    data : relay.Expr
        The expression to checkpoint.

    Returns
    -------
    result : relay.Expr
        `data`, annotated; it computes the same value.
    """
    return CHECKPOINT_OP(data)


# what compiler_begin and compiler_end share (constructor_docs completes their docstrings)
REGION_PARAMETERS = {"compiler": ("str", "The name of the external compiler the region is meant for.")}
REGION_MARK = ("result", "relay.Expr", "`data`, annotated; it computes the same value.")


@documented(REGION_PARAMETERS, REGION_MARK)
def compiler_begin(data, compiler):
    """`data`, marked as entering a region for an external compiler (annotation.compiler_begin).

    Parameters
    ----------
    data : relay.Expr
        The value flowing into the region.
    """
    return COMPILER_BEGIN_OP(data, attrs=CompilerAttrs(str(compiler)))


@documented(REGION_PARAMETERS, REGION_MARK)
def compiler_end(data, compiler):
    """`data`, marked as leaving a region for an external compiler (annotation.compiler_end).

    Parameters
    ----------
    data : relay.Expr
        The value flowing out of the region.
    """
    return COMPILER_END_OP(data, attrs=CompilerAttrs(str(compiler)))


def on_device(body, device, constrain_result=False, constrain_body=True):
    """`body`, annotated to live on a device (tvm.relay.annotation.on_device).

    PlanDevices checks the annotation names the module's one device.

    Parameters
    ----------
    body : relay.Expr
        The expression to annotate.
    device : Device or str or int
        The device: a Device (relay_backend.cpu()), "cpu" / "cuda", or a device type number.
    constrain_result : bool, optional
        Whether the result of `body` must be on the device. Defaults to False.
    constrain_body : bool, optional
        Whether `body` itself must be computed on the device. Defaults to True.

    Returns
    -------
    result : relay.Expr
        `body`, annotated; it computes the same value.
    """
    dev_type = _device_type(device, "on_device")
    dev_id = device.device_id if isinstance(device, Device) else 0
    return ON_DEVICE_OP(body, attrs=OnDeviceAttrs(dev_type, dev_id, bool(constrain_result),
                                                  bool(constrain_body)))


def function_on_device(function, param_devices, result_device):
    """`function` with the device of each parameter and of its result recorded in its attrs
    (tvm.relay.annotation.function_on_device); PlanDevices checks them.

    Parameters
    ----------
    function : relay.Function
        The function to annotate.
    param_devices : list of Device or str or int
        One device per parameter of `function`, in order.
    result_device : Device or str or int
        The device the function's result lives on.

    Returns
    -------
    result : relay.Function
        A copy of `function` carrying the device attrs.
    """
    if not isinstance(function, Function):
        raise AttrsError(f"function_on_device: expected a Function, got {type(function).__name__}")
    params = [_device_type(d, "function_on_device") for d in param_devices]
    if len(params) != len(function.params):
        raise AttrsError(f"function_on_device: {len(params)} parameter device(s) for a function of "
                         f"{len(function.params)} parameter(s)")
    result = _device_type(result_device, "function_on_device")
    return function.with_attr(PARAM_DEVICES_ATTR, tuple(params)).with_attr(RESULT_DEVICE_ATTR, result)


__all__ = ["stop_fusion", "checkpoint", "compiler_begin", "compiler_end", "on_device",
           "function_on_device", "CompilerAttrs", "OnDeviceAttrs", "STOP_FUSION", "PARAM_DEVICES_ATTR",
           "RESULT_DEVICE_ATTR"]
