"""float32 exp / log / tanh / sigmoid / erf for the C backend as branch-free RB_INLINE C,
the same polynomial approximations (same coefficients, same operation order) as the LLVM
backend's llvm_math.py, so loops using them vectorize and the two backends agree.

A scalar libm call per element blocks vectorization (glibc's tanhf is ~25 ns an element);
compiling with -DRB_LIBM_MATH makes these helpers call <math.h> instead, and the CUDA backend
defines RB_CUDA_FAST_MATH (exp through the __expf hardware approximation).
"""
from .c_expr import float_literal
from .llvm_math import (ERF_BIG, ERF_BIG_CENTER, ERF_BIG_END, ERF_SMALL, EXP_TAYLOR, LN2_HI,
                        LN2_LO, LOG2E, LOG_ATANH, TANH_SMALL)


def _f(v) -> str:
    return float_literal(v, "float32")


def _horner(coeffs, t: str) -> str:
    acc = _f(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = f"({acc} * {t} + {_f(c)})"
    return acc


def math_helpers() -> str:
    """The C text defining rb_expf, rb_logf, rb_tanhf, rb_sigmoidf and rb_erff."""
    return f"""
/* ---- vectorizable float32 transcendentals (see codegen/c_math.py); -DRB_LIBM_MATH: libm */
typedef union {{ float f; uint32_t u; int32_t i; }} rb_f32_bits;
#ifdef RB_LIBM_MATH
RB_INLINE float rb_expf(float x) {{ return expf(x); }}
RB_INLINE float rb_logf(float x) {{ return logf(x); }}
RB_INLINE float rb_tanhf(float x) {{ return tanhf(x); }}
RB_INLINE float rb_erff(float x) {{ return erff(x); }}
#elif defined(RB_CUDA_FAST_MATH)   /* CUDA: the hardware exp (a few ulp), accurate libdevice rest */
RB_INLINE float rb_expf(float x) {{ return __expf(x); }}
RB_INLINE float rb_logf(float x) {{ return logf(x); }}
RB_INLINE float rb_tanhf(float x) {{ return tanhf(x); }}
RB_INLINE float rb_erff(float x) {{ return erff(x); }}
#else
RB_INLINE float rb_expf(float x) {{
  rb_f32_bits s1, s2;
  int isnan_x = x != x;
  float xc = x > {_f(88.8)} ? {_f(88.8)} : x;
  float n, r, p;
  int32_t ni, n1;
  xc = xc < {_f(-104.0)} ? {_f(-104.0)} : xc;
  xc = isnan_x ? 0.0f : xc;
  n = nearbyintf(xc * {_f(LOG2E)});
  r = xc - n * {_f(LN2_HI)};
  r = r - n * {_f(LN2_LO)};
  p = {_horner(EXP_TAYLOR, "r")};
  ni = (int32_t)n;
  n1 = ni >> 1;
  s1.u = (uint32_t)(n1 + 127) << 23;
  s2.u = (uint32_t)(ni - n1 + 127) << 23;
  return isnan_x ? x : (p * s1.f) * s2.f;
}}
RB_INLINE float rb_logf(float x) {{
  rb_f32_bits b, mb;
  int sub = x < {_f(1.17549435e-38)};
  int32_t e;
  float m, f, s, z, tail, logm, ef, res;
  b.f = sub ? x * 8388608.0f : x;
  e = (int32_t)((b.u >> 23) & 0xFFu) - (sub ? 150 : 127);
  mb.u = (b.u & 0x7FFFFFu) | 0x3F800000u;
  m = mb.f;
  e += m > {_f(1.41421356)};
  m = m > {_f(1.41421356)} ? m * 0.5f : m;
  f = m - 1.0f;
  s = f / (f + 2.0f);
  z = s * s;
  tail = s * (z * {_horner(LOG_ATANH, "z")});
  logm = (s + s) + tail;
  ef = (float)e;
  res = ef * {_f(LN2_HI)} + (logm + ef * {_f(LN2_LO)});
  res = x == INFINITY ? INFINITY : res;
  res = x < 0.0f ? NAN : res;
  res = x == 0.0f ? -INFINITY : res;
  return x != x ? x : res;
}}
RB_INLINE float rb_tanhf(float x) {{
  float a = fabsf(x), z = x * x;
  float small = x + (x * z) * {_horner(TANH_SMALL, "z")};
  float e = rb_expf(a + a);
  float big = copysignf(1.0f - 2.0f / (e + 1.0f), x);
  return a < {_f(0.625)} ? small : big;
}}
RB_INLINE float rb_erff(float x) {{
  float a = fabsf(x);
  float small = x * {_horner(ERF_SMALL, "(x * x)")};
  float ac = a > {_f(ERF_BIG_END)} ? {_f(ERF_BIG_END)} : a;
  float t = ac - {_f(ERF_BIG_CENTER)};
  float q = {_horner(ERF_BIG, "t")};
  float e = rb_expf(-(ac * ac));
  float big = a >= {_f(ERF_BIG_END)} ? 1.0f : 1.0f - e * q;
  float res = a < {_f(0.9)} ? small : copysignf(big, x);
  return x != x ? x : res;
}}
#endif
RB_INLINE float rb_sigmoidf(float x) {{     /* exp(-|x|) never overflows */
  float e = rb_expf(-fabsf(x));
  float d = 1.0f + e;
  return x >= 0.0f ? 1.0f / d : e / d;
}}
"""
