"""The ONNX converters, one module per family; importing them fills the table."""
from ._registry import TABLE as CONVERTERS
from . import indexing, math, nn, reduce, tensor  # noqa: F401  (registers the converters)

__all__ = ["CONVERTERS"]
