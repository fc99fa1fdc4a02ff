"""Math intrinsics for the LLVM backend: tir Call op names -> LLVM IR.

exp, log, tanh, sigmoid and erf on float32 are inline, branch-free polynomial
approximations (a few float32 ulps, checked in tests/codegen/test_math.py) so LLVM can
vectorize the loops that use them; a libm call per element would block vectorization.
float16 computes in float32; float64 uses LLVM intrinsics / libm. sqrt, fabs, floor, ceil,
round (nearbyint: ties to even, like numpy), trunc, sin, cos, pow and exp2 are LLVM
intrinsics; the rarer functions (tan, asin, atan2, ...) call libm.

The tanh and erf coefficients were fitted here by least squares on Chebyshev nodes,
weighted for relative error (tanh, erf on |x| < 0.9) or for absolute error in erf (the
erfcx(x) = exp(x^2) erfc(x) polynomial on [0.9, 3.92]); exp uses its Taylor series after
Cody-Waite range reduction, log the atanh series of s = (m-1)/(m+1).
"""
from llvmlite import ir

from ..errors import CompileError

F32 = ir.FloatType()
F64 = ir.DoubleType()
F16 = ir.HalfType()
I32 = ir.IntType(32)
I1 = ir.IntType(1)

LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4       # LN2_HI * n is exact for |n| < 2^15
LOG2E = 1.44269504088896341
EXP_TAYLOR = [1.0, 1.0, 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040]
LOG_ATANH = [2 / 3, 2 / 5, 2 / 7, 2 / 9]
TANH_SMALL = [-0.3333328664302826, 0.13331513106822968, -0.05374465137720108,
              0.020653100684285164, -0.005718931555747986]            # |x| < 0.625
ERF_SMALL = [1.1283791065216064, -0.3761254847049713, 0.11282328516244888,
             -0.026784511283040047, 0.005019122269004583, -0.0006123246857896447]
ERF_BIG_CENTER, ERF_BIG_END = 2.41, 3.92
ERF_BIG = [0.21770572662353516, -0.07903996855020523, 0.027211004868149757,
           -0.008964760228991508, 0.0028728179167956114, -0.0007463402580469847,
           0.00030286237597465515, -0.00013715060777030885, -6.139454490039498e-05,
           -3.397355612833053e-05]                                    # erfcx(x) in x - 2.41

POLY_FUNCS = ("exp", "log", "tanh", "sigmoid", "erf")
_LLVM_UNARY = {"sqrt": "sqrt", "fabs": "fabs", "floor": "floor", "ceil": "ceil",
               "round": "nearbyint", "trunc": "trunc", "sin": "sin", "cos": "cos",
               "exp2": "exp2"}
_LIBM_UNARY = ("tan", "asin", "acos", "atan", "sinh", "cosh", "log1p")
_LIBM_BINARY = ("atan2",)
_BIT_OPS = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "shift_right")


def nan_min_max(b: ir.IRBuilder, is_min: bool, a, c):
    """min(a, c) / max(a, c) of floats (scalars or vectors) with numpy's semantics, the C
    backend's rb_minf / rb_maxf: (a < c || a != a) ? a : c, so a NaN in either operand gives
    NaN and a tie gives c. Two compares and two selects, which x86 lowers to minps / maxps plus
    one masked move on a's NaN lanes; llvm.minimum / llvm.maximum (which also order -0 below
    +0) expand to twice as many vector instructions on AVX2 / AVX-512, on the accumulator's
    dependency chain of a max pool."""
    wins = b.fcmp_ordered("<" if is_min else ">", a, c)
    return b.select(b.fcmp_unordered("uno", a, a), a, b.select(wins, a, c))


class MathLib:
    """Emits (once per module) and calls the math helpers of one llvmlite module."""

    def __init__(self, module: ir.Module):
        self.module = module

    # -- declarations
    def declare(self, name: str, ret, args, var_arg: bool = False) -> ir.Function:
        """Get or declare an external function (an LLVM intrinsic, a libm or libc symbol;
        `var_arg` for a C variadic one such as dprintf)."""
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, args, var_arg=var_arg), name=name)
        return fn

    def intrinsic(self, b: ir.IRBuilder, base: str, *args):
        ty = args[0].type
        suffix = {F32: "f32", F64: "f64", F16: "f16"}[ty]
        return b.call(self.declare(f"llvm.{base}.{suffix}", ty, [ty] * len(args)), list(args))

    def libm(self, b: ir.IRBuilder, base: str, *args):
        ty = args[0].type
        if ty == F16:
            wide = [b.fpext(a, F32) for a in args]
            return b.fptrunc(self.libm(b, base, *wide), F16)
        name = base + ("f" if ty == F32 else "")
        return b.call(self.declare(name, ty, [ty] * len(args)), list(args))

    # -- entry point
    def call(self, b: ir.IRBuilder, op: str, args: list, dtype: str):
        """The value of intrinsic `op` applied to LLVM values `args` (result dtype `dtype`)."""
        x = args[0]
        if op in _BIT_OPS:
            return self._bit_call(b, op, args, dtype)
        if isinstance(x.type, ir.IntType):
            return self._int_call(b, op, args)
        if op in ("isnan", "isinf"):
            if op == "isnan":
                return b.fcmp_unordered("uno", x, x)
            return b.fcmp_ordered("==", self.intrinsic(b, "fabs", x), ir.Constant(x.type, float("inf")))
        if op in POLY_FUNCS:
            if x.type == F16:
                return b.fptrunc(self.call(b, op, [b.fpext(x, F32)], "float32"), F16)
            if x.type == F32:
                return b.call(self._poly_f32(op), [x])
            return self._f64(b, op, x)
        if op in _LLVM_UNARY:
            return self.intrinsic(b, _LLVM_UNARY[op], x)
        if op == "pow":
            return self.intrinsic(b, "pow", x, args[1])
        if op == "fmod":
            return b.frem(x, args[1])
        if op == "rsqrt":
            return b.fdiv(ir.Constant(x.type, 1.0), self.intrinsic(b, "sqrt", x))
        if op in ("log2", "log10"):
            if x.type == F64:
                return self.intrinsic(b, op, x)
            scale = 1.4426950408889634 if op == "log2" else 0.4342944819032518
            return b.fmul(self.call(b, "log", [x], dtype), ir.Constant(x.type, scale))
        if op in _LIBM_UNARY or op in _LIBM_BINARY:
            return self.libm(b, op, *args)
        raise CompileError(f"llvm codegen: no lowering for math intrinsic {op!r} on {dtype}")

    @staticmethod
    def _bit_call(b, op, args, dtype):
        """Bitwise ops and shifts on i1 / iN values (reinterpret is llvm_expr's bitcast)."""
        x = args[0]
        if op == "bitwise_not":
            return b.xor(x, ir.Constant(x.type, -1))
        y = args[1]
        if op == "shift_right":
            return b.lshr(x, y) if dtype.startswith("uint") else b.ashr(x, y)
        return {"bitwise_and": b.and_, "bitwise_or": b.or_, "bitwise_xor": b.xor,
                "shift_left": b.shl}[op](x, y)

    def _int_call(self, b, op, args):
        x = args[0]
        if op in ("floor", "ceil", "round", "trunc"):
            return x
        if op == "fabs":
            neg = b.icmp_signed("<", x, ir.Constant(x.type, 0))
            return b.select(neg, b.neg(x), x)
        if op in ("isnan", "isinf"):
            return ir.Constant(I1, 0)
        raise CompileError(f"llvm codegen: math intrinsic {op!r} needs a float argument, "
                           f"got {x.type}; cast the argument to float32")

    def _f64(self, b, op, x):
        one = ir.Constant(F64, 1.0)
        if op in ("exp", "log"):
            return self.intrinsic(b, op, x)
        if op == "sigmoid":
            return b.fdiv(one, b.fadd(one, self.intrinsic(b, "exp", b.fneg(x))))
        return self.libm(b, op, x)                   # tanh, erf

    # -- float32 polynomial helpers, each an internal always-inline function
    def _poly_f32(self, op: str) -> ir.Function:
        name = f"__rb_{op}_f32"
        fn = self.module.globals.get(name)
        if fn is not None:
            return fn
        fn = ir.Function(self.module, ir.FunctionType(F32, [F32]), name=name)
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        fn.attributes.add("nounwind")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(getattr(self, f"_emit_{op}")(b, fn.args[0]))
        return fn

    @staticmethod
    def _horner(b, coeffs, t):
        acc = ir.Constant(F32, coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = b.fadd(b.fmul(acc, t), ir.Constant(F32, c))
        return acc

    def _select_min(self, b, x, hi):      # x > hi ? hi : x  (NaN stays NaN)
        return b.select(b.fcmp_ordered(">", x, hi), hi, x)

    def _emit_exp(self, b, x):
        c = lambda v: ir.Constant(F32, v)  # noqa: E731
        isnan = b.fcmp_unordered("uno", x, x)
        xc = b.select(b.fcmp_ordered(">", x, c(88.8)), c(88.8), x)      # -> inf
        xc = b.select(b.fcmp_ordered("<", xc, c(-104.0)), c(-104.0), xc)  # -> 0
        xc = b.select(isnan, c(0.0), xc)
        n = self.intrinsic(b, "rint", b.fmul(xc, c(LOG2E)))
        r = b.fsub(xc, b.fmul(n, c(LN2_HI)))
        r = b.fsub(r, b.fmul(n, c(LN2_LO)))
        p = self._horner(b, EXP_TAYLOR, r)
        ni = b.fptosi(n, I32)
        n1 = b.ashr(ni, ir.Constant(I32, 1))
        n2 = b.sub(ni, n1)
        s1 = b.bitcast(b.shl(b.add(n1, ir.Constant(I32, 127)), ir.Constant(I32, 23)), F32)
        s2 = b.bitcast(b.shl(b.add(n2, ir.Constant(I32, 127)), ir.Constant(I32, 23)), F32)
        return b.select(isnan, x, b.fmul(b.fmul(p, s1), s2))

    def _emit_log(self, b, x):
        c = lambda v: ir.Constant(F32, v)  # noqa: E731
        i = lambda v: ir.Constant(I32, v)  # noqa: E731
        sub = b.fcmp_ordered("<", x, c(1.17549435e-38))
        xs = b.select(sub, b.fmul(x, c(8388608.0)), x)
        bits = b.bitcast(xs, I32)
        e = b.sub(b.and_(b.lshr(bits, i(23)), i(0xFF)), b.select(sub, i(150), i(127)))
        m = b.bitcast(b.or_(b.and_(bits, i(0x7FFFFF)), i(0x3F800000)), F32)
        big = b.fcmp_ordered(">", m, c(1.41421356))
        m = b.select(big, b.fmul(m, c(0.5)), m)
        e = b.add(e, b.zext(big, I32))
        f = b.fsub(m, c(1.0))
        s = b.fdiv(f, b.fadd(f, c(2.0)))
        z = b.fmul(s, s)
        tail = b.fmul(s, b.fmul(z, self._horner(b, LOG_ATANH, z)))
        logm = b.fadd(b.fadd(s, s), tail)
        ef = b.sitofp(e, F32)
        res = b.fadd(b.fmul(ef, c(LN2_HI)), b.fadd(logm, b.fmul(ef, c(LN2_LO))))
        res = b.select(b.fcmp_ordered("==", x, c(float("inf"))), c(float("inf")), res)
        res = b.select(b.fcmp_ordered("<", x, c(0.0)), c(float("nan")), res)
        res = b.select(b.fcmp_ordered("==", x, c(0.0)), c(float("-inf")), res)
        return b.select(b.fcmp_unordered("uno", x, x), x, res)

    def _emit_tanh(self, b, x):
        c = lambda v: ir.Constant(F32, v)  # noqa: E731
        a = self.intrinsic(b, "fabs", x)
        z = b.fmul(x, x)
        small = b.fadd(x, b.fmul(b.fmul(x, z), self._horner(b, TANH_SMALL, z)))
        e = b.call(self._poly_f32("exp"), [b.fadd(a, a)])
        big = b.fsub(c(1.0), b.fdiv(c(2.0), b.fadd(e, c(1.0))))
        big = self.intrinsic(b, "copysign", big, x)
        return b.select(b.fcmp_ordered("<", a, c(0.625)), small, big)

    def _emit_sigmoid(self, b, x):
        # e = exp(-|x|) never overflows: 1/(1+e) for x >= 0, e/(1+e) for x < 0 (keeps the
        # tiny results for very negative x instead of 1/inf = 0)
        one = ir.Constant(F32, 1.0)
        e = b.call(self._poly_f32("exp"), [b.fneg(self.intrinsic(b, "fabs", x))])
        d = b.fadd(one, e)
        return b.select(b.fcmp_ordered(">=", x, ir.Constant(F32, 0.0)), b.fdiv(one, d), b.fdiv(e, d))

    def _emit_erf(self, b, x):
        c = lambda v: ir.Constant(F32, v)  # noqa: E731
        a = self.intrinsic(b, "fabs", x)
        small = b.fmul(x, self._horner(b, ERF_SMALL, b.fmul(x, x)))
        ac = self._select_min(b, a, c(ERF_BIG_END))
        q = self._horner(b, ERF_BIG, b.fsub(ac, c(ERF_BIG_CENTER)))
        e = b.call(self._poly_f32("exp"), [b.fneg(b.fmul(ac, ac))])
        big = b.fsub(c(1.0), b.fmul(e, q))
        big = b.select(b.fcmp_ordered(">=", a, c(ERF_BIG_END)), c(1.0), big)
        big = self.intrinsic(b, "copysign", big, x)
        res = b.select(b.fcmp_ordered("<", a, c(0.9)), small, big)
        return b.select(b.fcmp_unordered("uno", x, x), x, res)
