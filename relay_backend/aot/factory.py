"""AotExecutorFactoryModule: what `relay_backend.build(..., executor="aot")` returns.

`aot_build(opt_mod, target, mod_name)` flattens the optimized main (program.py), compiles the
kernels with LLVM for target "llvm" (kernels.py), emits model.c, model.h and model_params.bin
(codegen.py, params.py), compiles and links them into one library (the constants stay out of it:
it reads them from the packed params buffer) and loads it (build.py). The factory reports
`workspace_size` (bytes of the static arena), creates AotModules with `["default"](device)`,
and `export_library(dir)` writes the standalone sources (export.py).
"""
from ..errors import CompileError, RelayError
from ..progress import build_progress
from ..target import as_target
from .build import AotLibrary, compile_model
from .codegen import emit_source, field_names
from .export import export_sources
from .kernels import compile_llvm_kernels, kernel_kind
from .program import lower_program
from .runtime import AotModule


class AotExecutorFactoryModule:
    """What relay.build(..., executor="aot") returns
    (tvm.relay.backend.executor_factory.AOTExecutorFactoryModule): the C program, its
    compiled library and params; factory["default"](device) makes a runnable module and
    export_library(dir) writes a standalone C project.

    Parameters
    ----------
    ir_mod : IRModule
        The optimised module the program was built from.
    target : str or Target
        What it was compiled for.
    program : AotProgram
        The lowered program (calls, tensors, memory plan).
    lib : AotLibrary
        The loaded shared library.
    c_source : str
        The text of model.c.
    h_source : str
        The text of model.h.
    libmod_name : str, optional
        The name the runnable module is made under. Defaults to "default".
    params : ParamsBlob, optional
        model_params.bin, the constants (the in-process library reads them from its buffer;
        model.c compiles them in elsewhere). Defaults to None (no constants).
    kernels : aot.kernels.LlvmKernels, optional
        The LLVM-compiled kernels linked into the library (target "llvm"); None (the default)
        when model.c holds C kernels (target "c").
    """

    def __init__(self, ir_mod, target, program, lib, c_source, h_source, libmod_name="default",
                 params=None, kernels=None):
        self.ir_mod = ir_mod
        self.target = target
        self.program = program
        self.lib = lib
        self.c_source = c_source
        self.h_source = h_source
        self.params = params                # model_params.bin (aot/params.py)
        self.libmod_name = libmod_name
        self.kernels = kernels
        self.workspace_size = program.workspace_size
        self.input_fields, self.output_fields = field_names(program)
        self.input_names = [name for name, _ in program.inputs]
        self.input_types = [(program.tensors[t].shape, program.tensors[t].dtype) for _, t in program.inputs]
        self.output_types = [(program.tensors[t].shape, program.tensors[t].dtype) for t in program.outputs]
        self.bound_param_names = frozenset()      # build(params=...) names, see ExecutorModule

    @property
    def params_blob(self) -> bytes:
        """The bytes of model_params.bin (b"" when the factory holds no params)."""
        return self.params.data if self.params is not None else b""

    def standalone_library(self) -> str:
        """The path of a shared library with the constants compiled in (model_params.bin via
        .incbin), which runs with no params buffer: what the command line packages. The
        in-process library (`lib`) reads them from `params` instead (aot/build.py).

        Returns
        -------
        path : str
            The library's path (built once; cached like every model library).
        """
        kernels = self.kernels
        return compile_model(self.c_source, self.h_source, self.params_blob,
                             objects=kernels.objects if kernels else (),
                             libraries=kernels.libraries if kernels else ())

    @property
    def kernel_kind(self) -> str:
        """"llvm" when LLVM-compiled kernel objects are linked in, "c" when model.c holds C
        kernels (or the model calls no kernel)."""
        return "llvm" if self.kernels is not None else "c"

    @property
    def kernel_objects(self) -> list:
        """The linked kernels' object code (bytes, one per kernel); [] for C kernels."""
        return self.kernels.objects if self.kernels is not None else []

    # -- TVM accessors
    def get_lib(self) -> AotLibrary:
        """The loaded model library (its <prefix>_run runs the whole model).

        Returns
        -------
        lib : AotLibrary
            The library.
        """
        return self.lib

    def get_params(self) -> dict:
        """Empty: AOT compiles every constant in (model_params.bin, see `params_blob`)."""
        return {}

    def get_source(self, fmt: str = "c") -> str:
        """The generated C source.

        Parameters
        ----------
        fmt : str, optional
            "c" (the default) for model.c, "h" for model.h.

        Returns
        -------
        text : str
            The source text.
        """
        if fmt not in ("c", "h"):
            raise RelayError(f"get_source: the AOT factory has 'c' (model.c) and 'h' (model.h), not {fmt!r}")
        return self.c_source if fmt == "c" else self.h_source

    def get_graph_json(self):
        """Refused with a RelayError: the AOT executor has no graph JSON, its schedule is compiled
        into the model's run function (read it with get_source("c")).
        """
        raise RelayError("the AOT executor has no graph JSON: its schedule is compiled into "
                         "tvmgen_default_run; use get_source('c') to read it")

    @property
    def memory_plan(self):
        """(steps, entries, plan) of the static memory plan."""
        return self.program.steps, self.program.entries, self.program.plan

    @property
    def primitive_functions(self) -> dict:
        """Kernel name -> the primitive Relay function it was compiled from."""
        return dict(self.program.primitive_functions)

    # -- creating executors
    def create(self, device) -> AotModule:
        """A runnable module on a device: what factory["default"](device) makes.

        Parameters
        ----------
        device : Device
            Where the module runs (the CPU).

        Returns
        -------
        module : AotModule
            The module.
        """
        module = AotModule(self, device)
        module.bound_param_names = self.bound_param_names
        return module

    def __getitem__(self, key):
        if key == self.libmod_name:
            return lambda device: self.create(device)
        if key in ("get_lib", "get_params", "get_source"):
            return getattr(self, key)
        raise RelayError(f"the AOT factory has no function {key!r}; use factory[{self.libmod_name!r}](device)")

    def export_library(self, directory, **kwargs) -> str:
        """Write a standalone C project into a directory: model.c, model.h, model_params.bin, a
        Makefile and a sample main.c (and kernels.o, the LLVM-compiled kernels for this CPU,
        for target "llvm"; build with target "c" for kernels as portable C), which build with
        no Python.

        Parameters
        ----------
        directory : str or os.PathLike
            The folder to write into (created when missing; a file there is an error).
        **kwargs
            Passed on to aot.export.export_sources: openmp=True/False forces whether the Makefile
            links OpenMP (by default, when the C compiler has it).

        Returns
        -------
        directory : str
            The folder written.
        """
        return export_sources(self, directory, **kwargs)

    def __repr__(self) -> str:
        return (f"<AotExecutorFactoryModule {self.libmod_name!r}: {len(self.program.calls)} kernel "
                f"calls, workspace {self.workspace_size} B>")


AOT_TARGETS = ("c", "llvm")


def check_aot_target(target) -> str:
    """The target's kind if the AOT executor can compile for it ("c" or "llvm": this CPU; the
    program is built with this machine's C compiler, so a cross target is refused too)."""
    target = as_target(target)
    kind = target.kind.name
    if kind not in AOT_TARGETS:
        raise CompileError(
            f"the AOT executor compiles one C program for the CPU and supports targets "
            f"{list(AOT_TARGETS)}, not {kind!r} ({target}): build with target=\"llvm\" or "
            f"target=\"c\", or use the graph executor or the VM for {kind}")
    why = target.host_mismatch()
    if why:
        raise CompileError(f"the AOT executor builds its C program with this machine's C compiler "
                           f"and cannot cross-compile for {target}: {why}; use the graph executor "
                           f"(relay.build(...).export_library(path, cc=<cross compiler>))")
    return kind


def aot_build(opt_mod, target="llvm", mod_name="default") -> AotExecutorFactoryModule:
    """Compile the fused, typed main of a module ahead of time into one C library.

    Parameters
    ----------
    opt_mod : IRModule
        A module through the default pipeline (fused and typed).
    target : str or Target, optional
        A CPU target of this machine: "llvm" (the default) links the graph executor's
        LLVM-compiled kernels into the library, "c" writes portable C kernels into model.c
        (aot/kernels.py).
    mod_name : str, optional
        The prefix of the generated names (tvmgen_<mod_name>_run). Defaults to "default".

    Returns
    -------
    factory : AotExecutorFactoryModule
        The built program.
    """
    check_aot_target(target)
    func = opt_mod["main"]
    with build_progress("aot build"):
        program = lower_program(func, target, mod_name)
        kernels = compile_llvm_kernels(program.prim_funcs, target) \
            if kernel_kind(target) == "llvm" and program.prim_funcs else None
        c_source, h_source, _, blob = emit_source(program, kernels=kernels)
        path = compile_model(c_source, h_source, None, embed_params=False,
                             objects=kernels.objects if kernels else (),
                             libraries=kernels.libraries if kernels else ())
        lib = AotLibrary(path, program.prefix, c_source, h_source, params=blob)
    return AotExecutorFactoryModule(opt_mod, target, program, lib, c_source, h_source, mod_name,
                                    params=blob, kernels=kernels)

