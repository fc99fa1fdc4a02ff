"""The fixed C text every generated translation unit starts with: includes, portability
macros and small static inline helpers (float16 conversions, floor division, NaN-propagating
min/max, a stable sigmoid, OpenMP thread queries that degrade to one thread), then the
vectorizable float32 transcendentals of c_math.py.

`HELPERS` (FMA contraction, float16, min/max, floor division, the math helpers) is plain C
whose functions are declared `RB_INLINE`, so the CUDA backend (cuda_prelude.py) shares it with
`__device__` functions; `PRELUDE` defines RB_INLINE as `static inline` for C.

Everything here is C99 plus guarded GNU extensions, so the file compiles with any C99
compiler, with or without OpenMP. No heap use anywhere: AOT programs must not allocate.
"""
from .c_math import math_helpers

HELPERS = r"""
/* ---- a*b+c in one rounding where the CPU has FMA (-march=native) or on a GPU, as the LLVM
   backend contracts its kernels' multiply-adds (and nvcc its device code); written out only
   where the printer fuses (c_expr.py, shared by the CUDA emitter), so the polynomial math of
   the transcendentals keeps one rounding per operation, as in LLVM */
#if defined(__FMA__) || defined(__CUDA_ARCH__)
#define RB_FMAF(a, b, c) fmaf((a), (b), (c))
#define RB_FMA(a, b, c) fma((a), (b), (c))
#else
#define RB_FMAF(a, b, c) ((a) * (b) + (c))
#define RB_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* ---- float16: stored as IEEE binary16 bits (uint16_t), computed in float; every float16
   operation result is rounded back to half precision (round to nearest even, like numpy). */
#if defined(__FLT16_MAX__) && !defined(RB_NO_FLOAT16)
typedef union { uint16_t u; _Float16 h; } rb_half_pun;
RB_INLINE float rb_h2f(uint16_t bits) { rb_half_pun p; p.u = bits; return (float)p.h; }
RB_INLINE uint16_t rb_f2h(float x) { rb_half_pun p; p.h = (_Float16)x; return p.u; }
RB_INLINE uint16_t rb_d2h(double x) { rb_half_pun p; p.h = (_Float16)x; return p.u; }
#else
RB_INLINE float rb_h2f(uint16_t h) {
  union { uint32_t u; float f; } v;
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1Fu) {
    v.u = sign | 0x7F800000u | (m << 13);
  } else if (e != 0) {
    v.u = sign | ((e + 112u) << 23) | (m << 13);
  } else {
    float s = (float)m * 5.9604644775390625e-8f;   /* m * 2^-24, exact */
    return sign ? -s : s;
  }
  return v.f;
}
RB_INLINE uint16_t rb_f2h(float x) {
  union { float f; uint32_t u; } v;
  uint32_t sign, a, h, rem, e, m, shift, half;
  v.f = x;
  sign = (v.u >> 16) & 0x8000u;
  a = v.u & 0x7FFFFFFFu;
  if (a >= 0x7F800000u)                       /* inf, nan (kept quiet) */
    return (uint16_t)(sign | 0x7C00u | (a > 0x7F800000u ? 0x200u | ((a >> 13) & 0x3FFu) : 0u));
  if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);     /* >= 65520 rounds to inf */
  if (a >= 0x38800000u) {                     /* normal half */
    h = (a >> 13) - 0x1C000u;
    rem = a & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
  }
  if (a < 0x33000000u) return (uint16_t)sign; /* below 2^-25: rounds to zero */
  e = a >> 23;                                /* subnormal half: units of 2^-24 */
  m = (a & 0x7FFFFFu) | 0x800000u;
  shift = 126u - e;
  h = m >> shift;
  rem = m & ((1u << shift) - 1u);
  half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (h & 1u))) h++;
  return (uint16_t)(sign | h);
}
RB_INLINE uint16_t rb_d2h(double x) { return rb_f2h((float)x); }
#endif
RB_INLINE float rb_hround(float x) { return rb_h2f(rb_f2h(x)); }
RB_INLINE float rb_hround_d(double x) { return rb_h2f(rb_d2h(x)); }

/* ---- min / max: NaN in either operand gives NaN (numpy's minimum / maximum) */
RB_INLINE float rb_minf(float a, float b) { return (a < b || a != a) ? a : b; }
RB_INLINE float rb_maxf(float a, float b) { return (a > b || a != a) ? a : b; }
RB_INLINE double rb_min_d(double a, double b) { return (a < b || a != a) ? a : b; }
RB_INLINE double rb_max_d(double a, double b) { return (a > b || a != a) ? a : b; }
RB_INLINE int32_t rb_min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
RB_INLINE int32_t rb_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
RB_INLINE int64_t rb_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
RB_INLINE int64_t rb_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }
RB_INLINE uint32_t rb_min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
RB_INLINE uint32_t rb_max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }
RB_INLINE uint64_t rb_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
RB_INLINE uint64_t rb_max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* ---- floor division / modulo (round toward -inf; the remainder has the divisor's sign) */
/* Branch-free, so loops indexing with them still vectorize: the correction is 1 exactly when
   the remainder is nonzero and its sign differs from the divisor's. */
RB_INLINE int32_t rb_floordiv_i32(int32_t a, int32_t b) {
  int32_t q = a / b, r = a % b;
  return q - ((r != 0) & ((r ^ b) < 0));
}
RB_INLINE int32_t rb_floormod_i32(int32_t a, int32_t b) {
  int32_t r = a % b;
  return r + b * ((r != 0) & ((r ^ b) < 0));
}
RB_INLINE int64_t rb_floordiv_i64(int64_t a, int64_t b) {
  int64_t q = a / b, r = a % b;
  return q - ((r != 0) & ((r ^ b) < 0));
}
RB_INLINE int64_t rb_floormod_i64(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r + b * ((r != 0) & ((r ^ b) < 0));
}
RB_INLINE float rb_floordivf(float a, float b) { return floorf(a / b); }
RB_INLINE float rb_floormodf(float a, float b) { return a - floorf(a / b) * b; }
RB_INLINE double rb_floordiv_d(double a, double b) { return floor(a / b); }
RB_INLINE double rb_floormod_d(double a, double b) { return a - floor(a / b) * b; }

/* ---- reinterpret: a float's bits as the integer of its width and back (type punning through
   a union, defined in C99) */
RB_INLINE uint32_t rb_bits_of_f32(float x) { union { float f; uint32_t u; } v; v.f = x; return v.u; }
RB_INLINE float rb_f32_of_bits(uint32_t x) { union { float f; uint32_t u; } v; v.u = x; return v.f; }
RB_INLINE uint64_t rb_bits_of_f64(double x) { union { double f; uint64_t u; } v; v.f = x; return v.u; }
RB_INLINE double rb_f64_of_bits(uint64_t x) { union { double f; uint64_t u; } v; v.u = x; return v.f; }

/* ---- math helpers not in <math.h> */
RB_INLINE double rb_sigmoid_d(double x) {
  double e = exp(-fabs(x));
  return x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}
""" + math_helpers()

PRELUDE = r"""
#include <stdint.h>
#include <stddef.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* return codes of the entry points */
#define RB_OK 0
#define RB_ERR_WORKSPACE (-1)        /* workspace missing or smaller than *_workspace_size() */
#define RB_ERR_WORKSPACE_ALIGN (-2)  /* workspace not 64-byte aligned */

#if defined(__GNUC__) || defined(__clang__)
#define RB_ALIGNED64 __attribute__((aligned(64)))
#define RB_ASSUME_ALIGNED(p) __builtin_assume_aligned((p), 64)
#else
#define RB_ALIGNED64
#define RB_ASSUME_ALIGNED(p) (p)
#endif

/* loop annotations: parallel loops use OpenMP when compiled with -fopenmp, else run serially */
#ifdef _OPENMP
#define RB_PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#else
#define RB_PARALLEL_FOR
#endif
/* vectorized loops: buffers are restrict-qualified, so -O3 vectorizes them; clang is also
   asked explicitly. Independence is asserted (RB_SIMD) only where the loop is proven free of
   cross-iteration dependences. */
#if defined(__clang__)
#define RB_VECTORIZE _Pragma("clang loop vectorize(enable)")
#else
#define RB_VECTORIZE
#endif
/* vectorized loops whose iterations are independent (tir/loop_deps.py proves it: each writes
   its own elements): `omp simd` makes GCC vectorize them before unrolling the loops around
   them, so a register tile's accumulators stay in vector registers */
#ifdef _OPENMP
#define RB_SIMD _Pragma("omp simd")
#else
#define RB_SIMD RB_VECTORIZE
#endif

static inline int32_t rb_thread_id(void) {
#ifdef _OPENMP
  return (int32_t)omp_get_thread_num();
#else
  return 0;
#endif
}

static inline int32_t rb_num_threads(void) {
#ifdef _OPENMP
  return (int32_t)omp_get_num_threads();
#else
  return 1;
#endif
}

static inline int64_t rb_max_threads(void) {
#ifdef _OPENMP
  return (int64_t)omp_get_max_threads();
#else
  return 1;
#endif
}

static inline int64_t rb_align64(int64_t nbytes) { return (nbytes + 63) & ~(int64_t)63; }

#define RB_INLINE static inline
""" + HELPERS
