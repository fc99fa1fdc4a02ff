"""An llvmlite IRBuilder that does not emit the same pure integer instruction twice in a block.

Guarantee: the IR it builds computes exactly what the plain IRBuilder's would; it only leaves
out instructions whose result is already at hand.

- **Local value numbering**: an integer/pointer instruction without side effects (integer
  arithmetic and comparisons, casts, selects, getelementptr, vector element inserts and
  shuffles) whose opcode, operands, flags and types equal those of one already appended to the
  current basic block returns that earlier value instead. The earlier instruction is in the
  same block and before the builder's position, so it dominates the use. Tir indexing repeats
  such subexpressions in every statement (each store of an unrolled register tile recomputes
  `floordiv(fused, 14)`, its sign fix-up and the widening of the loop variables); LLVM's
  EarlyCSE would remove them, but building, printing and parsing them first was a large part
  of a cold build. Floating-point arithmetic is never shared: a `contract` fmul with two uses
  would no longer fuse into an FMA, changing results.
- **Identities**: integer `x + 0`, `0 + x`, `x - 0`, `x * 1`, `1 * x` are `x`
  (the emitter's flat offsets add a zero term per constant index and multiply by unit strides).

Only instructions appended at the end of a block are shared or remembered (the code generator
never inserts in the middle; if something did, nothing placed there would be reused).
Unnamed instructions only: a named one (a loop variable's phi, an allocation) is always new.
"""
import struct

from llvmlite import ir

# IRBuilder methods whose result depends only on their arguments (no memory, no side effects)
# and that produce no floating-point arithmetic (see the module docstring: FMA contraction)
_PURE = ("add", "sub", "mul", "sdiv", "srem", "udiv", "urem", "shl", "lshr", "ashr",
         "and_", "or_", "xor", "icmp_signed", "icmp_unsigned", "fcmp_ordered", "fcmp_unordered",
         "sext", "zext", "trunc", "bitcast", "select", "gep", "insert_element",
         "shuffle_vector")
_INT_BINOPS = ("add", "sub", "mul")


# id(aggregate constant) -> (the constant, its key): printing a <16 x float> constant for every
# lookup was a large part of building vector code; shared constants (llvm_vector's undef
# vectors and splat masks) are printed once. The constant is held, so its id stays its own.
_CONST_TEXT = {}


def _operand_key(value):
    """A hashable stand-in for an operand: scalar constants by (type, value) (equal constants
    are often distinct objects; int and float types are singletons in llvmlite, floats by their
    bits so -0.0 stays apart from 0.0), other constants by their text, lists element-wise, other
    values by identity (the cache keeps them alive), strings and types (compare ops, cast
    targets) as themselves."""
    kind = type(value)
    if kind is ir.Constant:
        const = value.constant
        if type(const) is int or type(const) is bool:
            return (id(value.type), int(const))
        if type(const) is float:
            return (id(value.type), struct.pack("<d", const))
        hit = _CONST_TEXT.get(id(value))
        if hit is None or hit[0] is not value:
            if len(_CONST_TEXT) >= 4096:
                _CONST_TEXT.clear()
            hit = _CONST_TEXT[id(value)] = (value, ("const", str(value)))
        return hit[1]
    if kind is list or kind is tuple:
        return tuple(_operand_key(v) for v in value)
    if kind is str or kind is int or kind is bool or value is None or isinstance(value, ir.Type):
        return value
    return id(value)


def _identity(op: str, lhs, rhs):
    """The operand `op(lhs, rhs)` equals, for integer add/sub/mul with a 0 or 1 constant
    (same type, so no implicit conversion); None otherwise."""
    unit = 1 if op == "mul" else 0
    if type(rhs) is ir.Constant and _is_unit(rhs, unit, lhs):
        return lhs
    if op != "sub" and type(lhs) is ir.Constant and _is_unit(lhs, unit, rhs):
        return rhs
    return None


def _is_unit(const, unit: int, other) -> bool:
    return (type(const.constant) is int and const.constant == unit
            and isinstance(const.type, ir.IntType) and const.type is other.type)


class ValueNumberingBuilder(ir.IRBuilder):
    """ir.IRBuilder with per-block sharing of pure integer instructions (module docstring)."""

    def __init__(self, block=None):
        super().__init__(block)
        self._numbered = {}          # (method, id(block), operand keys) -> (value, operands)
        self.lowered = LoweredNodes(self)


class LoweredNodes:
    """Whole tir nodes whose lowering is only shared instructions (llvm_expr._pure_int_kind),
    remembered per block by (kind, operand values): emitting such a node again in the same
    block would append nothing and return the same value (every instruction a hit in the
    builder's table), so the emitter takes the value from here and skips the Python work of
    lowering it again (each unrolled store recomputes the same index arithmetic)."""

    def __init__(self, builder):
        self._builder = builder
        self._values = {}            # (kind, id(block), operand keys) -> (value, operands)
        self.trees = {}              # llvm_expr._pure_int_tree's answers (they hold the roots)

    def get_or_lower(self, kind, vals, lower):
        """The value of a node of `kind` over operand values `vals`: remembered, else
        `lower()`'s, remembered when the builder appends at the end of one block throughout."""
        b = self._builder
        block = b._block
        if b._anchor != len(block.instructions):
            return lower()
        key = (kind, id(block), *map(_operand_key, vals))
        hit = self._values.get(key)
        if hit is not None:
            return hit[0]
        value = lower()
        if b._block is block and b._anchor == len(block.instructions):
            self._values[key] = (value, vals, block)     # operands alive: ids stay unique
        return value


def _numbered(method: str):
    base = getattr(ir.IRBuilder, method)
    binop = method in _INT_BINOPS

    def build(self, *args, **kwargs):
        if kwargs.get("name") or self._anchor != len(self._block.instructions):
            return base(self, *args, **kwargs)
        if binop:
            same = _identity(method, args[0], args[1])
            if same is not None:
                return same
        key = (method, id(self._block), *map(_operand_key, args),
               *((k, _operand_key(v)) for k, v in kwargs.items()))
        hit = self._numbered.get(key)
        if hit is not None:
            return hit[0]
        value = base(self, *args, **kwargs)
        self._numbered[key] = (value, args, self._block)    # operands alive: ids stay unique
        return value

    build.__name__ = method
    build.__doc__ = f"IRBuilder.{method}, shared within the block (module docstring)."
    return build


for _method in _PURE:
    setattr(ValueNumberingBuilder, _method, _numbered(_method))

__all__ = ["LoweredNodes", "ValueNumberingBuilder"]
