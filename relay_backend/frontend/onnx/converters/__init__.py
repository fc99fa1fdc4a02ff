"""The ONNX converters, one module per family; importing them fills the table."""
from ._registry import TABLE as CONVERTERS
from . import control_flow, math, nn, reduce, rnn, sequence, tensor  # noqa: F401  (registers the converters)

__all__ = ["CONVERTERS"]
