"""The ONNX converters, one module per family; importing them fills the table."""
from ._registry import TABLE as CONVERTERS
from . import math, nn, reduce, tensor  # noqa: F401  (registers the converters)
from . import quantized  # noqa: F401,E402  (QuantizeLinear, QLinearConv, ...: the relay.qnn dialect)

__all__ = ["CONVERTERS"]
