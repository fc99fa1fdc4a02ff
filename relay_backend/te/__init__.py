"""te: tensor expressions, schedules and their lowering to tir (level 2: imports tir, level 0).

placeholder / compute / reduce_axis / sum / max / min / comm_reducer describe what to compute;
create_schedule(outs)[T] stages say how (split, fuse, reorder, tile, vectorize, parallel,
unroll, partition, bind, compute_inline, compute_at, cache_write); lower(s, args, name) builds the
PrimFunc.
"""
from ..tir.expr import IterVar, Range, Reduce, Var, max_value, min_value
from .intrin import (abs, acos, asin, atan, atan2, ceil, const, cos, cosh, erf, exp, exp2, floor,
                     fmod, if_then_else, isinf, isnan, log, log1p, log2, log10, power, round,
                     rsqrt, sigmoid, sin, sinh, size_var, sqrt, tan, tanh, thread_axis, trunc, var)
from .intrin import (bitwise_and, bitwise_not, bitwise_or, bitwise_xor, reinterpret, shift_left,
                     shift_right)
from .lower import lower
from .reduction import comm_reducer, max, min, reduce_axis, sum
from .schedule import Schedule, Stage, create_schedule
from .tensor import ComputeOp, Operation, PlaceholderOp, Tensor, compute, placeholder
from .extern import ExternOp, extern
