"""Devices: where an NDArray lives and where a kernel runs (tvm.runtime.Device)."""
from dataclasses import dataclass

from ..errors import InputError, TargetError
from ..target import Target, as_target

DEVICE_TYPES = {"cpu": 1, "cuda": 2}
DEVICE_NAMES = {v: k for k, v in DEVICE_TYPES.items()}


@dataclass(frozen=True)
class Device:
    """A device: a device type (1 = cpu, 2 = cuda, as DLPack numbers them) and an index
    (tvm.runtime.Device). relay_backend.cpu() and relay_backend.cuda() make one.

    Parameters
    ----------
    device_type : int
        The DLPack device type number: 1 for the CPU, 2 for CUDA.
    device_id : int, optional
        The index of the device among those of its type. Defaults to 0.
    """

    device_type: int
    device_id: int = 0

    def __post_init__(self):
        if self.device_type not in DEVICE_NAMES:
            raise ValueError(f"unknown device type {self.device_type}; known: {DEVICE_TYPES}")

    @property
    def name(self) -> str:
        """The kind of device as a name: "cpu" or "cuda"."""
        return DEVICE_NAMES[self.device_type]

    def __repr__(self) -> str:
        return f"{self.name}({self.device_id})"


def cpu(dev_id: int = 0) -> Device:
    """The CPU device (tvm.cpu).

    Parameters
    ----------
    dev_id : int, optional
        The device index (there is one CPU device; kept for TVM's signature). Defaults to 0.

    Returns
    -------
    device : Device
        Device(1, dev_id).
    """
    # one object for the common cpu(0): runtimes compare devices on every call, and identity
    # is the cheap first test (Device is frozen, so sharing it is safe)
    return _CPU0 if dev_id == 0 else Device(DEVICE_TYPES["cpu"], dev_id)


_CPU0 = Device(DEVICE_TYPES["cpu"], 0)


def cuda(dev_id: int = 0) -> Device:
    """A CUDA GPU (tvm.cuda).

    Parameters
    ----------
    dev_id : int, optional
        Which GPU, by index. Defaults to 0.

    Returns
    -------
    device : Device
        Device(2, dev_id).
    """
    return Device(DEVICE_TYPES["cuda"], dev_id)


def device(dev_type, dev_id: int = 0) -> Device:
    """A Device from a name, a target or a type number (tvm.device).

    Parameters
    ----------
    dev_type : str or Target or int or Device
        "cpu", "cuda" or "gpu"; a target (a Target or its string, e.g. "llvm -mcpu=native":
        the device its code runs on); a DLPack type number; or a Device, returned as is.
    dev_id : int, optional
        The device index. Defaults to 0.

    Returns
    -------
    device : Device
        The device; an unknown name raises InputError listing the known ones.
    """
    if isinstance(dev_type, Device):
        return dev_type
    if isinstance(dev_type, str) and dev_type.strip() in ("cpu", "cuda", "gpu"):
        return Device(DEVICE_TYPES[{"gpu": "cuda"}.get(dev_type.strip(), dev_type.strip())], dev_id)
    if isinstance(dev_type, (str, Target)):
        try:
            return Device(as_target(dev_type).device_type, dev_id)
        except TargetError as err:
            raise InputError(f"unknown device {dev_type!r}: use one of {sorted(DEVICE_TYPES)} or a "
                             f"target ({err})") from None
    return Device(int(dev_type), dev_id)
