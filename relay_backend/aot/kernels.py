"""Which kernels an AOT program links: the graph executor's LLVM objects, or portable C.

As in TVM, the Target picks the kernels' code generator and Executor("aot") the run loop:

* target "llvm": every kernel is compiled exactly as the graph executor compiles it
  (codegen.llvm.compile_kernel_objects: the same IR, the same on-disk cache entries, compiled in
  parallel) into a position-independent object. model.c declares each entry point
  `void rb_<f>(void* const* args, const int64_t* shape_vars)` extern and calls it; the C
  compiler links the objects into the model's library together with the parallel-loop shim
  (codegen/llvm_parallel_shim.py: the process's thread pool when relay_backend loads the
  library, GNU OpenMP otherwise). AOT then runs the graph executor's
  machine code (its schedules, vector width and FMA contraction; the same bits), and its run
  loop stays one native call. Their temporaries too large for the stack are heap-allocated
  per call (aligned_alloc), as under the graph executor, rather than placed in the static
  workspace.
* target "c": codegen/c.py's C99 kernels are written into model.c itself, so the exported
  project builds anywhere a C compiler does, with no object code for one CPU; kernel scratch
  lives in the static workspace and nothing allocates. `c_target_like("llvm")` is the "c"
  target that keeps the llvm target's schedules (x86 on this host: "c -keys=x86,cpu").
"""
from dataclasses import dataclass

from ..codegen.llvm import compile_kernel_objects, link_libraries, linkable_objects, single_object
from ..target import as_target


@dataclass
class LlvmKernels:
    """An AOT program's kernels as LLVM-compiled objects.

    Parameters
    ----------
    infos : list of FunctionInfo
        The kernels' signatures (info.symbol is the entry point model.c calls), in the order
        of `compiled`.
    compiled : list of llvm_cache.CompiledKernel
        Each kernel's object code and optimised IR.
    spec : MachineSpec
        What they were compiled for (the host CPU and its features).
    has_openmp : bool
        Whether their parallel loops call GNU OpenMP, which the library must then link.
    """

    infos: list
    compiled: list
    spec: object
    has_openmp: bool

    @property
    def objects(self) -> list:
        """The object code of every kernel (bytes), in order, then the parallel-loop shim when
        their parallel loops need it (codegen/llvm_parallel_shim.py)."""
        return linkable_objects(self.compiled, self.spec, self.has_openmp)

    @property
    def libraries(self) -> tuple:
        """The libraries the objects call into ("m", and "gomp" with OpenMP)."""
        return link_libraries(self.has_openmp)

    def single_object(self) -> bytes:
        """Every kernel in one relocatable object (an exported project's kernels.o)."""
        return single_object(self.compiled, self.spec, self.has_openmp)

    def declarations(self) -> str:
        """The C declarations of the kernels' entry points, for model.c."""
        lines = ["/* ---------------------------------------------------------- kernels",
                 " * Compiled by LLVM for this CPU (the graph executor's code), linked in as",
                 " * object files (kernels.o in an exported project). args: the buffers' data",
                 " * pointers, inputs then outputs; shape_vars: unused (static shapes). */"]
        lines += [f"extern void {info.symbol}(void* const* args, const int64_t* shape_vars);"
                  for info in self.infos]
        return "\n".join(lines) + "\n"


def kernel_kind(target) -> str:
    """Which kernels an AOT build for `target` links.

    Parameters
    ----------
    target : str or Target
        The build's target.

    Returns
    -------
    kind : str
        "llvm" for an llvm target (the kernels are LLVM objects), else "c".
    """
    return "llvm" if as_target(target).kind.name == "llvm" else "c"


def c_target_like(target="llvm"):
    """A "c" target that selects the schedules `target` selects (its strategy keys, e.g.
    x86 and cpu on this host), so the C kernels differ from the LLVM ones only in who compiles
    them. Plain "c" has the generic "cpu" key only, whose schedules are slower.

    Parameters
    ----------
    target : str or Target, optional
        The target whose schedules to keep. Defaults to "llvm" (this host).

    Returns
    -------
    c_target : Target
        "c -keys=<its keys>", e.g. "c -keys=x86,cpu".
    """
    keys = ",".join(as_target(target).keys)
    return as_target(f"c -keys={keys}")


def compile_llvm_kernels(prim_funcs: dict, target) -> LlvmKernels:
    """The program's kernels ({name: PrimFunc}) compiled by LLVM for `target`, through the
    on-disk kernel cache the graph executor uses."""
    infos, compiled, spec, has_openmp = compile_kernel_objects(list(prim_funcs.values()), target)
    return LlvmKernels(infos, compiled, spec, has_openmp)


__all__ = ["LlvmKernels", "kernel_kind", "c_target_like", "compile_llvm_kernels"]
