"""Level 3: the operator registry and every operator (tensor, reduce, transform, nn).

Constructors follow tvm.relay: `op.add`, `op.sum`, `op.reshape`, `op.nn.conv2d`, ...
"""
from .pattern import OpPattern
from .registry import OpDef, Sample, check, defop, get, list_ops
from .op import (OpImplementation, OpSpecialization, OpStrategy, TempOpAttr, register,
                 register_broadcast_schedule, register_compute, register_gradient,
                 register_injective_schedule, register_op_attr, register_pattern,
                 register_reduce_schedule, register_reference, register_schedule,
                 register_shape_func, register_stateful, register_strategy)
from . import op  # noqa: F401  (relay.op.op, TVM's module of the register_* API)
from . import tensor, reduce, transform, nn, annotation, layout  # noqa: F401  (importing registers the ops)
from . import gradient, layout_rules, mixed_precision  # noqa: F401,E402  (per-op pass rules)
from .mixed_precision import register_mixed_precision_conversion  # noqa: F401,E402
from .tensor import *  # noqa: F401,F403
from .reduce import *  # noqa: F401,F403
from .transform import *  # noqa: F401,F403
from .layout import layout_transform  # noqa: F401

# The constructors only: `from relay_backend.op import *` must not bring in the submodules
# (op.transform would shadow relay_backend.transform).
__all__ = ["OpPattern", "get", "list_ops", "nn", "layout_transform"] + tensor.__all__ + reduce.__all__ + transform.__all__

import sys as _sys  # noqa: E402
from .keywords import check_namespace as _check_namespace  # noqa: E402

_check_namespace(_sys.modules[__name__], __all__)   # a misspelled keyword names the valid ones
