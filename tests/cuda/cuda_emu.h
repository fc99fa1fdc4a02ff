/* CPU emulation of the CUDA execution model, for testing generated kernels without a GPU.
 *
 * Compile the generated .cu as C++ after this header. A launch runs the grid's blocks one after
 * the other; inside a block every thread is a fiber (ucontext) with its own stack, run until it
 * reaches __syncthreads() or returns; when every thread waits at the barrier they all resume.
 * A barrier that some threads of the block never reach (they returned) is reported as an error
 * (real hardware hangs or misbehaves). __shared__ variables are `static`: one copy, shared by
 * the threads of the block that is running. Kernels without a barrier run their threads as a
 * plain loop. */
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <ucontext.h>

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(n)
#define __shared__ static

struct rb_dim3 { unsigned x, y, z; };
static rb_dim3 threadIdx, blockIdx, blockDim, gridDim;

static inline float rb_emu_expf(float x) { return expf(x); }
#define __expf rb_emu_expf
static inline float __int_as_float(int bits) { union { int i; float f; } u; u.i = bits; return u.f; }

struct rb_fiber { ucontext_t ctx; rb_dim3 tid; int state; };   /* 0 runnable, 1 waiting, 2 done */
static ucontext_t rb_sched;
static rb_fiber* rb_current;
static void (*rb_entry)(void**);
static void** rb_args;

static void __syncthreads() {
  rb_current->state = 1;
  swapcontext(&rb_current->ctx, &rb_sched);
}

static void rb_fiber_main() {
  rb_entry(rb_args);
  rb_current->state = 2;          /* returning resumes rb_sched through uc_link */
}

enum { RB_EMU_OK = 0, RB_EMU_DIVERGENT_BARRIER = 1, RB_EMU_NO_MEMORY = 2 };
static const size_t RB_STACK = 64 * 1024;

/* Run tramp(args) on every thread of grid x block; `barriers` says the kernel may call
   __syncthreads (then threads are fibers). Returns an RB_EMU_* code. */
static int rb_emu_run(void (*tramp)(void**), void** args, const int64_t* grid,
                      const int64_t* block, int barriers) {
  gridDim.x = (unsigned)grid[0]; gridDim.y = (unsigned)grid[1]; gridDim.z = (unsigned)grid[2];
  blockDim.x = (unsigned)block[0]; blockDim.y = (unsigned)block[1]; blockDim.z = (unsigned)block[2];
  size_t n = (size_t)block[0] * block[1] * block[2];
  rb_fiber* fibers = barriers ? (rb_fiber*)calloc(n, sizeof(rb_fiber)) : 0;
  char* stacks = barriers ? (char*)malloc(n * RB_STACK) : 0;
  if (barriers && (!fibers || !stacks)) { free(fibers); free(stacks); return RB_EMU_NO_MEMORY; }
  int status = RB_EMU_OK;
  rb_entry = tramp; rb_args = args;
  for (unsigned bz = 0; bz < gridDim.z && status == RB_EMU_OK; ++bz)
  for (unsigned by = 0; by < gridDim.y && status == RB_EMU_OK; ++by)
  for (unsigned bx = 0; bx < gridDim.x && status == RB_EMU_OK; ++bx) {
    blockIdx.x = bx; blockIdx.y = by; blockIdx.z = bz;
    size_t k = 0;
    for (unsigned tz = 0; tz < blockDim.z; ++tz)
    for (unsigned ty = 0; ty < blockDim.y; ++ty)
    for (unsigned tx = 0; tx < blockDim.x; ++tx, ++k) {
      rb_dim3 tid = {tx, ty, tz};
      if (!barriers) { threadIdx = tid; tramp(args); continue; }
      rb_fiber* f = &fibers[k];
      f->tid = tid; f->state = 0;
      getcontext(&f->ctx);
      f->ctx.uc_stack.ss_sp = stacks + k * RB_STACK;
      f->ctx.uc_stack.ss_size = RB_STACK;
      f->ctx.uc_link = &rb_sched;
      makecontext(&f->ctx, rb_fiber_main, 0);
    }
    if (!barriers) continue;
    for (;;) {
      for (size_t i = 0; i < n; ++i) {
        if (fibers[i].state != 0) continue;
        rb_current = &fibers[i];
        threadIdx = fibers[i].tid;
        swapcontext(&rb_sched, &fibers[i].ctx);
      }
      size_t waiting = 0, done = 0;
      for (size_t i = 0; i < n; ++i) { waiting += fibers[i].state == 1; done += fibers[i].state == 2; }
      if (done == n) break;
      if (done > 0) { status = RB_EMU_DIVERGENT_BARRIER; break; }
      for (size_t i = 0; i < n; ++i) fibers[i].state = 0;     /* everyone reached the barrier */
    }
  }
  free(fibers); free(stacks);
  return status;
}
