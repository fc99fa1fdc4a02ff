"""Scalar expressions of the loop-nest IR (PrimExpr and its node classes).

Every node is an immutable-by-convention object with `dtype` and a class-level `_fields` tuple
naming its children in order (generic traversals in tir/functor.py read it). Python operators
build nodes (`i * 4 + j`, `x < n`), promoting Python numbers to IntImm/FloatImm of the other
operand's dtype. `==`/`!=` build EQ/NE whose truth value is object identity (as in TVM), so
PrimExprs still work as dict keys.
"""
import itertools

import numpy as np

from ..errors import CompileError

_counter = itertools.count()


def is_int_dtype(dtype: str) -> bool:
    return dtype.startswith("int") or dtype.startswith("uint")


def is_float_dtype(dtype: str) -> bool:
    return dtype.startswith("float") or dtype.startswith("bfloat")


def _bits(dtype: str) -> int:
    digits = "".join(c for c in dtype if c.isdigit())
    return int(digits) if digits else 32


class PrimExpr:
    """Base of scalar expressions; `dtype` is a string ("int32", "float32", "bool", ...)."""

    __slots__ = ("dtype",)
    _fields = ()

    # -- arithmetic ------------------------------------------------------------------------
    def __add__(self, other):
        return Add(*_match(self, other, "+"))

    def __radd__(self, other):
        return Add(*_match(other, self, "+"))

    def __sub__(self, other):
        return Sub(*_match(self, other, "-"))

    def __rsub__(self, other):
        return Sub(*_match(other, self, "-"))

    def __mul__(self, other):
        return Mul(*_match(self, other, "*"))

    def __rmul__(self, other):
        return Mul(*_match(other, self, "*"))

    def __truediv__(self, other):
        return _div(self, other)

    def __rtruediv__(self, other):
        return _div(other, self)

    def __floordiv__(self, other):
        return FloorDiv(*_match(self, other, "//"))

    def __rfloordiv__(self, other):
        return FloorDiv(*_match(other, self, "//"))

    def __mod__(self, other):
        return FloorMod(*_match(self, other, "%"))

    def __rmod__(self, other):
        return FloorMod(*_match(other, self, "%"))

    def __neg__(self):
        return Sub(const(0, self.dtype), self)

    # -- comparisons -----------------------------------------------------------------------
    def __lt__(self, other):
        return LT(*_match(self, other, "<"))

    def __le__(self, other):
        return LE(*_match(self, other, "<="))

    def __gt__(self, other):
        return GT(*_match(self, other, ">"))

    def __ge__(self, other):
        return GE(*_match(self, other, ">="))

    def __eq__(self, other):
        return EQ(*_match(self, other, "=="))

    def __ne__(self, other):
        return NE(*_match(self, other, "!="))

    __hash__ = object.__hash__

    def equal(self, other):  # the symbolic comparison `self == other` (an EQ node)
        return EQ(*_match(self, other, "=="))

    def __and__(self, other):
        return And(self, convert(other, "bool"))

    def __or__(self, other):
        return Or(self, convert(other, "bool"))

    def __invert__(self):
        return Not(self)

    def __bool__(self):
        raise CompileError(
            f"cannot use the symbolic expression `{self}` as a Python bool; "
            "use tir.Select / te.if_then_else for a data-dependent choice")

    def astype(self, dtype: str) -> "PrimExpr":
        return self if dtype == self.dtype else Cast(dtype, self)

    def same_as(self, other) -> bool:   # object identity, as TVM's (`==` builds an EQ node)
        return self is other

    def __repr__(self):
        from .printer import expr_to_str
        return expr_to_str(self)

    __str__ = __repr__


# --- leaves -------------------------------------------------------------------------------

class IntImm(PrimExpr):
    """An integer (or bool) constant."""
    __slots__ = ("value",)

    def __init__(self, dtype: str, value: int):
        self.dtype = dtype
        self.value = bool(value) if dtype == "bool" else int(value)

    def __int__(self) -> int:
        return int(self.value)

    __index__ = __int__


class FloatImm(PrimExpr):
    """A floating-point constant."""
    __slots__ = ("value",)

    def __init__(self, dtype: str, value: float):
        self.dtype = dtype
        self.value = float(value)


class StringImm(PrimExpr):
    """A string constant (only as a Call argument, e.g. for annotations)."""
    __slots__ = ("value",)

    def __init__(self, value: str):
        self.dtype = "handle"
        self.value = str(value)


class Var(PrimExpr):
    """A named scalar variable: a loop index, a Let binding, or a symbolic shape dimension.

    Identity matters: two Vars with the same name are different variables.
    """
    __slots__ = ("name", "uid")

    def __init__(self, name: str = "v", dtype: str = "int32"):
        self.dtype = dtype
        self.name = name
        self.uid = next(_counter)

    @property
    def name_hint(self):
        return self.name


class SizeVar(Var):
    """A symbolic dimension known to be >= 0 (the simplifier may use that)."""
    __slots__ = ()


# --- operators ----------------------------------------------------------------------------

class BinaryOp(PrimExpr):
    """Base of two-operand nodes; `symbol` is the printed operator."""
    __slots__ = ("a", "b")
    _fields = ("a", "b")
    symbol = "?"

    def __init__(self, a: PrimExpr, b: PrimExpr):
        self.a = a
        self.b = b
        self.dtype = self._result_dtype(a, b)

    def _result_dtype(self, a, b):
        if a.dtype != b.dtype:
            raise CompileError(
                f"{type(self).__name__}: operand dtypes differ ({a.dtype} vs {b.dtype}) in "
                f"`{a}` and `{b}`; cast one side with .astype()")
        return a.dtype


class Add(BinaryOp):
    __slots__ = ()
    symbol = "+"


class Sub(BinaryOp):
    __slots__ = ()
    symbol = "-"


class Mul(BinaryOp):
    __slots__ = ()
    symbol = "*"


class Div(BinaryOp):
    """Division; true division for floats (integer operands truncate toward zero, as in C)."""
    __slots__ = ()
    symbol = "/"


class Mod(BinaryOp):
    """Remainder with the sign of the dividend (C semantics); index math uses FloorMod."""
    __slots__ = ()
    symbol = "%t"


class FloorDiv(BinaryOp):
    """Integer division rounding toward negative infinity."""
    __slots__ = ()
    symbol = "//"


class FloorMod(BinaryOp):
    """Remainder with the sign of the divisor (pairs with FloorDiv)."""
    __slots__ = ()
    symbol = "%"


class Min(BinaryOp):
    __slots__ = ()
    symbol = "min"


class Max(BinaryOp):
    __slots__ = ()
    symbol = "max"


class CmpOp(BinaryOp):
    """Base of comparisons; the result dtype is bool."""
    __slots__ = ()

    def _result_dtype(self, a, b):
        BinaryOp._result_dtype(self, a, b)
        return "bool"


class EQ(CmpOp):
    __slots__ = ()
    symbol = "=="

    def __bool__(self):
        return self.a is self.b


class NE(CmpOp):
    __slots__ = ()
    symbol = "!="

    def __bool__(self):
        return self.a is not self.b


class LT(CmpOp):
    __slots__ = ()
    symbol = "<"


class LE(CmpOp):
    __slots__ = ()
    symbol = "<="


class GT(CmpOp):
    __slots__ = ()
    symbol = ">"


class GE(CmpOp):
    __slots__ = ()
    symbol = ">="


class And(BinaryOp):
    __slots__ = ()
    symbol = "and"

    def _result_dtype(self, a, b):
        _expect_bool(a, "And")
        _expect_bool(b, "And")
        return "bool"


class Or(BinaryOp):
    __slots__ = ()
    symbol = "or"

    def _result_dtype(self, a, b):
        _expect_bool(a, "Or")
        _expect_bool(b, "Or")
        return "bool"


class Not(PrimExpr):
    __slots__ = ("a",)
    _fields = ("a",)

    def __init__(self, a: PrimExpr):
        _expect_bool(a, "Not")
        self.a = a
        self.dtype = "bool"


class Select(PrimExpr):
    """`true_value if condition else false_value`; backends may evaluate both sides, so
    neither side may have side effects (loads must stay in bounds or be guarded)."""
    __slots__ = ("condition", "true_value", "false_value")
    _fields = ("condition", "true_value", "false_value")

    def __init__(self, condition, true_value, false_value):
        condition = convert(condition, "bool")
        _expect_bool(condition, "Select")
        if not (isinstance(true_value, PrimExpr) and isinstance(false_value, PrimExpr)):
            true_value, false_value = _match(true_value, false_value, "Select")
        if true_value.dtype != false_value.dtype:
            raise CompileError(f"Select: branch dtypes differ ({true_value.dtype} vs "
                               f"{false_value.dtype}); cast one branch")
        self.condition = condition
        self.true_value = true_value
        self.false_value = false_value
        self.dtype = true_value.dtype


class Cast(PrimExpr):
    """Convert `value` to `dtype` (float->int truncates toward zero)."""
    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, dtype: str, value: PrimExpr):
        self.dtype = dtype
        self.value = value


# Intrinsics a Call may name, with arity (bit ops: int/bool operands; shift amounts in [0, bits)).
INTRINSICS = {
    "exp": 1, "exp2": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 1, "tanh": 1, "sqrt": 1, "rsqrt": 1, "erf": 1,
    "sigmoid": 1, "fabs": 1, "floor": 1, "ceil": 1, "round": 1, "trunc": 1, "sin": 1, "cos": 1, "tan": 1,
    "asin": 1, "acos": 1, "atan": 1, "sinh": 1, "cosh": 1, "isnan": 1, "isinf": 1, "pow": 2, "atan2": 2,
    "fmod": 2, "reinterpret": 1, "bitwise_and": 2, "bitwise_or": 2, "bitwise_xor": 2, "bitwise_not": 1,
    "shift_left": 2, "shift_right": 2}


class Call(PrimExpr):
    """A pure math intrinsic call, e.g. Call("float32", "exp", [x]); names in INTRINSICS."""
    __slots__ = ("op_name", "args")
    _fields = ("args",)

    def __init__(self, dtype: str, op_name: str, args):
        if op_name not in INTRINSICS:
            raise CompileError(f"tir.Call: unknown intrinsic {op_name!r}; "
                               f"known: {sorted(INTRINSICS)}")
        if len(args) != INTRINSICS[op_name]:
            raise CompileError(f"tir.Call {op_name}: expects {INTRINSICS[op_name]} argument(s), "
                               f"got {len(args)}")
        self.dtype = dtype
        self.op_name = op_name
        self.args = tuple(args)

    @property
    def op(self):
        return self.op_name


class BufferLoad(PrimExpr):
    """Read `buffer[indices]` (one index per buffer dimension)."""
    __slots__ = ("buffer", "indices")
    _fields = ("indices",)

    def __init__(self, buffer, indices):
        self.buffer = buffer
        self.indices = tuple(convert(i, "int32") for i in indices)
        self.dtype = buffer.dtype


class ProducerLoad(PrimExpr):
    """Read element `indices` of a te Tensor (exists only before lowering)."""
    __slots__ = ("producer", "indices")
    _fields = ("indices",)

    def __init__(self, producer, indices):
        self.producer = producer
        self.indices = tuple(convert(i, "int32") for i in indices)
        self.dtype = producer.dtype


class Let(PrimExpr):
    """`body` with `var` bound to `value`."""
    __slots__ = ("var", "value", "body")
    _fields = ("var", "value", "body")

    def __init__(self, var: Var, value: PrimExpr, body: PrimExpr):
        self.var = var
        self.value = value
        self.body = body
        self.dtype = body.dtype


# --- reductions (te level; lowering removes them) -----------------------------------------

class Range:
    """The half-open interval [min, min + extent)."""
    __slots__ = ("min", "extent")

    def __init__(self, min, extent):
        self.min = convert(min, "int32")
        self.extent = convert(extent, "int32")

    @staticmethod
    def from_min_extent(min, extent):
        return Range(min, extent)

    def __repr__(self):
        return f"range(min={self.min}, ext={self.extent})"


class IterVar:
    """An iteration axis: a Var with its domain; iter_type "data", "reduce" or "thread"."""
    __slots__ = ("var", "dom", "iter_type", "thread_tag")

    def __init__(self, dom, var, iter_type="data", thread_tag=""):
        self.dom = dom
        self.var = var
        self.iter_type = iter_type
        self.thread_tag = thread_tag

    def __repr__(self):
        return f"IterVar({self.var.name}, {self.dom}, {self.iter_type})"


class CommReducer:
    """A commutative reducer over tuples: result[i] = combine(lhs, rhs)[i], with identity."""
    __slots__ = ("lhs", "rhs", "result", "identity_element", "name")

    def __init__(self, lhs, rhs, result, identity_element, name="reduce"):
        self.lhs = tuple(lhs)
        self.rhs = tuple(rhs)
        self.result = tuple(result)
        self.identity_element = tuple(identity_element)
        self.name = name


class Reduce(PrimExpr):
    """Reduce `source` over the IterVars `axis` with `combiner`; element `value_index`."""
    __slots__ = ("combiner", "source", "axis", "condition", "value_index")
    _fields = ("source", "condition")

    def __init__(self, combiner, source, axis, condition=None, value_index=0):
        self.combiner = combiner
        self.source = tuple(source)
        self.axis = tuple(axis)
        self.condition = condition if condition is not None else const(True, "bool")
        self.value_index = value_index
        self.dtype = self.source[value_index].dtype


# --- construction helpers -----------------------------------------------------------------

def const(value, dtype=None) -> PrimExpr:
    """A constant; dtype defaults to int32 for ints, float32 for floats, bool for bools."""
    if dtype is None:
        dtype = ("bool" if isinstance(value, bool) else
                 "int32" if isinstance(value, int) else "float32")
    if is_float_dtype(dtype):
        return FloatImm(dtype, value)
    return IntImm(dtype, value)


def convert(value, dtype=None) -> PrimExpr:
    """Turn a Python number into a constant; PrimExprs pass through unchanged."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, (bool, int, float)):
        return const(value, dtype)
    if hasattr(value, "item") and getattr(value, "shape", None) == ():   # numpy scalars
        return const(value.item(), dtype or str(value.dtype))
    raise CompileError(f"cannot convert {value!r} ({type(value).__name__}) to a tir expression")


def _match(a, b, what):
    """Convert Python numbers and reconcile dtypes of a binary operation."""
    if not isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
        raise CompileError(f"operator {what}: neither operand is a tir expression")
    if not isinstance(a, PrimExpr):
        a = _const_like(a, b, what)
    if not isinstance(b, PrimExpr):
        b = _const_like(b, a, what)
    if a.dtype == b.dtype:
        return a, b
    fa, fb = is_float_dtype(a.dtype), is_float_dtype(b.dtype)
    if fa and not fb:
        return a, Cast(a.dtype, b)
    if fb and not fa:
        return Cast(b.dtype, a), b
    if _bits(a.dtype) >= _bits(b.dtype):
        return a, Cast(a.dtype, b)
    return Cast(b.dtype, a), b


def _const_like(value, other, what):
    if isinstance(value, float) and not is_float_dtype(other.dtype):
        return FloatImm("float32", value)
    return convert(value, other.dtype)


def _div(a, b):
    a, b = _match(a, b, "/")
    if is_int_dtype(a.dtype):
        raise CompileError(f"`{a} / {b}`: true division of integers; use // (floor division) "
                           "for index math or cast to a float dtype")
    return Div(a, b)


def _expect_bool(e, where):
    if not isinstance(e, PrimExpr) or e.dtype != "bool":
        raise CompileError(f"{where}: expects a bool condition, got {e!r} "
                           f"({getattr(e, 'dtype', type(e).__name__)})")


def min_value(dtype: str) -> PrimExpr:
    """The smallest value of a dtype (-inf for floats): the identity of max."""
    if is_float_dtype(dtype):
        return FloatImm(dtype, float("-inf"))
    if dtype == "bool":
        return IntImm(dtype, False)
    return IntImm(dtype, int(np.iinfo(dtype).min))


def max_value(dtype: str) -> PrimExpr:
    """The largest value of a dtype (+inf for floats): the identity of min."""
    if is_float_dtype(dtype):
        return FloatImm(dtype, float("inf"))
    if dtype == "bool":
        return IntImm(dtype, True)
    return IntImm(dtype, int(np.iinfo(dtype).max))


def floordiv(a, b):
    return FloorDiv(*_match(a, b, "floordiv"))


def floormod(a, b):
    return FloorMod(*_match(a, b, "floormod"))


def truncdiv(a, b):
    return Div(*_match(a, b, "truncdiv"))


def truncmod(a, b):
    return Mod(*_match(a, b, "truncmod"))


def min(a, b):  # noqa: A001 - tir.min mirrors tvm.tir.min
    return Min(*_match(a, b, "min"))


def max(a, b):  # noqa: A001
    return Max(*_match(a, b, "max"))


def all(*conds):  # noqa: A001
    """The conjunction of bool expressions (True when empty)."""
    out = const(True, "bool") if not conds else convert(conds[0], "bool")
    for c in conds[1:]:
        out = And(out, convert(c, "bool"))
    return out


def if_then_else(cond, t, f):
    t, f = _match(t, f, "if_then_else")
    return Select(convert(cond, "bool"), t, f)


def call_intrin(dtype, name, *args):
    return Call(dtype, name, [convert(a, dtype) for a in args])
