"""The ONNX frontend: from_onnx (ModelProto -> IRModule, params) and the converter table.

importer.py walks the graph (typing and folding as it goes), common.py holds the attribute
and dtype helpers, converters/ one module per op family (math, nn, reduce, tensor).
"""
from .importer import MIN_OPSET, OnnxImporter, from_onnx

__all__ = ["from_onnx", "OnnxImporter", "MIN_OPSET"]
