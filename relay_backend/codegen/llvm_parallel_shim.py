"""`rb_parallel_for` for kernels linked into a shared library (export_library, AOT).

JIT-loaded kernels resolve `rb_parallel_for` to the process's thread pool
(llvm_thread_pool.py). A linked library carries this small definition instead:

    ptr rb_parallel_launcher = null          // exported: the loader may point it at a pool
    void rb_parallel_for(body, ctx, extent):  // hidden: each library uses its own copy
        if rb_parallel_launcher: rb_parallel_launcher(body, ctx, extent)
        else: GOMP_parallel(split, {body, ctx, extent})   // thread t of n runs
                                                          // [t*extent/n, (t+1)*extent/n)

relay_backend's loader (runtime.shared_library.SharedLibrary) sets the launcher to the
process's pool when it opens such a library, so in-process AOT and `load_module` share the
graph executor's pool; the library then never holds threads of its own and may be dlclose'd
safely. Loaded by anything else (a C program, plain dlopen) it runs on GNU OpenMP, as linked
(`-lgomp`). Both symbols are weak, so several kernel objects may be linked into one library.
"""
import functools

from llvmlite import ir

from . import llvm_cache
from .llvm_thread_pool import LAUNCH_TYPE, POOL_SYMBOL, as_callable

LAUNCHER_SYMBOL = "rb_parallel_launcher"
I32, I64 = ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()
_ARGS = ir.LiteralStructType([PTR, PTR, I64])          # body, ctx, extent


def shim_ir(triple: str) -> str:
    """The shim's LLVM IR for `triple` (see the module docstring)."""
    module = ir.Module(name="rb_parallel_shim")
    module.triple = triple
    launcher = ir.GlobalVariable(module, PTR, name=LAUNCHER_SYMBOL)
    launcher.linkage = "weak"
    launcher.initializer = ir.Constant(PTR, None)
    launcher.align = 8

    def extern(name, ret, args):
        return ir.Function(module, ir.FunctionType(ret, args), name=name)

    # void rb_omp_split(ptr args): OpenMP thread t of n runs its contiguous share
    split = ir.Function(module, ir.FunctionType(VOID, [PTR]), name="rb_parallel_omp_split")
    split.linkage = "internal"
    b = ir.IRBuilder(split.append_basic_block("entry"))
    fields = [b.load(b.gep(split.args[0], [ir.Constant(I32, 0), ir.Constant(I32, k)],
                           source_etype=_ARGS), typ=t) for k, t in enumerate(_ARGS.elements)]
    body, ctx, ext = fields
    tid = b.call(extern("omp_get_thread_num", I32, []), [])
    nthr = b.call(extern("omp_get_num_threads", I32, []), [])
    begin = b.sdiv(b.mul(ext, b.sext(tid, I64)), b.sext(nthr, I64))
    end = b.sdiv(b.mul(ext, b.sext(b.add(tid, ir.Constant(I32, 1)), I64)), b.sext(nthr, I64))
    with b.if_then(b.icmp_signed("<", begin, end)):
        b.call(as_callable(b, body), [ctx, tid, nthr, begin, end])
    b.ret_void()

    entry = ir.Function(module, LAUNCH_TYPE, name=POOL_SYMBOL)
    entry.linkage = "weak"
    entry.visibility = "hidden"
    body, ctx, ext = entry.args
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    target = b.load(launcher, typ=PTR)
    with b.if_else(b.icmp_unsigned("!=", target, ir.Constant(PTR, None))) as (pooled, openmp):
        with pooled:
            b.call(as_callable(b, target, LAUNCH_TYPE), [body, ctx, ext])
        with openmp:
            packed = b.alloca(_ARGS)
            for k, value in enumerate((body, ctx, ext)):
                b.store(value, b.gep(packed, [ir.Constant(I32, 0), ir.Constant(I32, k)]))
            b.call(extern("GOMP_parallel", VOID, [PTR, PTR, I32, I32]),
                   [split, packed, ir.Constant(I32, 0), ir.Constant(I32, 0)])
    b.ret_void()
    return str(module)


@functools.lru_cache(maxsize=None)
def shim_object(spec) -> bytes:
    """The shim compiled for a MachineSpec (once per process and spec)."""
    return llvm_cache.support_object("the parallel-loop shim", shim_ir(spec.triple), spec)


__all__ = ["shim_ir", "shim_object", "LAUNCHER_SYMBOL"]
