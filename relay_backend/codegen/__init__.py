"""codegen: tir PrimFuncs -> native code (level 2; imports tir/ and level 0 only).

`build(prim_funcs, target="llvm")` compiles one PrimFunc, a list, or a dict name -> PrimFunc
for the host CPU and returns a runtime Module (like tvm.build). The LLVM backend lives in
llvm.py (IR, one module per kernel), llvm_expr.py / llvm_stmt.py (lowering), llvm_math.py
(intrinsics), llvm_target.py (target machine, pipeline, object files, loading, linking),
llvm_cache.py (kernels through the on-disk cache) and llvm_pool.py (compiling them in parallel). target="c" emits
portable C99 (c.py, c_stmt.py, c_expr.py, c_prelude.py) compiled by the system C compiler;
target="cuda" emits CUDA C for GPU-scheduled PrimFuncs (cuda.py, cuda_lower.py, cuda_emit.py,
cuda_prelude.py) compiled to PTX with nvcc (cuda_compile.py).
"""
from .. import tir
from ..errors import CompileError
from ..runtime.module import Module
from ..target import as_target
from .llvm import build_llvm, codegen_llvm
from .llvm_cache import KernelRecord
from .c import build_c, codegen_c
from .cuda import build_cuda, codegen_cuda


def _as_list(prim_funcs) -> list:
    if isinstance(prim_funcs, tir.PrimFunc):
        return [prim_funcs]
    if isinstance(prim_funcs, dict):
        out = []
        for name, func in prim_funcs.items():
            if isinstance(func, KernelRecord) and func.name == name:
                out.append(func)
                continue
            if not isinstance(func, tir.PrimFunc):
                raise CompileError(f"build: value for {name!r} is a {type(func).__name__}, "
                                   f"expected a tir.PrimFunc")
            if func.attrs.get("global_symbol", func.name) != name:
                func = tir.PrimFunc(func.params, func.body, name,
                                    {**func.attrs, "global_symbol": name})
            out.append(func)
        return out
    if isinstance(prim_funcs, (list, tuple)):
        return list(prim_funcs)
    raise CompileError(f"build: expected a PrimFunc, a list of them or a dict name -> PrimFunc, "
                       f"got {type(prim_funcs).__name__}")


def build(prim_funcs, target="llvm", name=None) -> Module:
    """Compile PrimFuncs for `target` (a target.Target or its string) into a runtime Module:
    "llvm" (the host CPU; -mtriple / -mcpu / -mattr cross-compile, see build_llvm) or "c" (C99
    built by the system C compiler, -march passed on)."""
    target = as_target(target)
    funcs = _as_list(prim_funcs)
    if not funcs:
        raise CompileError("build: no PrimFuncs to compile")
    if target.kind.name != "llvm":     # only LLVM finds object code by a record's content digest
        funcs = [f.prim_func() if isinstance(f, KernelRecord) else f for f in funcs]
    if target.kind.name == "c":
        march = target.attrs.get("march")
        return build_c(funcs, options=[f"-march={march}"] if march else None)
    if target.kind.name == "cuda":
        return build_cuda(funcs, target)
    if target.kind.name != "llvm":
        raise CompileError(f"build: target {str(target)!r} is not supported by codegen.build; "
                           f"use 'llvm' (the host CPU) or 'c' (C99 via the system compiler)")
    return build_llvm(funcs, target)


__all__ = ["KernelRecord", "build", "build_c", "build_cuda", "build_llvm", "codegen_c", "codegen_cuda", "codegen_llvm"]
