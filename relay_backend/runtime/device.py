"""Devices: where an NDArray lives and where a kernel runs (tvm.runtime.Device)."""
from dataclasses import dataclass

from ..errors import InputError, TargetError
from ..target import Target, as_target

DEVICE_TYPES = {"cpu": 1, "cuda": 2}
DEVICE_NAMES = {v: k for k, v in DEVICE_TYPES.items()}


@dataclass(frozen=True)
class Device:
    """A device type (1 = cpu, 2 = cuda, as DLPack numbers them) and an index."""

    device_type: int
    device_id: int = 0

    def __post_init__(self):
        if self.device_type not in DEVICE_NAMES:
            raise ValueError(f"unknown device type {self.device_type}; known: {DEVICE_TYPES}")

    @property
    def name(self) -> str:
        return DEVICE_NAMES[self.device_type]

    def __repr__(self) -> str:
        return f"{self.name}({self.device_id})"


def cpu(dev_id: int = 0) -> Device:
    return Device(DEVICE_TYPES["cpu"], dev_id)


def cuda(dev_id: int = 0) -> Device:
    return Device(DEVICE_TYPES["cuda"], dev_id)


def device(dev_type, dev_id: int = 0) -> Device:
    """Construct a Device from a device name ("cpu", "cuda", "gpu"), a target (a Target or its
    string, e.g. "llvm -mcpu=native": the device its code runs on) or a type number."""
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
