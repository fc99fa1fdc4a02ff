"""Relay expressions: Var, GlobalVar, Constant, Op, Call, Function, Tuple, TupleGetItem, Let, If,
and references (RefCreate, RefRead, RefWrite). ADTs live in ir/adt.py.

Expressions are immutable and compared by identity; use ir.structural for structural equality.
After InferType every expression carries `checked_type`.
"""
import numpy as np

from ..errors import IRConstructionError
from ..runtime import ndarray as _nd
from ..runtime.dtypes import supported_dtype
from ..runtime.ndarray import NDArray
from .attrs import DictAttrs
from .const_value import constant_array
from .types import TensorType, Type, type_to_str

# Filled in by relay_backend.op at import: maps "add" -> function building the call. Keeps ir/ free
# of an upward import while letting `x + y` build relay calls as in tvm.relay.
_OPERATOR_HOOKS = {}


class Expr:
    """Base class of Relay expressions."""

    _checked_type_ = None
    span = None   # where the node came from (ir/span.py), set by the parser and frontends

    @property
    def checked_type(self) -> Type:
        if self._checked_type_ is None:
            raise ValueError("the type of this expression has not been inferred; run transform.InferType() first")
        return self._checked_type_

    def astext(self, show_meta_data: bool = False) -> str:
        from .printer import astext
        return astext(self, show_meta_data=show_meta_data)

    def __str__(self) -> str:
        return self.astext()

    def __repr__(self) -> str:
        text = self.astext()
        return text if len(text) < 400 else text[:400] + " ..."

    # Arithmetic sugar, as tvm.relay.Expr offers.
    def _binary(self, name, other, reverse=False):
        if not isinstance(other, Expr):
            other = const(other, dtype=_dtype_hint(self))
        lhs, rhs = (other, self) if reverse else (self, other)
        return _OPERATOR_HOOKS[name](lhs, rhs)

    def __add__(self, other):
        return self._binary("add", other)

    def __radd__(self, other):
        return self._binary("add", other, True)

    def __sub__(self, other):
        return self._binary("subtract", other)

    def __rsub__(self, other):
        return self._binary("subtract", other, True)

    def __mul__(self, other):
        return self._binary("multiply", other)

    def __rmul__(self, other):
        return self._binary("multiply", other, True)

    def __truediv__(self, other):
        return self._binary("divide", other)

    def __rtruediv__(self, other):
        return self._binary("divide", other, True)

    def __neg__(self):
        return _OPERATOR_HOOKS["negative"](self)

    def __lt__(self, other):
        return self._binary("less", other)

    def __gt__(self, other):
        return self._binary("greater", other)

    def __le__(self, other):
        return self._binary("less_equal", other)

    def __ge__(self, other):
        return self._binary("greater_equal", other)

    __hash__ = object.__hash__

    def astype(self, dtype: str):
        return _OPERATOR_HOOKS["cast"](self, dtype)


def _dtype_hint(expr: Expr) -> str:
    """The dtype a Python scalar should take when combined with `expr` (float32 if unknown)."""
    t = expr._checked_type_
    if isinstance(t, TensorType):
        return t.dtype
    if isinstance(expr, Var) and isinstance(expr.type_annotation, TensorType):
        return expr.type_annotation.dtype
    if isinstance(expr, Constant):
        return expr.data.dtype
    return None


def _describe(value) -> str:
    """How a wrong constructor argument is named in an error: its class, and its value when it
    is not a relay expression."""
    if isinstance(value, Expr):
        return f"a {type(value).__name__}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:60] + '...'}"


def _check_expr(value, what: str, note: str = ""):
    """`value` if it is a relay Expr, else an IRConstructionError naming `what` it was meant to be."""
    if isinstance(value, Expr):
        return value
    hint = ""
    if isinstance(value, TupleWrapper):
        hint = "; a multi-output op's result is a TupleWrapper: use .astuple() or index it"
    elif isinstance(value, (bool, int, float, np.ndarray, np.generic, list)):
        hint = "; wrap constants with relay.const(...)"
    raise IRConstructionError(f"{what} must be a relay expression{note}, got {_describe(value)}{hint}")


class Var(Expr):
    """A local variable. `name_hint` is for printing only; identity is the object. Calling a
    variable bound to a function builds a Call, as in tvm.relay: `f(x)` is `Call(f, [x])`."""

    def __init__(self, name_hint: str, type_annotation: Type = None, span=None):
        self.name_hint = name_hint
        self.type_annotation = type_annotation
        self.span = span

    @property
    def vid(self):
        return self

    def __call__(self, *args):
        return Call(self, args)


class GlobalVar(Expr):
    """The name of a function in an IRModule. Calling it builds a Call, as in tvm.relay:
    `gv(x, y)` is `Call(gv, [x, y])` (so Prelude code such as `p.sum(xs)` ports unchanged)."""

    def __init__(self, name_hint: str, type_annot: Type = None, span=None):
        self.name_hint = name_hint
        self.type_annot = type_annot
        self.span = span

    def __call__(self, *args):
        return Call(self, args)


class Constant(Expr):
    """A constant tensor; `data` is an NDArray."""

    def __init__(self, data, span=None):
        self.span = span
        if not isinstance(data, NDArray):
            data = np.asarray(data)
            supported_dtype(data.dtype, "Constant")
            data = _nd.array(data)
        else:
            supported_dtype(data.dtype, "Constant")
        self.data = data


# Every registered operator by name. relay_backend.op's registry owns registration and fills this
# table; ir code that meets op names in text or JSON (the parser, load_json) reads it, as
# tvm.ir.Op.get does, without importing op/.
OP_TABLE = {}


class Op(Expr):
    """A primitive operator. relay_backend.op.registry.OpDef subclasses this with its fields."""

    def __init__(self, name: str):
        self.name = name

    @staticmethod
    def get(name: str) -> "Op":
        """The registered operator called `name` (tvm.ir.Op.get), or None when there is none."""
        return OP_TABLE.get(name)


class Call(Expr):
    """`op(args...)` with optional attrs (a frozen Attrs dataclass) and explicit type args."""

    def __init__(self, op: Expr, args, attrs=None, type_args=None, span=None):
        self.span = span
        self.op = _check_expr(op, "Call: the callee")
        self.args = tuple(args)
        for i, a in enumerate(self.args):
            _check_expr(a, f"Call: argument {i}")
        self.attrs = attrs
        self.type_args = tuple(type_args or ())


class Function(Expr):
    """`fn (params) -> ret_type { body }` with optional type params and attrs."""

    def __init__(self, params, body: Expr, ret_type: Type = None, type_params=None, attrs=None,
                 span=None):
        self.span = span
        if isinstance(params, Var) or not hasattr(params, "__iter__"):
            raise IRConstructionError(f"Function: params must be a list of relay.Var, got "
                                      f"{_describe(params)}")
        self.params = tuple(params)
        for i, p in enumerate(self.params):
            if not isinstance(p, Var):
                raise IRConstructionError(
                    f"Function: parameter {i} must be a relay.Var (e.g. relay.var('x', shape=(3,))), "
                    f"got {_describe(p)}; to fix a value, bind it in the body (a let) instead")
        self.body = _check_expr(body, "Function: the body")
        self.ret_type = ret_type
        self.type_params = tuple(type_params or ())
        self.attrs = DictAttrs(attrs or {})

    def with_attr(self, key: str, value) -> "Function":
        attrs = DictAttrs(self.attrs)
        attrs[key] = value
        return Function(self.params, self.body, self.ret_type, self.type_params, attrs, self.span)

    @property
    def is_primitive(self) -> bool:
        return int(self.attrs.get("Primitive", 0)) == 1


class Tuple(Expr):
    def __init__(self, fields, span=None):
        self.span = span
        self.fields = tuple(fields)
        for f in self.fields:
            _check_expr(f, "Tuple: each field")

    def __len__(self):
        return len(self.fields)

    def __getitem__(self, i):
        return self.fields[i]


class TupleGetItem(Expr):
    def __init__(self, tuple_value: Expr, index: int, span=None):
        self.span = span
        self.tuple_value = _check_expr(tuple_value, "TupleGetItem: the tuple")
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise IRConstructionError(f"TupleGetItem: the index must be an int, got {_describe(index)}")
        self.index = int(index)


class Let(Expr):
    """`let var = value; body`."""

    def __init__(self, variable: Var, value: Expr, body: Expr, span=None):
        self.span = span
        if not isinstance(variable, Var):
            raise IRConstructionError(f"Let: the bound variable must be a relay.Var, got {_describe(variable)}")
        self.var = variable
        self.value = _check_expr(value, "Let: the value")
        self.body = _check_expr(body, "Let: the body")


class If(Expr):
    """`if (cond) { true_branch } else { false_branch }`; cond is a bool scalar tensor."""

    def __init__(self, cond: Expr, true_branch: Expr, false_branch: Expr, span=None):
        self.span = span
        self.cond = _check_expr(cond, "If: the condition", " (a bool scalar, e.g. relay.const(True) "
                                                              "or a comparison such as x < y)")
        # None is accepted for a branch still being built (ScopeBuilder's partial If, as in TVM)
        self.true_branch = None if true_branch is None else _check_expr(true_branch, "If: the then-branch")
        self.false_branch = None if false_branch is None else _check_expr(false_branch, "If: the else-branch")


class RefCreate(Expr):
    def __init__(self, value: Expr, span=None):
        self.span = span
        self.value = _check_expr(value, "RefCreate: the value")


class RefRead(Expr):
    def __init__(self, ref: Expr, span=None):
        self.span = span
        self.ref = _check_expr(ref, "RefRead: the reference")


class RefWrite(Expr):
    def __init__(self, ref: Expr, value: Expr, span=None):
        self.span = span
        self.ref = _check_expr(ref, "RefWrite: the reference")
        self.value = _check_expr(value, "RefWrite: the value")


class TupleWrapper:
    """A multi-output op's result (e.g. split): index it to get each field, as in tvm.relay."""

    def __init__(self, tuple_value: Expr, size: int):
        self.tuple_value = tuple_value
        self.size = size

    def astuple(self) -> Expr:
        return self.tuple_value

    def astext(self) -> str:
        return self.tuple_value.astext()

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError("tuple index out of range")
        return TupleGetItem(self.tuple_value, index)

    def __len__(self):
        return self.size

    def __iter__(self):
        return (self[i] for i in range(self.size))


def var(name_hint: str, type_annotation=None, shape=None, dtype: str = "float32") -> Var:
    """relay.var: a Var with a tensor type from `shape`/`dtype`, or an explicit type."""
    if type_annotation is not None and shape is not None:
        raise IRConstructionError(f"var({name_hint!r}): give either type_annotation or shape, not both")
    if isinstance(type_annotation, str):
        type_annotation = TensorType((), supported_dtype(type_annotation, f"var({name_hint!r})"))
    elif type_annotation is not None and not isinstance(type_annotation, Type):
        raise IRConstructionError(f"var({name_hint!r}): type_annotation must be a relay type or a "
                                  f"dtype string, got {_describe(type_annotation)}; for a tensor "
                                  f"give shape=(...) and dtype=...")
    if shape is not None:
        if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
            raise IRConstructionError(f"var({name_hint!r}): shape must be a sequence of dimensions, "
                                      f"e.g. shape=({shape!r},), got {_describe(shape)}")
        type_annotation = TensorType(shape, supported_dtype(dtype, f"var({name_hint!r})"))
    return Var(name_hint, type_annotation)


def const(value, dtype: str = None) -> Constant:
    """relay.const: Python int -> int32, float -> float32, bool -> bool; numpy int64/float64
    arrays become int32/float32 unless `dtype` is given (as in tvm.relay). A value the dtype
    cannot hold raises instead of wrapping or overflowing (ir/const_value.py)."""
    if isinstance(value, NDArray):
        value = value.view_numpy()
    return Constant(_nd.array(constant_array(value, dtype)))


def bind_type(expr: Expr, ty: Type) -> Expr:
    """Attach an inferred type (used by InferType)."""
    expr._checked_type_ = ty
    return expr


__all__ = ["Expr", "Var", "GlobalVar", "Constant", "Op", "Call", "Function", "Tuple", "TupleGetItem",
           "Let", "If", "RefCreate", "RefRead", "RefWrite", "TupleWrapper", "var", "const", "type_to_str"]
