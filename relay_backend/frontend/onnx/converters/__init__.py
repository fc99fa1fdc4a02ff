"""The ONNX converters, one module per family; importing them fills the table."""
from ._registry import TABLE as CONVERTERS
from . import math, nn, reduce, tensor  # noqa: F401  (registers the converters)
from . import image  # noqa: F401  (Resize, Upsample, GridSample)

__all__ = ["CONVERTERS"]
