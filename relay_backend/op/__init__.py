"""Level 3: the operator registry and every operator (tensor, reduce, transform, nn).

Constructors follow tvm.relay: `op.add`, `op.sum`, `op.reshape`, `op.nn.conv2d`, ...
"""
from .pattern import OpPattern
from .registry import OpDef, Sample, check, defop, get, list_ops, register
from . import tensor, reduce, transform, nn, shape_query, dyn  # noqa: F401  (importing registers the ops)
from .tensor import *  # noqa: F401,F403
from .reduce import *  # noqa: F401,F403
from .transform import *  # noqa: F401,F403
from .shape_query import *  # noqa: F401,F403

# The constructors only: `from relay_backend.op import *` must not bring in the submodules
# (op.transform would shadow relay_backend.transform).
__all__ = (["OpPattern", "get", "list_ops", "nn", "dyn"] + tensor.__all__ + reduce.__all__ + transform.__all__
           + shape_query.__all__)
