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
from . import tensor, reduce, transform, nn, annotation, layout, dyn  # noqa: F401  (importing registers the ops)
from . import dtype_ops, fixed_point, algorithm, random  # noqa: F401
from . import debug as debug_op  # noqa: F401,E402  (relay.op.debug is the constructor, as in TVM)
from .debug import debug  # noqa: F401,E402
from . import image, vision  # noqa: F401,E402  (relay.image, relay.vision)
from . import qnn  # noqa: F401,E402  (the QNN dialect: relay.qnn.op)
from . import gradient, layout_rules, mixed_precision  # noqa: F401,E402  (per-op pass rules)
from .mixed_precision import register_mixed_precision_conversion  # noqa: F401,E402
from .tensor import *  # noqa: F401,F403
from .reduce import *  # noqa: F401,F403
from .transform import *  # noqa: F401,F403  (shape_of and ndarray_size too, as TVM's)
from .layout import layout_transform  # noqa: F401
from .dtype_ops import cast_like, reinterpret  # noqa: F401
from .fixed_point import fixed_point_multiply, fixed_point_multiply_per_axis  # noqa: F401
from .algorithm import *  # noqa: F401,F403
from .search import searchsorted  # noqa: F401,E402  (relay.searchsorted; the other issue-20 indexing ops come with transform)

# The constructors only: `from relay_backend.op import *` must not bring in the submodules
# (op.transform would shadow relay_backend.transform).
__all__ = (["OpPattern", "get", "list_ops", "nn", "dyn", "random", "layout_transform"] + tensor.__all__ + reduce.__all__
           + transform.__all__ + ["cast_like", "reinterpret", "fixed_point_multiply", "debug"] + algorithm.__all__
           + ["searchsorted"])

import sys as _sys  # noqa: E402
from .keywords import check_namespace as _check_namespace  # noqa: E402

_check_namespace(_sys.modules[__name__], __all__)   # a misspelled keyword names the valid ones
