"""The converter table: ONNX op name -> Converter(fn, min_version, max_version).

A converter is a plain function `fn(ctx, inputs) -> Expr | [Expr]` (inputs: relay Exprs, None for
an omitted optional input); the versions are the ONNX schema since_versions it implements.
"""
from ..importer import Converter

TABLE = {}


def converter(*names, min_version=1, max_version=22):
    """Register the decorated function for each ONNX op in `names`."""
    def wrap(fn):
        for n in names:
            TABLE[n] = Converter(fn, min_version, max_version)
        return fn
    return wrap
