"""SimplifyExpr (tvm.relay.transform.SimplifyExpr): algebraic simplifications of operator calls.

Guarantee: the result computes the same values with the same types (up to float rounding where a
rule reassociates constants), using no more operator calls. The rules, each a row of RULES run
by the rewrite engine (transform/rewrite.py) bottom-up to a fixpoint, follow Relay v0.18:

  reshape(reshape(x))             -> reshape(x, <final shape>)
  transpose(transpose(x))         -> transpose(x, <composed axes>); identity transposes vanish
  cast(x, <x's dtype>)            -> x;  cast(cast(x, wider), t) -> cast(x, t)
  cast(...cast(clip(x)))          -> integer casts whose range holds [a_min, a_max] are dropped
                                     (Relay drops float<->int casts too, which loses the
                                     truncation of fractions; here only exact drops are made)
  clip(x) covering x's whole dtype range -> x
  x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 -> x   (0/1: a scalar constant, zeros/ones(_like))
  full / ones / zeros (or _like) feeding a broadcast op -> a scalar constant
  zeros_like(x) / ones_like(x)    -> zeros / ones of x's static shape
  x + x                           -> x * 2
  (x + c1) * c2                   -> x * c2 + (c1 * c2)   (helps FoldScaleAxis)
  x * c1 * c2, x + c1 + c2        -> x * (c1 * c2), x + (c1 + c2)
                                     (add and multiply match in either argument order)
  a*x*x + b*x*y + c*y*y           -> a * (x + p*y) * (x + q*y)   (real roots only)
  n / sqrt(x)                     -> n * rsqrt(x)

SimplifyExprPostAlterOp runs the subset Relay runs after AlterOpLayout (identity, reshape and
cast rules). Both are opt_level-0 function passes that infer types first when needed.
"""
import math

import numpy as np

from .. import op as _op
from ..ir.expr import Call, Constant, const
from ..ir.dims import is_static_shape
from ..ir.types import TensorType
from ..op.pattern import OpPattern
from ..op.registry import OpDef, get as get_op
from .fold_constant import fold_constant
from .pass_infra import function_pass
from .rewrite import rewrite_function


# --- helpers -------------------------------------------------------------------------------------
def _call_of(expr, *names) -> bool:
    return isinstance(expr, Call) and isinstance(expr.op, OpDef) and expr.op.name in names


def _ttype(expr) -> TensorType:
    t = getattr(expr, "_checked_type_", None)
    return t if isinstance(t, TensorType) else None


def _static_shape(expr):
    t = _ttype(expr)
    if t is None or not is_static_shape(t.shape):
        return None
    return tuple(int(d) for d in t.shape)


def _scalar_constant(expr):
    """The value of a constant whose every dim is 1 (Relay's IsScalar), else None."""
    if not isinstance(expr, Constant):
        return None
    arr = expr.data.view_numpy()
    if any(d != 1 for d in arr.shape) or arr.dtype.kind not in "biuf":
        return None
    return arr.reshape(()).item()


def _is_fill(expr, value) -> bool:
    """zeros/ones(_like) or a scalar constant equal to `value` (0 or 1)."""
    if _call_of(expr, "zeros", "zeros_like"):
        return value == 0
    if _call_of(expr, "ones", "ones_like"):
        return value == 1
    v = _scalar_constant(expr)
    return v is not None and v == value


def _same_type(a, b) -> bool:
    return _ttype(a) is not None and _ttype(a) == _ttype(b)


def _dtype_code_bits(dtype: str):
    dt = np.dtype(dtype)
    code = {"i": 0, "u": 1, "b": 1, "f": 2}.get(dt.kind, 3)
    return code, 1 if dt.kind == "b" else dt.itemsize * 8


def _dtype_range(dtype: str):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
    elif dt.kind == "f":
        info = np.finfo(dt)
    else:
        return 0.0, 1.0
    return float(info.min), float(info.max)


# --- reshape, transpose, cast, clip -------------------------------------------------------------
def reshape_chain(call):
    inner = call.args[0]
    shape = _static_shape(call)
    if _call_of(inner, "reshape") and shape is not None:
        return _op.reshape(inner.args[0], shape)
    return None


def transpose_axes(call, ndim: int) -> list:
    axes = call.attrs.axes
    if axes is None:
        return list(reversed(range(ndim)))
    return [a + ndim if a < 0 else a for a in axes]


def transpose_chain(call):
    inner = call.args[0]
    if not _call_of(inner, "transpose") or _ttype(call) is None:
        return None
    ndim = _ttype(call).ndim
    first, second = transpose_axes(inner, ndim), transpose_axes(call, ndim)
    return _op.transpose(inner.args[0], [first[a] for a in second])


def noop_transpose(call):
    t = _ttype(call)
    if t is not None and transpose_axes(call, t.ndim) == list(range(t.ndim)):
        return call.args[0]
    return None


def same_cast(call):
    x = call.args[0]
    return x if _ttype(x) is not None and _ttype(x).dtype == call.attrs.dtype else None


def _widens(src: str, dst: str) -> bool:
    (c1, b1), (c2, b2) = _dtype_code_bits(src), _dtype_code_bits(dst)
    return (c1 == c2 and b1 <= b2) or (c1 < c2 and b1 <= b2)


def consecutive_cast(call):
    inner = call.args[0]
    if _call_of(inner, "cast") and _ttype(inner.args[0]) is not None and \
            _widens(_ttype(inner.args[0]).dtype, inner.attrs.dtype):
        return _op.cast(inner.args[0], call.attrs.dtype)
    return None


def _range_holds(dtype, lo, hi) -> bool:
    """The dtype can represent every value in [lo, hi]."""
    dmin, dmax = _dtype_range(dtype)
    return lo >= dmin and hi <= dmax


def clip_then_casts(call):
    chain, e = [], call
    while _call_of(e, "cast"):
        chain.append(e)
        e = e.args[0]
    if not _call_of(e, "clip") or len(chain) < 1:
        return None
    dtypes = [c.attrs.dtype for c in chain] + [_ttype(e).dtype]
    if any(np.dtype(d).kind not in "iub" for d in dtypes):
        return None
    lo, hi = e.attrs.a_min, e.attrs.a_max
    remaining = [c for c in chain if not _range_holds(c.attrs.dtype, lo, hi)]
    if len(remaining) == len(chain):
        return None
    out = e
    for c in reversed(remaining):
        out = _op.cast(out, c.attrs.dtype)
    if _ttype(e).dtype != call.attrs.dtype and not remaining or \
            remaining and remaining[0].attrs.dtype != call.attrs.dtype:
        out = _op.cast(out, call.attrs.dtype)
    return out


def redundant_clip(call):
    t = _ttype(call)
    if t is None:
        return None
    dmin, dmax = _dtype_range(t.dtype)
    if call.attrs.a_max >= dmax and call.attrs.a_min <= dmin:
        return call.args[0]
    return None


# --- identities and constants -------------------------------------------------------------------
def _identity_rule(identity_value, commutative: bool):
    def rule(call):
        lhs, rhs = call.args
        if _is_fill(rhs, identity_value) and _same_type(lhs, call):
            return lhs
        if commutative and _is_fill(lhs, identity_value) and _same_type(rhs, call):
            return rhs
        return None
    return rule


def _fill_value(expr):
    """The scalar a full/ones/zeros(_like) call fills with, else None."""
    if _call_of(expr, "zeros", "zeros_like"):
        return 0
    if _call_of(expr, "ones", "ones_like"):
        return 1
    if _call_of(expr, "full"):
        return _scalar_constant(expr.args[0])
    return None


def full_elementwise(call):
    """A broadcast op fed by a fill whose other operand already has the result's type."""
    if len(call.args) != 2:
        return None
    for i in (0, 1):
        fill, other = call.args[i], call.args[1 - i]
        value = _fill_value(fill)
        if value is not None and _same_type(other, call):
            scalar = const(value, dtype=_ttype(fill).dtype)
            args = [scalar, other] if i == 0 else [other, scalar]
            return Call(call.op, args, call.attrs, call.type_args)
    return None


def concretize_like(maker):
    def rule(call):
        shape = _static_shape(call)
        return None if shape is None else maker(shape, _ttype(call).dtype)
    return rule


def _folded(op_name, a, b):
    return fold_constant(get_op(op_name)(a, b))


def add_self(call):
    x, y = call.args
    if x is y and _ttype(call) is not None:
        return _op.multiply(x, const(2, dtype=_ttype(call).dtype))
    return None


def _const_split(call):
    """(x, c) when exactly one argument of a commutative call is a Constant."""
    a, b = call.args
    if isinstance(b, Constant) and not isinstance(a, Constant):
        return a, b
    if isinstance(a, Constant) and not isinstance(b, Constant):
        return b, a
    return None


def switch_add_multiply(call):
    """(x + c1) * c2 (in any argument order) -> x * c2 + (c1 * c2)."""
    split = _const_split(call)
    if split is None or not _call_of(split[0], "add"):
        return None
    inner = _const_split(split[0])
    if inner is None:
        return None
    (x, c1), c2 = inner, split[1]
    return _op.add(_op.multiply(x, c2), _folded("multiply", c1, c2))


def _adjacent(op_name):
    """op(op(x, c1), c2) (in any argument order) -> op(x, op(c1, c2))."""
    def rule(call):
        split = _const_split(call)
        if split is None or not _call_of(split[0], op_name):
            return None
        inner = _const_split(split[0])
        if inner is None:
            return None
        (x, c1), c2 = inner, split[1]
        return get_op(op_name)(x, _folded(op_name, c1, c2))
    return rule


def rsqrt_divide(call):
    numerator, denominator = call.args
    if _call_of(denominator, "sqrt"):
        return _op.multiply(numerator, _op.rsqrt(denominator.args[0]))
    return None


def _term(expr):
    """(coefficient, u, v) if expr is a*u*v, u*(a*v) or u*v with `a` a scalar constant."""
    if not _call_of(expr, "multiply"):
        return None
    p, q = expr.args
    if _scalar_constant(p) is not None and _call_of(q, "multiply"):
        return _scalar_constant(p), q.args[0], q.args[1]
    if _call_of(q, "multiply") and _scalar_constant(q.args[0]) is not None:
        return _scalar_constant(q.args[0]), p, q.args[1]
    return 1.0, p, q


def binomial(call):
    """a*x*x + b*x*y + c*y*y -> a * (x + p*y) * (x + q*y), p and q the roots' ratios."""
    t = _ttype(call)
    if t is None or np.dtype(t.dtype).kind != "f" or not _call_of(call.args[0], "add"):
        return None
    terms = [_term(e) for e in (*call.args[0].args, call.args[1])]
    if any(term is None for term in terms):
        return None
    squares = [tm for tm in terms if tm[1] is tm[2]]
    cross = [tm for tm in terms if tm[1] is not tm[2]]
    if len(squares) != 2 or len(cross) != 1 or squares[0][1] is squares[1][1]:
        return None
    (ka, x, _), (kc, y, _) = squares
    kb, u, v = cross[0]
    if {id(u), id(v)} != {id(x), id(y)}:
        return None
    if kc == 1 and ka > 1:
        x, y, ka, kc = y, x, kc, ka
    disc = kb * kb - 4 * ka * kc
    if disc < 0:
        return None
    root = math.sqrt(disc)
    scalar = lambda v: const(v, dtype=t.dtype)  # noqa: E731
    first = _op.add(x, _op.multiply(y, scalar((kb + root) / (2 * ka))))
    second = first if disc < 1e-4 else _op.add(x, _op.multiply(y, scalar((kb - root) / (2 * ka))))
    return _op.multiply(scalar(ka), _op.multiply(first, second))


def broadcast_ops() -> list:
    """Every registered op whose pattern is BROADCAST (FullElementwise applies to them all)."""
    from ..op.registry import list_ops
    return [o.name for o in list_ops() if o.pattern == OpPattern.BROADCAST]


def _rules(names_and_rules) -> dict:
    table = {}
    for names, rule in names_and_rules:
        for name in ([names] if isinstance(names, str) else names):
            table.setdefault(name, []).append(rule)
    return table


IDENTITY_RULES = [
    ("add", _identity_rule(0, commutative=True)),
    ("multiply", _identity_rule(1, commutative=True)),
    ("subtract", _identity_rule(0, commutative=False)),
    ("divide", _identity_rule(1, commutative=False)),
]
SHAPE_AND_CAST_RULES = [
    ("reshape", reshape_chain),
    ("cast", same_cast),
    ("cast", consecutive_cast),
    ("cast", clip_then_casts),
    ("clip", redundant_clip),
]
# (op name or names, rule), in the order Relay applies them
RULES = _rules([
    ("zeros_like", concretize_like(_op.zeros)),
    ("ones_like", concretize_like(_op.ones)),
    ("add", add_self),
    ("divide", rsqrt_divide),
    *IDENTITY_RULES,
    *SHAPE_AND_CAST_RULES,
    ("transpose", transpose_chain),
    ("transpose", noop_transpose),
    (broadcast_ops(), full_elementwise),
    ("multiply", switch_add_multiply),
    ("multiply", _adjacent("multiply")),
    ("add", _adjacent("add")),
    ("add", binomial),
])
POST_ALTER_OP_RULES = _rules([*IDENTITY_RULES, *SHAPE_AND_CAST_RULES])


def simplify_expr(func, mod=None):
    """One function simplified by RULES."""
    return rewrite_function(func, mod, RULES)


def SimplifyExpr():  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 0)."""
    return function_pass(lambda func, mod, ctx: simplify_expr(func, mod), opt_level=0,
                         name="SimplifyExpr", required=["InferType"])


def SimplifyExprPostAlterOp():  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 0): the identity, reshape and cast rules only."""
    return function_pass(lambda func, mod, ctx: rewrite_function(func, mod, POST_ALTER_OP_RULES),
                         opt_level=0, name="SimplifyExprPostAlterOp", required=["InferType"])


__all__ = ["SimplifyExpr", "SimplifyExprPostAlterOp", "simplify_expr", "RULES", "transpose_axes"]
