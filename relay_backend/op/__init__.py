"""Level 3: the operator registry and every operator (tensor, reduce, transform, nn)."""
from .pattern import OpPattern
from .registry import OpDef, Sample, check, defop, get, list_ops, register
from . import tensor
from .tensor import *  # noqa: F401,F403
