"""Level 6: the AOT executor — the whole model as one C program with statically planned memory.

    factory = relay_backend.build(mod, target="c", params=params, executor="aot")
    factory.workspace_size                                   # bytes of the static arena
    amod = relay_backend.aot.AotModule(factory["default"](relay_backend.cpu(0)))
    amod.set_input("data", x); amod.run(); y = amod.get_output(0).numpy()
    factory.export_library("out/")          # model.c model.h model_params.bin Makefile main.c

Target "llvm" links the graph executor's LLVM-compiled kernels (the same code and bits) into
the library, target "c" writes portable C kernels into model.c (kernels.py).
program.py flattens the fused main and plans memory; codegen.py emits model.c / model.h with
`tvmgen_default_run(struct tvmgen_default_inputs*, struct tvmgen_default_outputs*)`, and
params.py packs the constants into model_params.bin, which model.c includes with `.incbin`
(exported projects, standalone_library()); build.py compiles and loads them, the in-process
library reading the constants from the packed buffer instead of compiling them in; runtime.py is the AotModule; factory.py the build result; export.py
the standalone sources; executor.py is create_executor("aot").
"""
from .program import AotCodegenError, AotProgram, lower_program
from .codegen import emit_source
from .params import ParamsBlob, check_params, pack_params
from .build import AotLibrary, compile_model
from .runtime import AotModule
from .factory import AotExecutorFactoryModule, aot_build
from .executor import AotExecutor
from .kernels import LlvmKernels, c_target_like, kernel_kind

__all__ = ["AotModule", "AotExecutorFactoryModule", "AotExecutor", "AotCodegenError", "AotProgram",
           "aot_build", "lower_program", "emit_source", "compile_model", "AotLibrary", "ParamsBlob",
           "pack_params", "check_params", "LlvmKernels", "kernel_kind", "c_target_like"]
