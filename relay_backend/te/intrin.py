"""Scalar helpers for te computes: constants, symbolic vars, math intrinsics, if_then_else.

Each math function builds a tir Call of the intrinsic of the same name (`abs` of an integer
is a Select, `power` is "pow"); backends choose the implementation. The bit operations
(bitwise_and/or/xor/not, shift_left/right, reinterpret) take bool or integer expressions, as
TVM's tir functions of those names.
"""
from ..errors import CompileError
from ..tir import expr as E


def const(value, dtype=None):
    """A constant of `dtype` (int32 / float32 / bool by the Python type when omitted)."""
    return E.const(value, dtype)


def var(name="tindex", dtype="int32"):
    """A symbolic scalar, e.g. a dynamic dimension: n = te.var("n")."""
    return E.Var(name, dtype)


def size_var(name="size", dtype="int32"):
    """A symbolic dimension known to be >= 0."""
    return E.SizeVar(name, dtype)


def thread_axis(dom=None, tag=""):
    """A GPU thread IterVar, e.g. te.thread_axis("blockIdx.x"), for Stage.bind."""
    if isinstance(dom, str):
        dom, tag = None, dom
    if not tag:
        raise CompileError("te.thread_axis: give a thread tag such as 'threadIdx.x'")
    rng = E.Range(dom[0], dom[1] - dom[0]) if isinstance(dom, tuple) else dom
    return E.IterVar(rng, E.Var(tag, "int32"), "thread", tag)


def if_then_else(cond, t, f):
    """`t if cond else f`, evaluating only the chosen side's loads."""
    return E.if_then_else(cond, t, f)


def _float_arg(name, x):
    x = E.convert(x)
    if not E.is_float_dtype(x.dtype):
        raise CompileError(f"te.{name}: expects a float expression, got `{x}` ({x.dtype}); "
                           f"cast it first with .astype('float32')")
    return x


def _unary(name):
    def f(x):
        x = _float_arg(name, x)
        return E.Call(x.dtype, name, [x])
    f.__name__ = name
    f.__doc__ = f"The elementwise intrinsic {name}(x) on a float expression."
    return f


exp = _unary("exp")
exp2 = _unary("exp2")
log = _unary("log")
log2 = _unary("log2")
log10 = _unary("log10")
log1p = _unary("log1p")
tanh = _unary("tanh")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
erf = _unary("erf")
sigmoid = _unary("sigmoid")
floor = _unary("floor")
ceil = _unary("ceil")
round = _unary("round")  # noqa: A001
trunc = _unary("trunc")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
asin = _unary("asin")
acos = _unary("acos")
atan = _unary("atan")
sinh = _unary("sinh")
cosh = _unary("cosh")


def isnan(x):
    x = _float_arg("isnan", x)
    return E.Call("bool", "isnan", [x])


def isinf(x):
    x = _float_arg("isinf", x)
    return E.Call("bool", "isinf", [x])


def abs(x):  # noqa: A001
    """|x|: fabs for floats, a Select for integers."""
    x = E.convert(x)
    if E.is_float_dtype(x.dtype):
        return E.Call(x.dtype, "fabs", [x])
    return E.Select(x < 0, -x, x)


def power(x, y):
    """x ** y for float expressions."""
    x, y = E._match(x, y, "power")
    _float_arg("power", x)
    return E.Call(x.dtype, "pow", [x, y])


def fmod(x, y):
    x, y = E._match(x, y, "fmod")
    return E.Call(x.dtype, "fmod", [x, y])


def atan2(y, x):
    y, x = E._match(y, x, "atan2")
    return E.Call(y.dtype, "atan2", [y, x])


def _bit_operands(name, *args):
    if len(args) == 2:
        args = E._match(args[0], args[1], name)
    else:
        args = (E.convert(args[0]),)
    dtype = args[0].dtype
    if not (E.is_int_dtype(dtype) or dtype == "bool"):
        raise CompileError(f"te.{name}: expects integer or bool expressions, got `{args[0]}` ({dtype})")
    return args


def bitwise_and(x, y):
    """x & y on integer or bool expressions."""
    x, y = _bit_operands("bitwise_and", x, y)
    return E.Call(x.dtype, "bitwise_and", [x, y])


def bitwise_or(x, y):
    """x | y on integer or bool expressions."""
    x, y = _bit_operands("bitwise_or", x, y)
    return E.Call(x.dtype, "bitwise_or", [x, y])


def bitwise_xor(x, y):
    """x ^ y on integer or bool expressions."""
    x, y = _bit_operands("bitwise_xor", x, y)
    return E.Call(x.dtype, "bitwise_xor", [x, y])


def bitwise_not(x):
    """~x on an integer or bool expression (logical not on bool)."""
    x, = _bit_operands("bitwise_not", x)
    return E.Call(x.dtype, "bitwise_not", [x])


def _shift(name, x, y):
    x, y = _bit_operands(name, x, y)
    if x.dtype == "bool":
        raise CompileError(f"te.{name}: expects integer expressions, got bool")
    return E.Call(x.dtype, name, [x, y])


def shift_left(x, y):
    """x << y (wrapping) for 0 <= y < bits of x's dtype; other amounts are undefined."""
    return _shift("shift_left", x, y)


def shift_right(x, y):
    """x >> y (arithmetic for signed dtypes) for 0 <= y < bits; other amounts are undefined."""
    return _shift("shift_right", x, y)


def reinterpret(dtype, x):
    """The bits of `x` read as `dtype`, which must have the same width (tir.reinterpret)."""
    x = E.convert(x)
    if x.dtype == "bool" or dtype == "bool" or E._bits(x.dtype) != E._bits(dtype):
        raise CompileError(f"te.reinterpret: {x.dtype} -> {dtype} needs two non-bool dtypes of the "
                           f"same width")
    return E.Call(dtype, "reinterpret", [x])
