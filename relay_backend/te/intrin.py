"""Scalar helpers for te computes: constants, symbolic vars, math intrinsics, if_then_else.

Each math function builds a tir Call of the intrinsic of the same name (`abs` of an integer
is a Select, `power` is "pow"); backends choose the implementation.
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
