"""One device kernel (codegen/cuda_lower.Kernel) -> the text of a CUDA __global__ function.

The C backend's statement emitter (c_stmt.FunctionEmitter) and expression printer are reused;
what differs on the GPU is here:

* parameters: every buffer of the function (inputs, outputs, then device workspace) as
  `T* __restrict__` (const when this kernel never stores to it), then the shape variables;
  every kernel of a function takes the same list, in that order;
* a loop bound to a thread index is not a loop: `const int32_t i = threadIdx.x;`, guarded by
  `if (i < extent)` only when the extent is smaller than the launch dimension;
* serial loops stay loops (`#pragma unroll` for unrolled ones); a parallel loop is an error;
* Allocate: "shared" -> `__shared__ T buf[n];`, "local" -> a per-thread array; sizes are
  constant; a "global" allocation inside a kernel is an error (the launcher owns those);
* a store to shared or global memory that does not depend on some thread dimension of the
  block (not inside a loop bound to it, no index using it) is made by thread 0 of that
  dimension only, so the other threads do not race writing the same element;
* SyncThreads -> `__syncthreads();`.
"""
from .. import tir
from ..errors import CompileError
from ..tir.functor import stored_buffers, walk
from ..tir.prim_func import PrimFunc
from .c_expr import storage_type, value_type
from .c_stmt import FunctionEmitter
from .cuda_lower import THREAD_TAGS, SyncThreads

_CPP_RESERVED = set("""alignas alignof and and_eq asm bitand bitor bool catch char16_t char32_t
class compl const_cast constexpr decltype delete dynamic_cast explicit export false friend
mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
reinterpret_cast static_assert static_cast template this thread_local throw true try typeid
typename using virtual wchar_t xor xor_eq threadIdx blockIdx blockDim gridDim warpSize dim3
uint3 __syncthreads __global__ __device__ __shared__ __restrict__ __expf""".split())


class KernelEmitter(FunctionEmitter):
    """Emits one __global__ function (see the module docstring)."""

    def __init__(self, kernel, func, workspace, info):
        params = list(func.params) + list(workspace)
        super().__init__(PrimFunc(params, kernel.body, kernel.name), info)
        self.kernel = kernel
        self.names.used |= _CPP_RESERVED
        self.loop_dims = []            # thread dims (0..2) of the enclosing threadIdx loops
        self.var_dims = {}             # id(var) -> thread dim its value is

    # ------------------------------------------------------------------ statements
    def _open_for(self, s):
        tag = s.thread_binding
        if tag is None:
            if s.kind == "parallel":
                raise CompileError(f"cuda codegen {self.kernel.name}: loop {s.loop_var.name} is a "
                                   f"CPU parallel loop; bind it to GPU threads instead")
            if s.kind == "unrolled" and isinstance(s.extent, tir.IntImm):
                self.line("#pragma unroll")
            return super()._open_for(tir.For(s.loop_var, s.min, s.extent, "serial", s.body))
        dim = "xyz".index(tag[-1])
        launch = (self.kernel.block[dim] if tag in THREAD_TAGS else self.kernel.grid[dim])
        name = self.names.bind(s.loop_var)
        start = self.printer.expr(s.min)
        index = f"(int32_t){tag}" if _is_zero(s.min) else f"{start} + (int32_t){tag}"
        self.line("{")
        self.indent += 1
        self.line(f"const int32_t {name} = {index};")
        guarded = not _same_extent(s.extent, launch)
        if guarded:
            self.line(f"if ({name} < {self.printer.expr(s.min + s.extent)}) {{")
            self.indent += 1
        if tag in THREAD_TAGS:
            self.loop_dims.append(dim)
            self.var_dims[id(s.loop_var)] = dim

        def close():
            if tag in THREAD_TAGS:
                self.loop_dims.pop()
            if guarded:
                self._close()
            self._close()
        return close

    def _open_allocate(self, s):
        buf = s.buffer
        numel = 1
        for d in buf.shape:
            if not isinstance(d, tir.IntImm):
                raise CompileError(f"cuda codegen {self.kernel.name}: buffer {buf.name} has a "
                                   f"symbolic size inside the kernel; GPU schedules keep "
                                   f"per-block buffers constant-sized")
            numel *= int(d.value)
        if s.scope not in ("shared", "local"):
            raise CompileError(f"cuda codegen {self.kernel.name}: buffer {buf.name} is allocated "
                               f"in {s.scope!r} memory inside a kernel; compute it at the root "
                               f"(its own kernel) or in 'shared' / 'local' scope")
        name = self.names.fresh(buf.name)
        self.buffers[id(buf.data)] = name
        self.line("{")
        self.indent += 1
        qualifier = "__shared__ " if s.scope == "shared" else ""
        self.line(f"{qualifier}{storage_type(buf.dtype)} {name}[{max(numel, 1)}];")

    def _store(self, s):
        if s.buffer.scope == "local":
            return super()._store(s)
        used = set(self.loop_dims)
        for e in s.indices:
            used |= {self.var_dims[id(n)] for n in walk(e)
                     if isinstance(n, tir.Var) and id(n) in self.var_dims}
        idle = [d for d in range(3) if self.kernel.block[d] > 1 and d not in used]
        if not idle:
            return super()._store(s)
        first = " && ".join(f"threadIdx.{'xyz'[d]} == 0" for d in idle)
        self.line(f"if ({first}) {{")
        self.indent += 1
        super()._store(s)
        self._close()

    def _other(self, s, work):
        if isinstance(s, SyncThreads):
            self.line("__syncthreads();")
            return
        raise CompileError(f"cuda codegen {self.kernel.name}: unsupported statement "
                           f"{type(s).__name__} (cross-thread reductions are lowered first)")

    # ------------------------------------------------------------------ the kernel
    def emit(self) -> str:
        """The __global__ function's text."""
        func = self.func
        stored = stored_buffers(func.body)
        params = []
        for buf in func.params:
            if id(buf.data) in self.buffers:
                raise CompileError(f"cuda codegen {self.kernel.name}: parameter {buf.name} "
                                   f"shares its data with another parameter")
            name = self.buffers[id(buf.data)] = self.names.fresh(buf.name)
            const = "" if id(buf.data) in stored else "const "
            params.append(f"{const}{storage_type(buf.dtype)}* __restrict__ {name}")
        for v, name in zip(self.shape_vars, self.shape_names):
            params.append(f"{value_type(v.dtype)} {name}")
        for tag in THREAD_TAGS:
            var = self.kernel.thread_vars[tag]
            self.var_dims[id(var)] = "xyz".index(tag[-1])
            self.line(f"const int32_t {self.names.bind(var)} = (int32_t){tag};")
        self._body(func.body)
        threads = self.kernel.block[0] * self.kernel.block[1] * self.kernel.block[2]
        body = "".join(text + "\n" for text in self.lines)
        return (f'extern "C" __global__ void __launch_bounds__({threads}) '
                f"{self.kernel.name}({', '.join(params)}) {{\n{body}}}\n")


def _is_zero(e) -> bool:
    return isinstance(e, tir.IntImm) and e.value == 0


def _same_extent(extent, launch) -> bool:
    if isinstance(launch, int):
        return isinstance(extent, tir.IntImm) and extent.value == launch
    if isinstance(extent, tir.IntImm) and isinstance(launch, tir.IntImm):
        return extent.value == launch.value
    return str(extent) == str(launch)

