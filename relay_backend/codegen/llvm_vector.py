"""Vectorized loops emitted as LLVM vector instructions (as TVM's VectorizeLoop does in tir).

A `vectorized` loop of static extent L whose iterations are independent (tir/loop_deps.py) and
whose body is stores of supported expressions becomes straight-line code over <L x T> values:
the loop variable is the constant ramp <lo, lo+1, ...>, an expression without it is computed
once as a scalar and broadcast, a load whose flat offset steps by one element per lane is one
vector load (a gather of L scalar loads otherwise), and every store steps by one element per
lane. Leaving such a loop to LLVM (`llvm.loop.vectorize.enable` metadata) made LLVM fully
unroll it into L scalar copies and re-vectorize them with its SLP vectorizer, kernel by kernel:
a large share of a cold build's LLVM time for code that ends up the same.

Anything outside the supported subset keeps the loop for LLVM, decided before any code is
emitted (`vector_plan`): an extent or start that is not a constant, inner loops, branches or
lets in the body, a store that does not step by one element, bool or float16 values, a Select
whose condition depends on the loop variable and that reads memory in a branch (both sides of a
vector select run, and a padded input's border lane may not be loaded; a condition the same in
every lane becomes a branch instead), integer division / min / max on the lane values, math
calls other than LLVM's vector intrinsics.
"""
import functools
from dataclasses import dataclass

from llvmlite import ir

from .. import tir
from ..tir.functor import children, mentions, var_dependence, walk
from ..tir.loop_deps import accesses_independent
from ..tir.simplify import linear_form
from .llvm_expr import itemsize, llvm_type
from .llvm_math import nan_min_max

MAX_LANES = 64
_VALUE_DTYPES = ("float32", "float64", "int8", "int16", "int32", "int64",
                 "uint8", "uint16", "uint32", "uint64")
_FLOAT_OPS = (tir.Add, tir.Sub, tir.Mul, tir.Div, tir.Min, tir.Max)
_INT_OPS = (tir.Add, tir.Sub, tir.Mul)
# tir math calls with an LLVM vector intrinsic of the same name (llvm.<name>.v<L>f<bits>)
VECTOR_INTRINSICS = {"sqrt": "sqrt", "fabs": "fabs", "floor": "floor", "ceil": "ceil",
                     "round": "nearbyint", "trunc": "trunc"}


_I32_ZERO = ir.Constant(ir.IntType(32), 0)


@functools.lru_cache(maxsize=4096)
def _int_constant(dtype: str, value: int):
    """A shared integer constant (llvmlite constants are immutable): indices are mostly small
    constants, built ~100,000 times per ResNet-50 otherwise."""
    return ir.Constant(llvm_type(dtype), value)


@functools.lru_cache(maxsize=None)
def _undef_vector(element, lanes: int):
    """<lanes x element> undef, one shared object per type (constants are immutable; sharing
    saves building and printing them per broadcast)."""
    return ir.Constant(ir.VectorType(element, lanes), ir.Undefined)


@functools.lru_cache(maxsize=None)
def _splat_mask(lanes: int):
    """The all-zero <lanes x i32> shuffle mask that copies lane 0 to every lane."""
    return ir.Constant(ir.VectorType(ir.IntType(32), lanes), [0] * lanes)


@dataclass(frozen=True)
class VectorPlan:
    """How to emit one vectorized loop: its variable, first value, lane count and the ids of
    the expression nodes that depend on the variable (the rest are scalars, broadcast)."""

    var: object
    start: int
    lanes: int
    varying: frozenset


def _varying_nodes(roots, var) -> tuple:
    """(ids of the nodes under `roots` whose value depends on `var`, the BufferLoads under
    `roots` in post-order), from one walk (tir.functor.var_dependence)."""
    varying, order = var_dependence(roots, var)
    return varying, [node for node in order if type(node) is tir.BufferLoad]


def _flat_step(buffer, indices, var):
    """How many elements the flat offset of buffer[indices] moves per step of `var` (an int),
    or None when it is not `var` times a constant plus terms without `var`."""
    step = 0
    for dim, index in enumerate(indices):
        if not mentions(index, var):
            continue
        terms, _ = linear_form(index)
        coeff = 0
        for term, k in terms.values():
            if term is var:
                coeff += k
            elif mentions(term, var):
                return None
        stride = _static_stride(buffer, dim)
        if stride is None:
            return None
        step += coeff * stride
    return step


def _static_stride(buffer, dim: int):
    """The element stride of dimension `dim` of `buffer` as an int, None if symbolic."""
    if buffer.strides is not None:
        stride = buffer.strides[dim]
        return int(stride.value) if isinstance(stride, tir.IntImm) else None
    stride = 1
    for extent in buffer.shape[dim + 1:]:
        if not isinstance(extent, tir.IntImm):
            return None
        stride *= int(extent.value)
    return stride


def _reads_memory(node) -> bool:
    return any(isinstance(n, tir.BufferLoad) for n in walk(node))


def _lazy_select(node, varying) -> bool:
    """A Select on a condition that is the same in every lane, with a branch that reads memory:
    emitted as a branch on that condition, so only the taken side's loads run (as in the
    scalar code)."""
    return (isinstance(node, tir.Select) and id(node.condition) not in varying
            and (_reads_memory(node.true_value) or _reads_memory(node.false_value)))


def _node_supported(node, var, varying) -> bool:
    """Whether a node that depends on the loop variable has a vector lowering here."""
    if isinstance(node, tir.Var):
        return node is var and node.dtype in _VALUE_DTYPES
    if isinstance(node, tir.BufferLoad):
        return node.buffer.dtype in _VALUE_DTYPES
    if isinstance(node, tir.CmpOp):
        return node.a.dtype in _VALUE_DTYPES
    if isinstance(node, (tir.And, tir.Or, tir.Not)):
        return True
    if node.dtype not in _VALUE_DTYPES:
        return False
    if isinstance(node, tir.BinaryOp):
        return isinstance(node, _FLOAT_OPS if node.dtype.startswith("float") else _INT_OPS)
    if isinstance(node, tir.Select):
        return _lazy_select(node, varying) or not (_reads_memory(node.true_value)
                                                   or _reads_memory(node.false_value))
    if isinstance(node, tir.Cast):
        return node.value.dtype in _VALUE_DTYPES
    if isinstance(node, tir.Call):
        return node.op_name in VECTOR_INTRINSICS and node.dtype.startswith("float")
    return False


def _value_nodes(root):
    """The nodes of `root` that compute lane values: all but the indices of its loads (each
    lane's address is computed as a scalar)."""
    return walk(root, stop=lambda node: isinstance(node, tir.BufferLoad))


def vector_plan(loop):
    """The VectorPlan of `loop` when it can be emitted as vector instructions, else None (the
    loop is then left to LLVM's loop vectorizer)."""
    if loop.kind != "vectorized" or loop.thread_binding is not None:
        return None
    if not isinstance(loop.min, tir.IntImm) or not isinstance(loop.extent, tir.IntImm):
        return None
    lanes = int(loop.extent.value)
    if not 2 <= lanes <= MAX_LANES:
        return None
    stores = []
    stack = [loop.body]
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, tir.SeqStmt):
            stack.extend(stmt.seq)
        elif isinstance(stmt, tir.BufferStore):
            stores.append(stmt)
        elif not (isinstance(stmt, tir.Evaluate) and isinstance(stmt.value, tir.IntImm)):
            return None
    if not stores:
        return None
    var = loop.loop_var
    roots = [e for st in stores for e in (st.value, *st.indices)]
    varying, loads = _varying_nodes(roots, var)
    # the body is stores only (no inner loop or allocation): loop_deps' check on its accesses
    if not accesses_independent(stores, loads, var):
        return None
    for st in stores:
        if st.buffer.dtype not in _VALUE_DTYPES or _flat_step(st.buffer, st.indices, var) != 1:
            return None
        if not all(_node_supported(node, var, varying) for node in _value_nodes(st.value) if id(node) in varying):
            return None
    return VectorPlan(var, int(loop.min.value), lanes, frozenset(varying))


class VectorEmitter:
    """Emits the body of one vectorized loop (a VectorPlan) with `emitter`, a FunctionEmitter:
    its scalar expressions, pointers, casts and comparisons are the emitter's."""

    def __init__(self, emitter, plan: VectorPlan):
        self.em = emitter
        self.plan = plan
        self.b = emitter.builder

    def emit(self, body) -> None:
        stack = [body]
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, tir.SeqStmt):
                stack.extend(reversed(stmt.seq))
            elif isinstance(stmt, tir.BufferStore):
                self._store(stmt)

    # ------------------------------------------------------------------ helpers
    def _scalar_at_lane(self, node, lane: int):
        """The emitter's scalar value of `node` in iteration `lane` (the loop variable bound to
        that constant while it is emitted)."""
        plan = self.plan
        if isinstance(node, tir.IntImm):                  # most indices: no emitter call needed
            return _int_constant(node.dtype, int(node.value))
        if node is plan.var:
            return _int_constant(node.dtype, plan.start + lane)
        if isinstance(node, tir.Var) and id(node) in self.em.vars:
            return self.em.vars[id(node)]
        self.em.vars[id(plan.var)] = ir.Constant(llvm_type(plan.var.dtype), plan.start + lane)
        try:
            return self.em.expr(node)
        finally:
            del self.em.vars[id(plan.var)]

    def _vector_type(self, dtype: str):
        return ir.VectorType(llvm_type(dtype), self.plan.lanes)

    def _broadcast(self, scalar):
        lanes = self.plan.lanes
        if isinstance(scalar, ir.Constant):
            return ir.Constant(ir.VectorType(scalar.type, lanes), [scalar.constant] * lanes)
        undef = _undef_vector(scalar.type, lanes)
        first = self.b.insert_element(undef, scalar, _I32_ZERO)
        return self.b.shuffle_vector(first, undef, _splat_mask(lanes))

    def _pointer_at_first_lane(self, buffer, indices):
        return self.em.element_ptr(buffer, [self._scalar_at_lane(i, 0) for i in indices])

    def _store(self, stmt) -> None:
        value = self._vector(stmt.value)
        ptr = self._pointer_at_first_lane(stmt.buffer, stmt.indices)
        self.b.store(value, ptr, align=itemsize(stmt.buffer.dtype))

    # ------------------------------------------------------------------ expressions
    def _vector(self, root):
        """<lanes x T> value of `root` (post-order over an explicit stack; an expression that
        does not depend on the loop variable is the emitter's scalar, broadcast)."""
        varying = self.plan.varying
        if id(root) not in varying:
            return self._broadcast(self.em.expr(root))
        memo = {}
        stack = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if id(node) in memo:
                continue
            if id(node) not in varying:
                memo[id(node)] = self.em.expr(node)
                continue
            if _lazy_select(node, varying):
                memo[id(node)] = self._branching_select(node)
                continue
            kids = [] if isinstance(node, tir.BufferLoad) else children(node)
            if not ready:
                stack.append((node, True))
                stack.extend((k, False) for k in kids if id(k) not in memo)
                continue
            memo[id(node)] = self._lower(node, [memo[id(k)] for k in kids])
        return memo[id(root)]

    def _branching_select(self, node):
        """select(c, t, f) with c the same in every lane: branch on c, each side's vector in its
        own block (its values stay there: `_vector` memoizes per call), merged by a phi."""
        b = self.b
        cond = self.em.expr(node.condition)
        then_bb, else_bb, merge = (b.append_basic_block("vsel_then"), b.append_basic_block("vsel_else"),
                                   b.append_basic_block("vsel_end"))
        b.cbranch(cond, then_bb, else_bb)
        incoming = []
        for block, side in ((then_bb, node.true_value), (else_bb, node.false_value)):
            b.position_at_end(block)
            incoming.append((self._vector(side), b.block))
            b.branch(merge)
        b.position_at_end(merge)
        phi = b.phi(incoming[0][0].type)
        for value, block in incoming:
            phi.add_incoming(value, block)
        return phi

    def _lower(self, node, vals):
        b = self.b
        plan = self.plan
        if isinstance(node, tir.Var):
            return ir.Constant(self._vector_type(node.dtype), [plan.start + k for k in range(plan.lanes)])
        if isinstance(node, tir.BufferLoad):
            return self._load(node)
        # operands: invariant ones broadcast (a scalar Select condition stays scalar)
        if isinstance(node, tir.Select):
            cond = vals[0]
            rest = [v if isinstance(v.type, ir.VectorType) else self._broadcast(v) for v in vals[1:]]
            return b.select(cond, *rest)
        vals = [v if isinstance(v.type, ir.VectorType) else self._broadcast(v) for v in vals]
        if isinstance(node, tir.CmpOp):
            return self.em._compare(node, *vals)
        if isinstance(node, tir.And):
            return b.and_(*vals)
        if isinstance(node, tir.Or):
            return b.or_(*vals)
        if isinstance(node, tir.Not):
            return b.xor(vals[0], ir.Constant(vals[0].type, [1] * plan.lanes))
        if isinstance(node, (tir.Min, tir.Max)) and node.dtype.startswith("float"):
            return nan_min_max(b, isinstance(node, tir.Min), *vals)
        if isinstance(node, tir.BinaryOp):
            return self.em._arith(node, *vals)
        if isinstance(node, tir.Cast):
            return self._cast(vals[0], node.value.dtype, node.dtype)
        return self._intrinsic(VECTOR_INTRINSICS[node.op_name], vals)     # a tir.Call

    def _intrinsic(self, base: str, vals):
        vtype = vals[0].type
        bits = {"float": 32, "double": 64}[str(vtype.element)]
        fn = self.em.mcg.declare(f"llvm.{base}.v{vtype.count}f{bits}", vtype, [vtype] * len(vals))
        return self.b.call(fn, list(vals))

    def _load(self, node):
        b = self.b
        if _flat_step(node.buffer, node.indices, self.plan.var) == 1:
            ptr = self._pointer_at_first_lane(node.buffer, node.indices)
            return self.em.load_at(node.buffer, ptr, self._vector_type(node.buffer.dtype), self.plan.lanes)
        out = ir.Constant(self._vector_type(node.buffer.dtype), ir.Undefined)
        for lane in range(self.plan.lanes):                     # a gather, lane by lane
            out = b.insert_element(out, self._scalar_at_lane(node, lane), ir.Constant(ir.IntType(32), lane))
        return out

    def _cast(self, value, src: str, dst: str):
        b = self.b
        if src == dst:
            return value
        target = self._vector_type(dst)
        src_float, dst_float = src.startswith("float"), dst.startswith("float")
        unsigned_src, unsigned_dst = src.startswith("uint"), dst.startswith("uint")
        if src_float and dst_float:
            return b.fpext(value, target) if dst == "float64" else b.fptrunc(value, target)
        if src_float:
            return b.fptoui(value, target) if unsigned_dst else b.fptosi(value, target)
        if dst_float:
            return b.uitofp(value, target) if unsigned_src else b.sitofp(value, target)
        src_bits, dst_bits = value.type.element.width, target.element.width
        if src_bits == dst_bits:
            return value
        if dst_bits < src_bits:
            return b.trunc(value, target)
        return b.zext(value, target) if unsigned_src else b.sext(value, target)


__all__ = ["MAX_LANES", "VECTOR_INTRINSICS", "VectorEmitter", "VectorPlan", "vector_plan"]
