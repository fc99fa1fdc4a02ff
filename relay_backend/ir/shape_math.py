"""Arithmetic, proofs and bindings over tensor dims: what every type relation (and the executors
checking inputs) use, so symbolic shapes follow one set of rules.

A dim is an int (IntDim), a tir expression on size variables, or Any (see ir/dims.py). The
helpers accept any mix and return normalized dims (IntDim when the value is known, a simplified
expression otherwise); Any in an operand gives Any, as TVM's relations do.

Writing a relation (what TVM v0.18's do, and what a new op should do):
  * output dims: compute them with add/sub/mul/floordiv/... (or Python operators on dims that
    are never Any, then `simplify`), e.g. `window_out(h, kh, stride, dilation, pad0, pad1)`;
  * "these dims must agree" (dense's features, concatenate's other axes): reject only what is
    provably wrong, `dims_differ(a, b)`; keep the more informative one with `merge_dims`. The
    VM replays relations on the concrete shapes at run time, so what cannot be decided now is
    checked then (TVM's AssertEQ);
  * broadcasting: `broadcast_dims(a, b)` (None when incompatible) follows TVM's BroadcastRel:
    1 gives the other side, Any gives the other side, n vs n gives n, and anything it cannot
    prove equal (n vs m, n vs 3) is an error;
  * a condition on a value (divisible, non-empty, in range) can be checked only when the dim
    is static: test `is_static(d)` first; never branch on a symbolic expression's truth.

Executors bind size variables to concrete sizes with `bind_shape` (shared variables must get
one value: two inputs sharing `n` must agree) and evaluate dims with `eval_dim`.
"""
from ..errors import InputError
from ..tir import expr as E
from ..tir.functor import substitute
from .dims import Any, dim_to_str, dim_vars, fold_dim, int_dim, is_any, is_static, normalize_dim

__all__ = ["simplify", "add", "sub", "mul", "floordiv", "floormod", "ceildiv", "dim_min", "dim_max",
           "prod", "total", "dims_equal", "dims_differ", "is_one", "merge_dims", "broadcast_dims",
           "broadcast_shapes", "window_out", "eval_dim", "bind_shape", "shape_mismatch",
           "concrete_shape", "substitute_shape"]


def simplify(d):
    """`d` normalized: an IntDim when its value is known, a simplified expression, or Any."""
    return normalize_dim(d, "shape arithmetic")


def _binary(a, b, static_op, expr_op):
    if is_any(a) or is_any(b):
        return Any()
    if is_static(a) and is_static(b):
        return simplify(static_op(int(a), int(b)))
    return simplify(expr_op(E.convert(a, "int32") if is_static(a) else a,
                            E.convert(b, "int32") if is_static(b) else b))


def add(a, b):
    """a + b (Any if either is Any)."""
    return _binary(a, b, int.__add__, E.PrimExpr.__add__)


def sub(a, b):
    """a - b (Any if either is Any)."""
    return _binary(a, b, int.__sub__, E.PrimExpr.__sub__)


def mul(a, b):
    """a * b (Any if either is Any)."""
    return _binary(a, b, int.__mul__, E.PrimExpr.__mul__)


def floordiv(a, b):
    """a // b, rounding down (Any if either is Any); b must be non-zero."""
    return _binary(a, b, int.__floordiv__, E.floordiv)


def floormod(a, b):
    """a % b with the sign of b (Any if either is Any)."""
    return _binary(a, b, int.__mod__, E.floormod)


def ceildiv(a, b):
    """ceil(a / b) for b > 0."""
    return floordiv(add(a, sub(b, 1)), b)


def dim_min(a, b):
    return _binary(a, b, min, E.min)


def dim_max(a, b):
    return _binary(a, b, max, E.max)


def prod(dims):
    """The product of dims (1 for none); Any if one is Any; 0 as soon as one static dim is 0."""
    out = int_dim(1)
    for d in dims:
        if is_static(d) and int(d) == 0:
            return int_dim(0)
        out = mul(out, d)
    return out


def total(dims):
    """The sum of dims (0 for none); Any if one is Any."""
    out = int_dim(0)
    for d in dims:
        out = add(out, d)
    return out


def dims_equal(a, b) -> bool:
    """Provably equal for every value of the size variables (Any is never provably equal)."""
    if is_any(a) or is_any(b):
        return False
    if is_static(a) and is_static(b):
        return int(a) == int(b)
    diff = sub(a, b)
    return is_static(diff) and int(diff) == 0


def dims_differ(a, b) -> bool:
    """Provably different (both known and unequal, or differing by a non-zero constant). Any
    differs from nothing: what cannot be decided now is checked on concrete shapes at run time."""
    if is_any(a) or is_any(b):
        return False
    if is_static(a) and is_static(b):
        return int(a) != int(b)
    diff = sub(a, b)
    return is_static(diff) and int(diff) != 0


def is_one(d) -> bool:
    return is_static(d) and int(d) == 1


def merge_dims(a, b):
    """The dim two dims that must agree stand for: the first that is not Any, as TVM's
    ConcatenateRel keeps (the caller rejects `dims_differ(a, b)` first)."""
    return b if is_any(a) else a


def broadcast_dims(a, b):
    """One output dim of a numpy-style broadcast as TVM's BroadcastRel computes it, or None
    when a and b cannot be shown compatible (n vs m, n vs 3, 2 vs 3)."""
    if is_one(a):
        return b
    if is_one(b) or is_any(b):
        return a
    if is_any(a):
        return b
    if dims_equal(a, b):
        return a
    return None


def broadcast_shapes(lhs, rhs):
    """(shape, None) for two right-aligned shapes, or (None, k) naming the first incompatible
    axis k of the output (counted from the left)."""
    ndim = max(len(lhs), len(rhs))
    a = (1,) * (ndim - len(lhs)) + tuple(lhs)
    b = (1,) * (ndim - len(rhs)) + tuple(rhs)
    out = []
    for k, (x, y) in enumerate(zip(a, b)):
        d = broadcast_dims(x, y)
        if d is None:
            return None, k
        out.append(d)
    return tuple(out), None


def window_out(size, kernel, stride: int, dilation: int, pad_before: int, pad_after: int,
               ceil_mode: bool = False):
    """Output length of a sliding window over `size` (conv, pooling): Any for Any; None when a
    static size fits no window. ceil_mode also counts a partial last window, but (the PyTorch/
    TVM rule) never one that starts in the trailing padding."""
    if is_any(size) or is_any(kernel):
        return Any()
    span = add(mul(sub(kernel, 1), dilation), 1)
    padded = add(size, pad_before + pad_after)
    if is_static(padded) and is_static(span) and int(padded) < int(span):
        return None
    if not ceil_mode:
        return add(floordiv(sub(padded, span), stride), 1)
    out = add(ceildiv(sub(padded, span), stride), 1)
    fits = add(floordiv(add(size, pad_before - 1), stride), 1)   # windows starting before the pad
    return dim_min(out, dim_max(sub(out, 1), fits))


# --- concrete values ------------------------------------------------------------------------

_EVAL = {E.Add: int.__add__, E.Sub: int.__sub__, E.Mul: int.__mul__, E.FloorDiv: int.__floordiv__,
         E.FloorMod: int.__mod__, E.Min: min, E.Max: max}


def eval_dim(d, env: dict):
    """The int value of dim `d` with size variables bound by `env` ({Var: int}); None for Any or
    when a variable is unbound. A division by zero is an InputError naming the dim."""
    if is_static(d):
        return int(d)
    if is_any(d):
        return None

    def combine(node, values):
        if any(v is None for v in values):
            return None
        if isinstance(node, E.Cast):
            return values[0]
        if isinstance(node, (E.FloorDiv, E.FloorMod)) and values[1] == 0:
            raise InputError(f"shape dim {dim_to_str(d)} divides by zero ({_bound(env)})")
        return _EVAL[type(node)](*values)
    return fold_dim(d, lambda node: env.get(node) if isinstance(node, E.Var) else int(node.value), combine)


def _bound(env) -> str:
    return ", ".join(f"{v.name}={value}" for v, value in env.items()) or "nothing bound"


def bind_shape(shape, concrete, env: dict) -> str:
    """Bind the size variables that are whole dims of `shape` to the sizes in `concrete` (a tuple
    of ints), in `env` ({Var: int}, shared across the inputs of one call, so a variable already
    bound must get the same size again). Returns "" when `concrete` fits, else why not; call it
    for every input first, then `shape_mismatch` checks the dims that are expressions."""
    if len(shape) != len(concrete):
        return f"rank {len(concrete)} does not match rank {len(shape)}"
    for k, (dim, size) in enumerate(zip(shape, concrete)):
        if isinstance(dim, E.Var):
            known = env.get(dim)
            if known is None:
                env[dim] = int(size)
            elif known != int(size):
                return (f"dimension {k} is {size}, but {dim.name} = {known} (bound by an earlier "
                        f"dimension or input)")
        elif is_static(dim) and int(dim) != int(size):
            return f"dimension {k} is {size}, not {int(dim)}"
    return ""


def shape_mismatch(shape, concrete, env: dict) -> str:
    """Why `concrete` does not fit `shape` once `env` binds its size variables ("" if it fits;
    an expression whose variables are unbound is not checked)."""
    if len(shape) != len(concrete):
        return f"rank {len(concrete)} does not match rank {len(shape)}"
    for k, (dim, size) in enumerate(zip(shape, concrete)):
        want = eval_dim(dim, env)
        if want is not None and want != int(size):
            return f"dimension {k} is {size}, but {dim_to_str(dim)} = {want} ({_bound(env)})"
    return ""


def substitute_shape(shape, mapping: dict) -> tuple:
    """`shape` with the size variables that are keys of `mapping` ({Var: dim}) replaced by
    their dims, each result simplified (dims without those variables are kept as they are)."""
    if not mapping:
        return tuple(shape)
    by_id = {id(v): E.convert(d, v.dtype) if is_static(d) else d for v, d in mapping.items()}
    out = []
    for d in shape:
        if isinstance(d, E.PrimExpr) and any(id(v) in by_id for v in dim_vars(d)):
            d = simplify(substitute(d, by_id))
        out.append(d)
    return tuple(out)


def concrete_shape(shape, env: dict) -> tuple:
    """`shape` with every dim evaluated under `env`; Any (or an unbound dim) stays as is."""
    out = []
    for d in shape:
        value = eval_dim(d, env)
        out.append(d if value is None else int_dim(value))
    return tuple(out)
