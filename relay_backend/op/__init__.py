"""Level 3: the operator registry and every operator (tensor, reduce, transform, nn).

Constructors follow tvm.relay: `op.add`, `op.sum`, `op.reshape`, `op.nn.conv2d`, ...
"""
from .pattern import OpPattern
from .registry import OpDef, Sample, check, defop, get, list_ops, register
from . import tensor, reduce, transform, nn  # noqa: F401  (importing registers the ops)
from .tensor import *  # noqa: F401,F403
from .reduce import *  # noqa: F401,F403
from .transform import *  # noqa: F401,F403

# The constructors only: `from relay_backend.op import *` must not bring in the submodules
# (op.transform would shadow relay_backend.transform).
__all__ = ["OpPattern", "get", "list_ops", "nn"] + tensor.__all__ + reduce.__all__ + transform.__all__

import sys as _sys  # noqa: E402
from .keywords import check_namespace as _check_namespace  # noqa: E402

_check_namespace(_sys.modules[__name__], __all__)   # a misspelled keyword names the valid ones
