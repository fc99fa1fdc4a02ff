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
from .node import Node
from .types import TensorType, Type, type_to_str

# Filled in by relay_backend.op at import: maps "add" -> function building the call. Keeps ir/ free
# of an upward import while letting `x + y` build relay calls as in tvm.relay.
_OPERATOR_HOOKS = {}


class Expr(Node):
    """Base class of Relay expressions."""

    _checked_type_ = None
    span = None   # where the node came from (ir/span.py), set by the parser and frontends

    @property
    def checked_type(self) -> Type:
        """The type InferType gave this expression (tvm's checked_type); a ValueError before it ran."""
        if self._checked_type_ is None:
            raise ValueError("the type of this expression has not been inferred; run transform.InferType() first")
        return self._checked_type_

    def astext(self, show_meta_data: bool = False) -> str:
        """This expression as Relay text (tvm's astext), e.g. for printing or for the parser.

        Parameters
        ----------
        show_meta_data : bool, optional
            If True, the values of large constants follow in a metadata section; if False (the
            default) only meta[relay.Constant][i] references to them are printed.

        Returns
        -------
        text : str
            The text, from the version header on.
        """
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
        """This expression cast to another dtype: relay.cast(self, dtype).

        Parameters
        ----------
        dtype : str
            The dtype to cast to, e.g. "float16".

        Returns
        -------
        result : Expr
            The cast call.
        """
        return _OPERATOR_HOOKS["cast"](self, dtype)

    def __call__(self, *args) -> "Call":
        """Call sugar, as tvm.relay: `f(x, y)` is Call(f, [x, y]) for a Function, a Var or any
        expression that evaluates to a function (operators build their own calls)."""
        return Call(self, args)


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
    """A local variable: a function parameter or a let-bound name.

    `name_hint` is for printing only; a variable's identity is the object. Calling a variable
    bound to a function builds a Call, as in tvm.relay: `f(x)` is `Call(f, [x])`.

    Parameters
    ----------
    name_hint : str
        The name shown when the program is printed.
    type_annotation : Type, optional
        The variable's declared type (e.g. a TensorType); None (the default) leaves it to type
        inference.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """

    def __init__(self, name_hint: str, type_annotation: Type = None, span=None):
        self.name_hint = name_hint
        self.type_annotation = type_annotation
        self.span = span

    @property
    def vid(self):
        """The variable's identity (tvm's Id): here the Var itself, as Vars compare by identity."""
        return self

    def __call__(self, *args):
        return Call(self, args)


class GlobalVar(Expr):
    """The name of a function in an IRModule.

    Calling it builds a Call, as in tvm.relay: `gv(x, y)` is `Call(gv, [x, y])` (so Prelude
    code such as `p.sum(xs)` ports unchanged).

    Parameters
    ----------
    name_hint : str
        The function's name in the module (printed as @name).
    type_annot : Type, optional
        The function's type, when known. Defaults to None.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """

    def __init__(self, name_hint: str, type_annot: Type = None, span=None):
        self.name_hint = name_hint
        self.type_annot = type_annot
        self.span = span


class Constant(Expr):
    """A constant tensor in a program.

    Parameters
    ----------
    data : NDArray or numpy.ndarray or array-like
        The value; anything else is converted with numpy.asarray. Its dtype must be one the
        backend supports.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """

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
    """A primitive operator, referred to by name. relay_backend.op.registry.OpDef subclasses this
    with the operator's fields.

    Parameters
    ----------
    name : str
        The operator's registered name, as "add" or "nn.conv2d".
    """

    def __init__(self, name: str):
        self.name = name

    @staticmethod
    def get(name: str) -> "Op":
        """A registered operator by name (tvm.ir.Op.get).

        Parameters
        ----------
        name : str
            The operator's name, e.g. "nn.conv2d".

        Returns
        -------
        op : Op or None
            The operator, or None when no operator has that name.
        """
        return OP_TABLE.get(name)


class Call(Expr):
    """A call: `op(args...)`, of an operator, a function, a variable holding one, or a constructor.

    Parameters
    ----------
    op : Expr
        What is called: an Op, a Function, a GlobalVar, a Var or a Constructor.
    args : list of Expr
        The arguments, in order.
    attrs : Attrs, optional
        The operator's attributes (a frozen Attrs dataclass); None (the default) for calls that
        take none.
    type_args : list of Type, optional
        Explicit type arguments for a polymorphic callee; None (the default) leaves them to
        type inference.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """

    def __init__(self, op: Expr, args, attrs=None, type_args=None, span=None):
        self.span = span
        self.op = _check_expr(op, "Call: the callee")
        self.args = tuple(args)
        for i, a in enumerate(self.args):
            _check_expr(a, f"Call: argument {i}")
        self.attrs = attrs
        self.type_args = tuple(type_args or ())


class Function(Expr):
    """A function: `fn (params) -> ret_type { body }`.

    Parameters
    ----------
    params : list of Var
        The parameters, in order.
    body : Expr
        The expression the function computes from its parameters.
    ret_type : Type, optional
        The declared type of the result; None (the default) leaves it to type inference.
    type_params : list of TypeVar, optional
        The type parameters of a polymorphic function. Defaults to None (none).
    attrs : dict, optional
        Function attributes, such as {"Primitive": 1} on a fused kernel. Defaults to None.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """

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
        """A copy of the function with one attribute set (tvm's Function.with_attr).

        Parameters
        ----------
        key : str
            The attribute's name, e.g. "Primitive" or "Compiler".
        value : object
            Its value.

        Returns
        -------
        func : Function
            The copy (same parameters, body and types); this function is not changed.
        """
        attrs = DictAttrs(self.attrs)
        attrs[key] = value
        return Function(self.params, self.body, self.ret_type, self.type_params, attrs, self.span)

    @property
    def is_primitive(self) -> bool:
        """True for a fused kernel: a function whose attribute Primitive is 1 (set by FuseOps)."""
        return int(self.attrs.get("Primitive", 0)) == 1


class Tuple(Expr):
    """A tuple of expressions: `(a, b, ...)`.

    Parameters
    ----------
    fields : list of Expr
        The elements, in order.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """
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
    """One field of a tuple: `tuple_value.index`.

    Parameters
    ----------
    tuple_value : Expr
        An expression of tuple type.
    index : int
        The position of the field to take, from 0.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """
    def __init__(self, tuple_value: Expr, index: int, span=None):
        self.span = span
        self.tuple_value = _check_expr(tuple_value, "TupleGetItem: the tuple")
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise IRConstructionError(f"TupleGetItem: the index must be an int, got {_describe(index)}")
        self.index = int(index)


class Let(Expr):
    """A local binding: `let variable = value; body`.

    Parameters
    ----------
    variable : Var
        The variable bound to `value` inside `body` (available as the `var` field).
    value : Expr
        The bound expression, evaluated once.
    body : Expr
        The expression evaluated with the binding in scope; its value is the Let's.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """

    def __init__(self, variable: Var, value: Expr, body: Expr, span=None):
        self.span = span
        if not isinstance(variable, Var):
            raise IRConstructionError(f"Let: the bound variable must be a relay.Var, got {_describe(variable)}")
        self.var = variable
        self.value = _check_expr(value, "Let: the value")
        self.body = _check_expr(body, "Let: the body")


class If(Expr):
    """A conditional: `if (cond) { true_branch } else { false_branch }`.

    Parameters
    ----------
    cond : Expr
        A bool scalar tensor (e.g. relay.const(True) or a comparison such as x < y).
    true_branch : Expr
        The expression evaluated when `cond` is true.
    false_branch : Expr
        The expression evaluated when `cond` is false; of the same type as `true_branch`.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """

    def __init__(self, cond: Expr, true_branch: Expr, false_branch: Expr, span=None):
        self.span = span
        self.cond = _check_expr(cond, "If: the condition", " (a bool scalar, e.g. relay.const(True) "
                                                              "or a comparison such as x < y)")
        # None is accepted for a branch still being built (ScopeBuilder's partial If, as in TVM)
        self.true_branch = None if true_branch is None else _check_expr(true_branch, "If: the then-branch")
        self.false_branch = None if false_branch is None else _check_expr(false_branch, "If: the else-branch")


class RefCreate(Expr):
    """Create a mutable reference cell holding a value: `ref(value)`.

    Parameters
    ----------
    value : Expr
        The initial content of the cell.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """
    def __init__(self, value: Expr, span=None):
        self.span = span
        self.value = _check_expr(value, "RefCreate: the value")


class RefRead(Expr):
    """Read the content of a reference cell: `ref.read`.

    Parameters
    ----------
    ref : Expr
        An expression of reference type.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """
    def __init__(self, ref: Expr, span=None):
        self.span = span
        self.ref = _check_expr(ref, "RefRead: the reference")


class RefWrite(Expr):
    """Store a value in a reference cell: `ref := value`; evaluates to the empty tuple.

    Parameters
    ----------
    ref : Expr
        An expression of reference type.
    value : Expr
        The new content, of the cell's type.
    span : Span, optional
        The region of source text the node was parsed or imported from, shown in error
        messages. Defaults to None (built in Python).
    """
    def __init__(self, ref: Expr, value: Expr, span=None):
        self.span = span
        self.ref = _check_expr(ref, "RefWrite: the reference")
        self.value = _check_expr(value, "RefWrite: the value")


class TupleWrapper:
    """The result of a multi-output op (e.g. split, batch_norm), as in tvm.relay: index it or
    unpack it to get each field as a TupleGetItem, or call astuple() for the tuple itself.

    Parameters
    ----------
    tuple_value : Expr
        The expression of tuple type.
    size : int
        The number of fields.
    """

    def __init__(self, tuple_value: Expr, size: int):
        self.tuple_value = tuple_value
        self.size = size

    def astuple(self) -> Expr:
        """The tuple-typed expression itself, to pass it on whole rather than field by field.

        Returns
        -------
        tuple_value : Expr
            The wrapped expression.
        """
        return self.tuple_value

    def astext(self) -> str:
        """The wrapped expression as Relay text (see Expr.astext).

        Returns
        -------
        text : str
            The text of the tuple-typed expression.
        """
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
    """A Var, with a tensor type built from `shape` and `dtype` or an explicit type (relay.var).

    Parameters
    ----------
    name_hint : str
        The name shown when the program is printed.
    type_annotation : Type or str, optional
        The variable's type; a dtype string stands for a scalar of that dtype. Give this or
        `shape`, not both. Defaults to None.
    shape : tuple of int, optional
        The shape of a tensor variable (dims may be symbolic or relay.Any()). Defaults to None.
    dtype : str, optional
        The dtype of a tensor variable given by `shape`. Defaults to "float32".

    Returns
    -------
    var : Var
        The new variable.
    """
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
    """A Constant from a Python or numpy value (relay.const).

    A Python int becomes int32, a float float32, a bool bool; numpy int64 / float64 arrays
    become int32 / float32 unless `dtype` is given (as in tvm.relay). A value the dtype cannot
    hold raises instead of wrapping or overflowing.

    Parameters
    ----------
    value : number or bool or numpy.ndarray or NDArray
        The constant's value.
    dtype : str, optional
        The dtype to store it as; None (the default) applies the rules above.

    Returns
    -------
    const : Constant
        The constant expression.
    """
    if isinstance(value, NDArray):
        value = value.view_numpy()
    return Constant(_nd.array(constant_array(value, dtype)))


def bind_type(expr: Expr, ty: Type) -> Expr:
    """Attach an inferred type (used by InferType)."""
    expr._checked_type_ = ty
    return expr


__all__ = ["Expr", "Var", "GlobalVar", "Constant", "Op", "Call", "Function", "Tuple", "TupleGetItem",
           "Let", "If", "RefCreate", "RefRead", "RefWrite", "TupleWrapper", "var", "const", "type_to_str"]
