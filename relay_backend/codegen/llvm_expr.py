"""tir expressions -> LLVM values, and dtype -> LLVM type.

`ExprEmitter` is the expression half of a function's code generator (llvm_stmt.py adds
statements). Evaluation uses an explicit stack, so arbitrarily deep expressions (long fused
elementwise chains) never hit Python's recursion limit; shared subexpressions are emitted
once per expression, and a Select whose branches read memory evaluates only the taken branch
(lazy_select.py). Semantics follow tir/expr.py and numpy: Div truncates on integers,
FloorDiv/FloorMod round toward -inf, Min/Max propagate NaN, `!=` is true for NaN.
"""
import functools

from llvmlite import ir

from .. import tir
from ..tir.functor import children as tir_children
from ..errors import CompileError
from . import llvm_target
from .lazy_select import BranchMemo, lazy_selects
from .llvm_math import nan_min_max

# a*b+c may become one fused multiply-add (C's default FP_CONTRACT): twice the FLOP/s of
# separate mul and add in every reduction kernel; results differ from unfused by <= 1 rounding
FP_CONTRACT = ("contract",)


def _contract(dtype: str) -> tuple:
    """float16 keeps one rounding per operation (as numpy and the C backend compute it)."""
    return () if dtype == "float16" else FP_CONTRACT
I1, I8, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)
PTR = ir.PointerType()

_FLOAT_TYPES = {"float16": ir.HalfType(), "float32": ir.FloatType(), "float64": ir.DoubleType()}


def llvm_type(dtype: str) -> ir.Type:
    """The register type of a tir dtype (bool is i1)."""
    if dtype == "bool":
        return I1
    if dtype in _FLOAT_TYPES:
        if dtype == "float16":
            _check_half_support()
        return _FLOAT_TYPES[dtype]
    if dtype == "handle":
        return PTR
    if dtype.startswith("int") or dtype.startswith("uint"):
        bits = int(dtype[3:] if dtype.startswith("int") else dtype[4:])
        if bits in (8, 16, 32, 64):
            return ir.IntType(bits)
    raise CompileError(f"llvm codegen: unsupported dtype {dtype!r}; supported: bool, "
                       f"int8/16/32/64, uint8/16/32/64, float16, float32, float64")


def _check_half_support() -> None:
    """float16 needs hardware half <-> float conversions (x86 F16C, any aarch64): without
    them LLVM calls compiler-rt helpers (__extendhfsf2, ...) that the JIT cannot resolve,
    and the kernel would jump to address 0 instead of failing cleanly."""
    if llvm_target.host_lacks_half_conversions():
        raise CompileError("llvm codegen: float16 needs the F16C instructions, which this x86 "
                           "CPU lacks; cast the model to float32 or use target='c'")


def mem_type(dtype: str) -> ir.Type:
    """The in-memory element type (bool is stored as one byte, like numpy)."""
    return I8 if dtype == "bool" else llvm_type(dtype)


def itemsize(dtype: str) -> int:
    t = mem_type(dtype)
    return t.width // 8 if isinstance(t, ir.IntType) else {"float16": 2, "float32": 4,
                                                            "float64": 8}[dtype]


def is_float(dtype: str) -> bool:
    return dtype in _FLOAT_TYPES


def is_unsigned(dtype: str) -> bool:
    return dtype.startswith("uint") or dtype == "bool"


_LEAVES = (tir.IntImm, tir.FloatImm, tir.Var)
_ICMP = {tir.EQ: "==", tir.NE: "!=", tir.LT: "<", tir.LE: "<=", tir.GT: ">", tir.GE: ">="}


def _children(node) -> list:
    """Sub-expressions evaluated before `node` (Let is handled specially by the emitter)."""
    return [] if isinstance(node, tir.Let) else tir_children(node)


def _is_int(dtype: str) -> bool:
    return dtype.startswith("int") or dtype.startswith("uint")


def _pure_int_kind(node):
    """A hashable description of what `node` computes from its operands' values, when its
    lowering is integer instructions only, all of which the value-numbering builder shares
    (llvm_builder.py): integer arithmetic, integer comparisons, integer-to-integer casts,
    logical and/or/not. Such a node emitted again in the same block with the same operand
    values would only return the earlier values; None for any other node."""
    if isinstance(node, tir.BinaryOp):
        return (type(node), node.dtype) if _is_int(node.dtype) else None
    if isinstance(node, tir.CmpOp):
        return (type(node), node.a.dtype) if _is_int(node.a.dtype) else None
    if isinstance(node, tir.Cast):
        return ((tir.Cast, node.value.dtype, node.dtype)
                if _is_int(node.value.dtype) and _is_int(node.dtype) else None)
    if isinstance(node, (tir.And, tir.Or, tir.Not)):
        return (type(node),)
    return None


def _pure_int_tree(trees: dict, root):
    """The Vars (distinct, in a fixed order) of `root` when every node of it is an integer
    constant, a Var or a node of a _pure_int_kind, else None. Such a tree's value is a function
    of its Vars' values alone, and lowering it again in a block where it was lowered appends
    nothing (each node a LoweredNodes hit), so the emitter remembers the whole tree's value
    (LoweredNodes keyed by ("tree", id(root)) and the Vars' values). Answers are kept in
    `trees` (the LoweredNodes' own: id(root) -> (root, Vars or None)), which holds each root
    so its id stays its own as long as the table that uses it."""
    hit = trees.get(id(root))
    if hit is not None and hit[0] is root:
        return hit[1]
    found, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is tir.IntImm:
            continue
        if type(node) is tir.Var:
            found.append(node)
            continue
        if isinstance(node, tir.Let) or _pure_int_kind(node) is None:
            found = None
            break
        stack.extend(tir_children(node))
    trees[id(root)] = (root, None if found is None else tuple(found))
    return trees[id(root)][1]


class ExprEmitter:
    """Lowers tir expressions with `self.builder`; needs `self.vars` (id(Var) -> value),
    `self.buffers` (id(buffer.data) -> pointer) and `self.math` (a MathLib)."""

    builder: ir.IRBuilder
    thread_id = None           # set inside an outlined parallel body
    num_threads = None

    def expr(self, root):
        """Emit `root` and return its LLVM value.

        Post-order over an explicit stack of (node, state, data). A Let binds its var between
        value and body; a lazy Select (lazy_select.py) emits its condition, then each branch in
        its own basic block (state 1: open the then-block, 2: the else-block, 3: merge by a phi).
        """
        if isinstance(root, _LEAVES):          # most indices: no traversal to set up
            return self._lower(root, ())
        lowered = getattr(self.builder, "lowered", None)     # llvm_builder: pure int nodes
        if lowered is not None:
            tree_vars = _pure_int_tree(lowered.trees, root)
            if tree_vars is not None:
                vals = [self.vars.get(id(v)) for v in tree_vars]
                if None not in vals:
                    return lowered.get_or_lower(("tree", id(root)), vals,
                                                lambda: self._expr(root, lowered))
        return self._expr(root, lowered)

    def _expr(self, root, lowered):
        memo = BranchMemo()
        lazy = None                            # found on the first Select (most have none)
        stack = [(root, 0, None)]
        while stack:
            node, state, data = stack.pop()
            key = id(node)
            if state == 0 and key in memo:
                continue
            if isinstance(node, tir.Let):
                if state == 0:
                    stack.append((node, 1, None))
                    stack.append((node.value, 0, None))
                elif state == 1:
                    self.vars[id(node.var)] = memo[id(node.value)]
                    stack.append((node, 2, None))
                    stack.append((node.body, 0, None))
                else:
                    memo[key] = memo[id(node.body)]
                continue
            if isinstance(node, tir.Select):
                if lazy is None:
                    lazy = lazy_selects([root])
                if key in lazy:
                    self._lazy_select_step(node, state, data, memo, stack)
                    continue
            kids = _children(node)
            if state == 0 and kids:
                stack.append((node, 1, None))
                stack.extend((k, 0, None) for k in reversed(kids) if id(k) not in memo)
                continue
            vals = [memo[id(k)] for k in kids]
            kind = _pure_int_kind(node) if lowered is not None else None
            if kind is None:
                memo[key] = self._lower(node, vals)
            else:
                memo[key] = lowered.get_or_lower(kind, vals, lambda: self._lower(node, vals))
        return memo[id(root)]

    def _lazy_select_step(self, node, state, data, memo, stack):
        """One step of a Select whose branches read memory: only the taken branch runs (a
        padded input's out-of-range load must not), the two results merge in a phi."""
        b = self.builder
        if state == 0:                                  # the condition first
            stack.append((node, 1, None))
            stack.append((node.condition, 0, None))
        elif state == 1:                                # then-branch in its own block
            blocks = (b.append_basic_block("sel_then"), b.append_basic_block("sel_else"),
                      b.append_basic_block("sel_end"))
            b.cbranch(memo[id(node.condition)], blocks[0], blocks[1])
            b.position_at_end(blocks[0])
            memo.enter()
            stack.append((node, 2, blocks))
            stack.append((node.true_value, 0, None))
        elif state == 2:                                # else-branch in its own block
            then_bb, else_bb, merge = data
            true_value, then_end = memo[id(node.true_value)], b.block
            b.branch(merge)
            memo.leave()
            b.position_at_end(else_bb)
            memo.enter()
            stack.append((node, 3, (merge, true_value, then_end)))
            stack.append((node.false_value, 0, None))
        else:                                           # merge
            merge, true_value, then_end = data
            false_value, else_end = memo[id(node.false_value)], b.block
            b.branch(merge)
            memo.leave()
            b.position_at_end(merge)
            phi = b.phi(true_value.type)
            phi.add_incoming(true_value, then_end)
            phi.add_incoming(false_value, else_end)
            memo[id(node)] = phi

    # ------------------------------------------------------------------ leaves and nodes
    def _lower(self, node, vals):
        b = self.builder
        if isinstance(node, tir.IntImm):
            return ir.Constant(llvm_type(node.dtype), int(node.value))
        if isinstance(node, tir.FloatImm):
            return ir.Constant(llvm_type(node.dtype), node.value)
        if isinstance(node, tir.Var):
            val = self.vars.get(id(node))
            if val is None:
                raise CompileError(f"llvm codegen: variable {node.name} ({node.dtype}) is used "
                                   f"but not bound here (not a shape var, loop var or Let)")
            return val
        if isinstance(node, tir.CmpOp):
            return self._compare(node, *vals)
        if isinstance(node, tir.And):
            return b.and_(*vals)
        if isinstance(node, tir.Or):
            return b.or_(*vals)
        if isinstance(node, tir.Not):
            return b.xor(vals[0], ir.Constant(I1, 1))
        if isinstance(node, tir.BinaryOp):
            return self._arith(node, *vals)
        if isinstance(node, tir.Select):
            return b.select(*vals)
        if isinstance(node, tir.Cast):
            return self.cast(vals[0], node.value.dtype, node.dtype)
        if isinstance(node, tir.Call):
            return self._call(node, vals)
        if isinstance(node, tir.BufferLoad):
            return self.load(node.buffer, vals)
        raise CompileError(f"llvm codegen: cannot lower {type(node).__name__} `{node}` "
                           f"(te-level nodes must be lowered to tir first)")

    def _call(self, node, vals):
        if node.op_name == "omp_get_thread_num":
            return self.thread_id if self.thread_id is not None else ir.Constant(ir.IntType(32), 0)
        if node.op_name == "omp_get_num_threads":
            return self.num_threads if self.num_threads is not None else ir.Constant(ir.IntType(32), 1)
        if node.op_name == "reinterpret":          # same-width bits, e.g. float32 <-> int32
            return self.builder.bitcast(vals[0], llvm_type(node.dtype))
        return self.math.call(self.builder, node.op_name, vals, node.dtype)

    def _compare(self, node, a, b_):
        b, dt = self.builder, node.a.dtype
        op = _ICMP[type(node)]
        if is_float(dt):
            if op == "!=":
                return b.fcmp_unordered("!=", a, b_)
            return b.fcmp_ordered(op, a, b_)
        if is_unsigned(dt):
            return b.icmp_unsigned(op, a, b_)
        return b.icmp_signed(op, a, b_)

    def _arith(self, node, a, c):
        b, dt = self.builder, node.dtype
        kind = type(node)
        if is_float(dt):
            if kind is tir.Add:
                return b.fadd(a, c, flags=_contract(dt))
            if kind is tir.Sub:
                return b.fsub(a, c, flags=_contract(dt))
            if kind is tir.Mul:
                return b.fmul(a, c, flags=_contract(dt))
            if kind is tir.Div:
                return b.fdiv(a, c)
            if kind is tir.Mod:
                return b.frem(a, c)
            if kind in (tir.FloorDiv, tir.FloorMod):
                q = self.math.intrinsic(b, "floor", b.fdiv(a, c))
                return q if kind is tir.FloorDiv else b.fsub(a, b.fmul(q, c))
            if kind in (tir.Min, tir.Max):
                return nan_min_max(b, kind is tir.Min, a, c)
        if dt == "bool":
            raise CompileError(f"llvm codegen: arithmetic `{node}` on bool values; cast to int32")
        signed = not is_unsigned(dt)
        flags = ["nsw"] if signed else []
        if kind is tir.Add:
            return b.add(a, c, flags=flags)
        if kind is tir.Sub:
            return b.sub(a, c, flags=flags)
        if kind is tir.Mul:
            return b.mul(a, c, flags=flags)
        if kind is tir.Div:
            return b.sdiv(a, c) if signed else b.udiv(a, c)
        if kind is tir.Mod:
            return b.srem(a, c) if signed else b.urem(a, c)
        if kind in (tir.Min, tir.Max):
            op = "<" if kind is tir.Min else ">"
            cmp = b.icmp_signed(op, a, c) if signed else b.icmp_unsigned(op, a, c)
            return b.select(cmp, a, c)
        if kind in (tir.FloorDiv, tir.FloorMod):
            if not signed:
                return b.udiv(a, c) if kind is tir.FloorDiv else b.urem(a, c)
            zero = ir.Constant(a.type, 0)
            rem = b.srem(a, c)
            # the C remainder has the dividend's sign; fix up when it differs from the divisor's
            fix = b.and_(b.icmp_signed("!=", rem, zero),
                         b.icmp_signed("!=", b.icmp_signed("<", rem, zero),
                                       b.icmp_signed("<", c, zero)))
            if kind is tir.FloorMod:
                return b.select(fix, b.add(rem, c), rem)
            quo = b.sdiv(a, c)
            return b.select(fix, b.sub(quo, ir.Constant(a.type, 1)), quo)
        raise CompileError(f"llvm codegen: unsupported operator {kind.__name__} on {dt}")

    # ------------------------------------------------------------------ conversions
    def cast(self, v, src: str, dst: str):
        """Convert an LLVM value of dtype `src` to dtype `dst` (numpy/C semantics)."""
        b = self.builder
        if src == dst:
            return v
        st, dt_ = llvm_type(src), llvm_type(dst)
        if dst == "bool":
            if is_float(src):
                return b.fcmp_unordered("!=", v, ir.Constant(st, 0.0))
            return b.icmp_unsigned("!=", v, ir.Constant(st, 0))
        if src == "float64" and dst == "float16":
            return b.fptrunc(self._f64_to_f32_round_to_odd(v), dt_)
        if is_float(src) and is_float(dst):
            return b.fpext(v, dt_) if _fbits(dst) > _fbits(src) else b.fptrunc(v, dt_)
        if is_float(src):
            return b.fptoui(v, dt_) if is_unsigned(dst) else b.fptosi(v, dt_)
        if is_float(dst):
            return b.uitofp(v, dt_) if is_unsigned(src) else b.sitofp(v, dt_)
        if dt_.width == st.width:
            return v
        if dt_.width < st.width:
            return b.trunc(v, dt_)
        return b.zext(v, dt_) if is_unsigned(src) else b.sext(v, dt_)

    def _f64_to_f32_round_to_odd(self, v):
        """float64 -> float32 rounded to odd, so a following float32 -> float16 rounding
        gives the correctly rounded float16 (as numpy's astype does) without double rounding.

        Needed because x86 has no double -> half instruction: LLVM lowers `fptrunc double to
        half` to a call of compiler-rt's __truncdfhf2, which the JIT cannot resolve (the call
        jumped to address 0). Round-to-odd: when the float32 rounding was inexact, take the
        neighbour toward zero and set its lowest mantissa bit (24 bits >= 11 + 2, so the
        sticky bit survives into the float16 rounding)."""
        b = self.builder
        f32 = ir.FloatType()
        i32 = ir.IntType(32)
        t = b.fptrunc(v, f32)
        wide = b.fpext(t, v.type)
        inexact = b.fcmp_ordered("!=", wide, v)          # false for NaN and exact values
        # |t| > |v| (rounded away from zero): the magnitude steps down one ulp. t never has
        # the opposite sign of v, and an inexact t that overshoots is nonzero.
        away = b.xor(b.fcmp_ordered(">", wide, v), b.fcmp_ordered("<", v, ir.Constant(v.type, 0.0)))
        bits = b.bitcast(t, i32)
        toward_zero = b.sub(bits, b.zext(away, i32))
        odd = b.bitcast(b.or_(toward_zero, ir.Constant(i32, 1)), f32)
        return b.select(inexact, odd, t)

    def to_index(self, v, dtype: str):
        """An index value widened to i64."""
        return self.cast(v, dtype, "int64")

    # ------------------------------------------------------------------ memory
    def element_ptr(self, buffer, index_vals):
        """Address of buffer[indices]: row-major (or explicit-stride) offset in int64."""
        base = self.buffers.get(id(buffer.data))
        if base is None:
            raise CompileError(f"llvm codegen: buffer {buffer.name} is used but not a parameter "
                               f"or an enclosing Allocate")
        if len(index_vals) != buffer.ndim:
            raise CompileError(f"llvm codegen: buffer {buffer.name} has rank {buffer.ndim} but "
                               f"is indexed with {len(index_vals)} indices")
        b = self.builder
        strides = self._strides(buffer)
        lowered = getattr(b, "lowered", None)
        if lowered is not None and type(strides) is tuple:     # _static_strides: a static shape
            offset, const = self._static_offset(lowered, strides, index_vals)
        else:
            offset, const = self._offset(strides, index_vals)
        if const or offset is None:
            const = ir.Constant(I64, const)
            offset = const if offset is None else _folded(b.add, offset, const)
        if type(offset) is ir.Constant and offset.constant == 0:
            return base
        return b.gep(base, [offset], inbounds=True, source_etype=mem_type(buffer.dtype))

    def _offset(self, strides, index_vals):
        """(offset of the non-constant indices as an i64 value or None, the constant indices'
        part as an int, added last)."""
        b = self.builder
        offset, const = None, 0
        for idx, stride in zip(index_vals, strides):
            if type(idx) is ir.Constant and (stride is None or type(stride) is ir.Constant):
                const += idx.constant * (1 if stride is None else stride.constant)
                continue
            if isinstance(idx, ir.Constant):
                idx = ir.Constant(I64, idx.constant)
            elif idx.type.width < 64:
                idx = b.sext(idx, I64)
            term = idx if stride is None else _folded(b.mul, idx, stride)
            offset = term if offset is None else _folded(b.add, offset, term)
        return offset, const

    def _static_offset(self, lowered, strides, index_vals):
        """_offset for constant `strides` (a static shape). Its non-constant part is only
        sext/mul/add of the non-constant indices, instructions the value-numbering builder
        shares, so the part already built in this block from the same index values is taken
        from its LoweredNodes table (same IR, less Python: the loads of an unrolled tile differ
        in their constant indices only)."""
        const, dims, vals = 0, [], []
        for dim, (idx, stride) in enumerate(zip(index_vals, strides)):
            if type(idx) is ir.Constant:
                const += idx.constant * (1 if stride is None else stride.constant)
            else:
                dims.append(dim)
                vals.append(idx)
        if not vals:
            return None, const
        picked = [strides[d] for d in dims]
        kind = ("offset", tuple(1 if st is None else st.constant for st in picked))
        offset = lowered.get_or_lower(kind, vals,
                                      lambda: self._offset(picked, vals)[0])
        return offset, const

    def _strides(self, buffer):
        """Per-dimension stride values (None = 1), as i64 LLVM values."""
        if buffer.strides is not None:
            return [self.to_index(self.expr(s), s.dtype) for s in buffer.strides]
        if all(type(dim) is tir.IntImm for dim in buffer.shape):
            return _static_strides(tuple(int(dim.value) for dim in buffer.shape))
        out, acc = [], None
        for dim in reversed(buffer.shape):
            out.append(acc)
            if isinstance(dim, tir.IntImm):
                d = ir.Constant(I64, int(dim.value))
            else:
                d = self.to_index(self.expr(dim), dim.dtype)
            acc = d if acc is None else _folded(self.builder.mul, acc, d)
        return list(reversed(out))

    read_only = frozenset()    # id(buffer.data) of the buffers no statement of the function stores to

    def load(self, buffer, index_vals):
        ptr = self.element_ptr(buffer, index_vals)
        val = self.load_at(buffer, ptr, mem_type(buffer.dtype), 1)
        if buffer.dtype == "bool":
            return self.builder.icmp_unsigned("!=", val, ir.Constant(I8, 0))
        return val

    def load_at(self, buffer, ptr, typ, lanes: int):
        """`lanes` elements of `buffer` at `ptr` as `typ`. A read-only buffer's load is emitted once
        per basic block and pointer: nothing in the function writes that memory (the function's
        buffers are distinct noalias allocations, and tir writes memory only by BufferStore), so
        a repeated load would read the same value. An unrolled register tile loads each weight
        vector and input element once per step instead of once per accumulator."""
        b = self.builder
        block = b.block
        if id(buffer.data) not in self.read_only or b._anchor != len(block.instructions):
            return b.load(ptr, typ=typ, align=itemsize(buffer.dtype))
        loads = self.__dict__.setdefault("_loads", {})
        key = (id(block), id(ptr), buffer.dtype, lanes)
        hit = loads.get(key)
        if hit is not None:
            return hit[0]
        value = b.load(ptr, typ=typ, align=itemsize(buffer.dtype))
        loads[key] = (value, ptr, block)       # ptr and block alive: their ids stay unique
        return value

    def store(self, buffer, index_vals, value):
        ptr = self.element_ptr(buffer, index_vals)
        if buffer.dtype == "bool":
            value = self.builder.zext(value, I8)
        self.builder.store(value, ptr, align=itemsize(buffer.dtype))


@functools.lru_cache(maxsize=4096)
def _static_strides(shape: tuple) -> tuple:
    """The strides of a row-major buffer of static `shape`: None (1) for the last dimension,
    i64 constants for the others (shared: llvmlite constants are immutable)."""
    out, acc = [None], 1
    for dim in reversed(shape[1:]):
        acc *= dim
        out.append(ir.Constant(I64, acc))
    return tuple(reversed(out))


def _folded(op, a, c):
    """`op(a, c)` (an IRBuilder add or mul, nsw) on i64 index values; two constants fold here,
    so a static buffer's offsets reach LLVM as constants rather than instruction chains."""
    if isinstance(a, ir.Constant) and isinstance(c, ir.Constant):
        if op.__name__ == "add":
            return ir.Constant(I64, a.constant + c.constant)
        return ir.Constant(I64, a.constant * c.constant)
    return op(a, c, flags=["nsw"])


def _fbits(dtype: str) -> int:
    return {"float16": 16, "float32": 32, "float64": 64}[dtype]
