"""OpPattern: how an operator may fuse (the values Relay's FuseOps uses)."""
from enum import IntEnum


class OpPattern(IntEnum):
    ELEMWISE = 0              # out[i] = f(in[i])
    BROADCAST = 1             # out[i] = f(in[broadcast(i)])
    INJECTIVE = 2             # each output element reads a computable input position (reshape, take)
    COMM_REDUCE = 3           # commutative reduction (sum, max)
    OUT_ELEMWISE_FUSABLE = 4  # complex op whose output can absorb elementwise consumers (conv2d, dense)
    TUPLE = 7                 # tuple node
    OPAQUE = 8                # never fused
