"""Helpers every target's schedules share: static shapes, tile-size arithmetic, finding stages
by tag, inlining the injective stages around an anchor."""
from .. import te
from ..ir.dims import dim_key
from ..op.te_search import NO_INLINE
from ..tir import expr as E


def static_shape(t) -> tuple:
    """The shape of te tensor `t` as ints, or None when a dimension is symbolic."""
    out = []
    for d in t.shape:
        if not isinstance(d, E.IntImm):
            return None
        out.append(int(d.value))
    return tuple(out)


def dims_of(t) -> tuple:
    """The shape of te tensor `t`: ints where static, PrimExprs where symbolic (a size variable
    of a kernel compiled for any size)."""
    return tuple(int(d.value) if isinstance(d, E.IntImm) else d for d in t.shape)


def same_dims(a, b) -> bool:
    """Two dims tuples (from dims_of) are structurally equal (symbolic dims compared by structure,
    variables by identity)."""
    return len(a) == len(b) and all(dim_key(x) == dim_key(y) for x, y in zip(a, b))


def static_product(dims):
    """The product of dims, or None when one of them is symbolic."""
    return prod(dims) if all(isinstance(d, int) for d in dims) else None


def all_static(*tensors) -> bool:
    return all(static_shape(t) is not None for t in tensors)


def divisor_at_most(n: int, limit: int, floor: int = 1) -> int:
    """The largest divisor of n in [floor, limit], or min(n, limit) when there is none
    (then the split needs a guard, which lowering adds)."""
    for d in range(min(n, limit), floor - 1, -1):
        if n % d == 0:
            return d
    return min(n, limit)


def prod(values) -> int:
    total = 1
    for v in values:
        total *= v
    return total


def nonempty(attrs, inputs, out_type) -> bool:
    """Every static input dimension > 0 (a strategy condition): the tiled schedules split by the
    extents, so zero-size tensors fall back to the generic implementation (symbolic dims are
    split with a guard)."""
    return all(d > 0 for t in inputs for d in dims_of(t) if isinstance(d, int))


def ops_of(s):
    return [st.op for st in s.stages]


def find_tagged(s, tag: str):
    """The (last) compute op of schedule `s` whose tag is `tag`, or None."""
    found = None
    for op in ops_of(s):
        if getattr(op, "tag", "") == tag:
            found = op
    return found


def inline_except(s, keep=()) -> None:
    """compute_inline every intermediate injective single-output stage not in `keep` and not
    marked attrs={NO_INLINE: True} (op/te_search.py's materialized scan stages)."""
    outputs = {id(op) for op in s.outputs}
    keep = {id(op) for op in keep} | {id(t.op) for st in s.stages if isinstance(st.op, te.ExternOp)
                                     for t in st.op.inputs}   # an extern stage reads buffers
    for stage in s.stages:
        op = stage.op
        if (isinstance(op, te.ComputeOp) and id(op) not in outputs and id(op) not in keep
                and not op.is_reduction and op.num_outputs == 1 and stage.attach_type == "root"
                and not op.attrs.get(NO_INLINE)):
            stage.compute_inline()


def last_reduction(s):
    """The last reduction stage's op of schedule `s`, or None."""
    found = None
    for st in s.stages:
        if isinstance(st.op, te.ComputeOp) and st.op.is_reduction:
            found = st.op
    return found


def find_reduction(s, tag: str):
    """The reduction stage's op of schedule `s` tagged `tag` (a cast stage after it may carry
    tag + ",cast"), or None."""
    for stage in s.stages:
        op = stage.op
        if isinstance(op, te.ComputeOp) and op.tag == tag and op.is_reduction:
            return op
    return None
