"""Loop features of a config's lowered TIR: what the XGBoost cost model learns from.

A config is instantiated, lowered to TIR (no LLVM) and described loop by loop, outermost
first (TVM's "itervar" features, in a small fixed-length form so records of other tasks of
the same template can train one model, which is how tuning knowledge transfers):

    per loop (first MAX_LOOPS in pre-order; missing loops are zeros):
      log2(1 + extent), its kind (serial / parallel / vectorized / unrolled, one-hot),
      log2(1 + iterations of the loop nest down to it), nesting depth,
      log2(1 + loads) and log2(1 + stores) under it,
      over the accesses under it: log2(1 + smallest non-zero stride of its variable, in
      elements), the fraction of accesses it does not move (reuse), the fraction it moves by
      one element (contiguous)
    then: log2(1 + allocated temporary bytes), log2(1 + loops), and the config's knobs as
    numbers (ConfigEntity.get_flatten_feature)

Strides are read off each access's flattened index by evaluating it with the loop variable at
1 and at 0 (other variables 0): exact for affine indices, an estimate for divided ones.
"""
import math

import numpy as np

from .. import te
from ..tir import expr as E
from ..tir import stmt as S
from ..tir.functor import walk

MAX_LOOPS = 24
KINDS = ("serial", "parallel", "vectorized", "unrolled")
PER_LOOP = 1 + len(KINDS) + 7        # extent, kind, then the seven listed in the module doc
_INT_OPS = {E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
            E.FloorDiv: lambda a, b: a // b if b else None, E.FloorMod: lambda a, b: a % b if b else None,
            E.Min: min, E.Max: max}


def _int_value(e, env):
    """The integer value of index expression `e` with {id(var): value} (unbound vars 0), or None."""
    if isinstance(e, E.IntImm):
        return int(e.value)
    if isinstance(e, E.Var):
        return env.get(id(e), 0)
    if isinstance(e, E.Cast):
        return _int_value(e.value, env)
    op = _INT_OPS.get(type(e))
    if op is None:
        return None
    a, b = _int_value(e.a, env), _int_value(e.b, env)
    return None if a is None or b is None else op(a, b)


def _flat_index(buffer, indices):
    """buffer[indices] as one row-major element offset expression (a list of (index, stride))."""
    shape = [int(d.value) if isinstance(d, E.IntImm) else 1 for d in buffer.shape]
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return list(zip(indices, reversed(strides)))


def _stride(var, flat):
    base = 0
    moved = 0
    for index, stride in flat:
        v0, v1 = _int_value(index, {}), _int_value(index, {id(var): 1})
        if v0 is None or v1 is None:
            return None
        base += v0 * stride
        moved += v1 * stride
    return abs(moved - base)


def _itemsize(dtype) -> int:
    try:
        return np.dtype(str(dtype)).itemsize
    except TypeError:
        return 4


def _log(x) -> float:
    return math.log2(1.0 + max(float(x), 0.0))


class _Loop:
    __slots__ = ("node", "depth", "trips", "loads", "stores", "accesses")

    def __init__(self, node, depth, trips):
        self.node, self.depth, self.trips = node, depth, trips
        self.loads = self.stores = 0
        self.accesses = []


def _extent(loop) -> int:
    return int(loop.extent.value) if isinstance(loop.extent, E.IntImm) else 1


def loop_features(func) -> np.ndarray:
    """The fixed-length feature vector of a lowered PrimFunc (see the module doc)."""
    loops, open_loops, temp_bytes = [], [], 0
    stack = [(func.body, 0, 1, False)]
    while stack:
        node, depth, trips, leaving = stack.pop()
        if leaving:
            open_loops.pop()
            continue
        if isinstance(node, S.For):
            loop = _Loop(node, depth, trips * _extent(node))
            loops.append(loop)
            open_loops.append(loop)
            stack.append((None, depth, trips, True))
            stack.append((node.body, depth + 1, loop.trips, False))
            continue
        if isinstance(node, S.Allocate):
            size = math.prod(int(d.value) if isinstance(d, E.IntImm) else 1 for d in node.buffer.shape)
            temp_bytes += size * _itemsize(node.buffer.dtype)
        if isinstance(node, S.BufferStore):
            for loop in open_loops:
                loop.stores += 1
                loop.accesses.append(_flat_index(node.buffer, node.indices))
        for child in _stmt_children(node):
            stack.append((child, depth, trips, False))
        for e in _exprs_of(node):
            for sub in walk(e):
                if isinstance(sub, E.BufferLoad):
                    for loop in open_loops:
                        loop.loads += 1
                        loop.accesses.append(_flat_index(sub.buffer, sub.indices))
    out = np.zeros(MAX_LOOPS * PER_LOOP + 2, dtype=np.float32)
    for k, loop in enumerate(loops[:MAX_LOOPS]):
        kind = [1.0 if loop.node.kind == name else 0.0 for name in KINDS]
        strides = [_stride(loop.node.loop_var, flat) for flat in loop.accesses]
        known = [s for s in strides if s is not None]
        nonzero = [s for s in known if s > 0]
        n = max(len(known), 1)
        out[k * PER_LOOP:(k + 1) * PER_LOOP] = [
            _log(_extent(loop.node)), *kind, _log(loop.trips), loop.depth, _log(loop.loads), _log(loop.stores),
            _log(min(nonzero)) if nonzero else 0.0, sum(1 for s in known if s == 0) / n,
            sum(1 for s in known if s == 1) / n]
    out[-2:] = [_log(temp_bytes), _log(len(loops))]
    return out


def _stmt_children(node):
    if isinstance(node, S.SeqStmt):
        return list(reversed(node.seq))
    body = getattr(node, "body", None)
    out = [body] if isinstance(body, S.Stmt) else []
    if isinstance(node, S.IfThenElse):
        out = [node.then_case] + ([node.else_case] if node.else_case is not None else [])
    return out


def _exprs_of(node):
    if isinstance(node, S.BufferStore):
        return [node.value, *node.indices]
    if isinstance(node, S.IfThenElse):
        return [node.condition]
    if isinstance(node, (S.LetStmt,)):
        return [node.value]
    if isinstance(node, S.Evaluate):
        return [node.value]
    return []


def config_features(task, config) -> np.ndarray:
    """Loop features of `config` of `task` followed by its knobs as numbers."""
    sch, args = task.instantiate(config)
    func = te.lower(sch, args, name="features")
    return np.concatenate([loop_features(func), config.get_flatten_feature()])
