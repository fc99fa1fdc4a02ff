"""Level 7: frontends that import models from other frameworks (tvm.relay.frontend).

from_onnx needs the `onnx` package (pip install relay_backend[onnx]); it is imported lazily so
`import relay_backend` works without it.
"""
from .onnx import from_onnx

__all__ = ["from_onnx"]
