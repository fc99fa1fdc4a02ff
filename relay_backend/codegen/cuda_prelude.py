"""The fixed text every generated CUDA translation unit starts with.

It compiles under nvcc, under NVRTC (no system headers there: the fixed-width integer types
and the float constants are defined here) and, for the tests, as C++ on the CPU with an
emulation header defining __global__, __device__, threadIdx, __syncthreads. The helpers are
the C backend's (c_prelude.HELPERS: float16 bits, NaN-propagating min/max, floor division,
sigmoid) declared `__device__`, with exp on the hardware approximation (__expf: a few ulp,
inside the float32 tolerances) and the other transcendentals from CUDA's accurate math library.
"""
from .c_prelude import HELPERS

CUDA_PRELUDE = r"""/* ---- relay_backend CUDA prelude */
#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef INT64_C
#define INT64_C(c) c##LL
#define UINT64_C(c) c##ULL
#endif
#ifndef INT64_MIN
#define INT64_MIN (-INT64_C(9223372036854775807) - 1)
#endif
#ifndef INT32_MIN
#define INT32_MIN (-2147483647 - 1)
#endif
#define RB_INLINE static __device__ __forceinline__
#define RB_NO_FLOAT16
#define RB_CUDA_FAST_MATH
""" + HELPERS

