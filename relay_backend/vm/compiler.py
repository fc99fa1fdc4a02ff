"""The VM compiler: IRModule -> Executable (tvm.relay.vm.compile / VMCompiler).

    exe = relay_backend.vm.compile(mod, target="llvm", params=params)
    vm = relay_backend.vm.VirtualMachine(exe, relay_backend.cpu())
    out = vm.run(x)

Pipeline (`optimize`): bind params into main, the shared optimisation pipeline
(transform/pipeline.py, with RemoveUnusedFunctions first), LambdaLift (closures become globals),
ManifestAlloc (manifest_alloc.py: explicit storage, tensors, shape functions and kernel
invocations, the memory dialect of dialect.py, typed as it is built). `lower` compiles every global
function to bytecode (function_compiler.py, the dialect's instructions from memory_alloc.py)
and lowers each primitive function through the TECompiler (kernel names
`vm_mod_fused_...`, TVM's unmangled VM prefix); `codegen` builds all kernels into one runtime Module. Functions
without control flow get `kill` instructions after each register's last use, so intermediate
tensors are released while the function still runs.
"""
import numpy as np

from ..analysis.kernel_summary import mac_count, relay_ops
from ..analysis.pure_concat import pure_concatenation
from ..autotvm.env import build_scope
from ..codegen.llvm import compiling_ahead
from ..docstrings import shared_parameters
from ..errors import CompileError
from ..progress import build_progress
from ..ir.dims import shape_vars
from ..ir.module import IRModule
from ..ir.types import TensorType, TupleType, is_any, tuple_leaves
from ..runtime import ndarray as _nd
from ..runtime.ndarray import NDArray
from ..target import as_target
from ..te_compiler import get as get_te_compiler, hand_over_early
from ..te_compiler.naming import NameSupply, Unmangled, candidate_name, kernel_name, renamed
from ..tir.dim_json import dim_to_json, unique_var_names
from .. import transform
from .bytecode import Opcode, make, read_registers
from .executable import Executable, VMFunction
from .function_compiler import VMFunctionCompiler
from ..transform.lambda_lift import CLOSURE_ATTR, lambda_lift
from .manifest_alloc import manifest_alloc
from .shape_func import ShapeProgram

MOD_NAME = Unmangled("vm_mod")     # TVM's VM names kernels vm_mod_fused_... (no tvmgen_)


def type_descriptor(ty, names: dict = None):
    """A JSON-able description of a parameter type, used to check inputs at run time: dims are
    ints, None for Any, or a symbolic dim in the runtime's JSON form (tir/dim_json.py) with the
    size variables named by `names` ({id(var): name}, unique within one function, see
    `param_descriptors`)."""
    if isinstance(ty, TensorType):
        return {"shape": [None if is_any(d) else dim_to_json(d, names or {}) for d in ty.shape],
                "dtype": ty.dtype}
    if isinstance(ty, TupleType):
        return {"tuple": [type_descriptor(f, names) for f in ty.fields]}
    return None


def param_descriptors(params) -> list:
    """The type descriptors of one function's parameters; a size variable shared by two of them
    gets one name, so the VM checks that their run-time sizes agree."""
    types = [getattr(p, "_checked_type_", None) or p.type_annotation for p in params]
    names = unique_var_names(v for ty in types for t in tuple_leaves(ty) if isinstance(t, TensorType)
                             for v in shape_vars(t.shape))
    return [type_descriptor(ty, names) for ty in types]


class CompileContext:
    """What all functions of one module share: globals, constants, kernels, shape functions."""

    def __init__(self, mod: IRModule, target):
        self.mod = mod
        self.target = target
        self.global_names = [gv.name_hint for gv in mod.functions]
        self.global_map = {name: i for i, name in enumerate(self.global_names)}
        self.closures = {gv.name_hint for gv, fn in mod.functions.items()
                         if int(fn.attrs.get(CLOSURE_ATTR, 0)) == 1}
        self.constants = []
        self._const_ids = {}
        self.packed_names = []         # kernel / shape function name per packed index
        self.shape_funcs = {}          # packed index -> ShapeProgram
        self.cached_funcs = {}         # kernel name -> CachedFunc
        self.kernel_sources = {}       # kernel name -> the primitive function it was lowered from
        self._packed_map = {}
        self._programs = {}
        self._shape_names = NameSupply()
        self._kernel_names = NameSupply()   # per module, as TVM's VM: vm_mod_fused_add, ..._1
        self._kernels = {}                  # id(CachedFunc) -> this module's copy

    def global_index(self, name: str) -> int:
        if name not in self.global_map:
            raise CompileError(f"call of @{name}, which is not a function of the module "
                               f"(it has {sorted(self.global_map)})")
        return self.global_map[name]

    def is_closure_global(self, name: str) -> bool:
        return name in self.closures

    def add_constant(self, data) -> int:
        key = id(data)
        if key not in self._const_ids:
            value = data if isinstance(data, NDArray) else _nd.array(np.asarray(data))
            self._const_ids[key] = len(self.constants)
            self.constants.append(value)
        return self._const_ids[key]

    def packed_index(self, name: str, program=None) -> int:
        if name not in self._packed_map:
            self._packed_map[name] = len(self.packed_names)
            self.packed_names.append(name)
            if program is not None:
                self.shape_funcs[self._packed_map[name]] = program
        return self._packed_map[name]

    def kernel_index(self, prim) -> int:
        compiler = get_te_compiler()
        lowered_before = compiler.stats["lowered"]
        try:
            cached = compiler.lower(prim, self.target, mod_name=MOD_NAME)
        except CompileError:
            raise
        except Exception as err:  # noqa: BLE001 - name the function that failed
            raise CompileError(f"lowering a primitive function for the VM failed: {type(err).__name__}: "
                               f"{err}\n{prim.astext()[:600]}") from err
        mine = self._kernels.get(id(cached))
        if mine is None:
            mine = renamed(cached, kernel_name(prim, MOD_NAME, self._kernel_names))
            self._kernels[id(cached)] = mine
            if compiler.stats["lowered"] > lowered_before:
                hand_over_early(mine)
        self.cached_funcs[mine.func_name] = mine
        self.kernel_sources[mine.func_name] = prim
        return self.packed_index(mine.func_name)

    def shape_program(self, prim) -> ShapeProgram:
        program = self._programs.get(id(prim))
        if program is None:
            name = self._shape_names.fresh(f"{MOD_NAME}_shape_func_{candidate_name(prim)[len('fused_'):]}"
                                           .replace(".", "_"))
            program = self._programs[id(prim)] = (ShapeProgram.from_function(prim, name), prim)
        return program[0]

    def shape_check(self, prim, expected) -> ShapeProgram:
        """The shape check of a primitive with a static output (`expected`: flat output shapes)."""
        key = ("check", id(prim))
        program = self._programs.get(key)
        if program is None:
            name = self._shape_names.fresh(f"{MOD_NAME}_shape_check_{candidate_name(prim)[len('fused_'):]}"
                                           .replace(".", "_"))
            program = self._programs[key] = (ShapeProgram.from_function(prim, name, expected), prim)
        return program[0]


# registers worth releasing: tensors and the values of calls (not storages, constants or ints)
_KILLABLE = (Opcode.AllocTensor, Opcode.AllocTensorReg, Opcode.Invoke, Opcode.InvokeClosure, Opcode.AllocADT)


def insert_kills(code: list, keep: int) -> list:
    """Straight-line code only: a `kill` after the last read of each register >= keep."""
    if any(ins[0] in (Opcode.If, Opcode.Goto) for ins in code) or not code:
        return code
    ret_reg = code[-1][1] if code[-1][0] == Opcode.Ret else None
    values = {ins[-1] for ins in code if ins[0] in _KILLABLE}
    last = {}
    for i, ins in enumerate(code):
        if ins[0] != Opcode.Ret:
            for r in read_registers(ins):
                last[r] = i
    kills = {}
    for reg, i in last.items():
        if reg >= keep and reg != ret_reg and reg in values:
            kills.setdefault(i, []).append(reg)
    out = []
    for i, ins in enumerate(code):
        out.append(ins)
        for reg in sorted(kills.get(i, ())):
            out.append(make(Opcode.KillRegister, reg))
    return out


# what optimize and lower share (shared_parameters completes their docstrings)
COMPILE_PARAMETERS = {
    "mod": ("IRModule", "The module to compile."),
    "target": ("str or Target", "What the kernels are compiled for."),
}


class VMCompiler:
    """tvm.relay.vm.VMCompiler: set_params, optimize, lower, codegen, get_exec."""

    def __init__(self):
        self._params = {}
        self._context = None
        self._exec = None
        self.optimized_mod = None

    def set_params(self, params) -> None:
        """Give values to parameters of main: the next optimize or lower binds them as constants.

        Parameters
        ----------
        params : dict of str to NDArray or numpy.ndarray
            {parameter name: value}; None adds nothing.
        """
        for name, value in (params or {}).items():
            self._params[name] = value if isinstance(value, NDArray) else _nd.array(np.asarray(value))

    def get_params(self) -> dict:
        """The parameter values set so far (set_params, optimize).

        Returns
        -------
        params : dict of str to NDArray
            A copy of {name: value}.
        """
        return dict(self._params)

    @shared_parameters(COMPILE_PARAMETERS)
    def optimize(self, mod: IRModule, target="llvm", params=None):
        """The module as the VM's code generator sees it (tvm's VMCompiler.optimize): optimized,
        fused, lambda-lifted and with every kernel call's memory explicit (ManifestAlloc), so its
        text shows the memory.alloc_storage / memory.alloc_tensor / vm.shape_func /
        vm.invoke_tvm_op / vm.reshape_tensor calls the bytecode is made from.

        Parameters
        ----------
        params : dict of str to NDArray or numpy.ndarray, optional
            Values bound to parameters of main (as set_params). Defaults to None.

        Returns
        -------
        result : tuple
            (the optimized IRModule, the params dict).
        """
        if not isinstance(mod, IRModule):
            raise CompileError(f"vm.compile expects an IRModule, got {type(mod).__name__}; "
                               f"wrap an expression with IRModule.from_expr(expr)")
        if params:
            self.set_params(params)
        mod = transform.bind_params_to_main(mod, self._params, "vm.compile", keep_others=True)
        # AlterOpLayout alters for the target; device annotations must name its device
        mod = transform.default_pipeline(keep_only_main="main" in mod, is_vm=True, target=as_target(target))(mod)
        return manifest_alloc(lambda_lift(mod)), self.get_params()

    @shared_parameters(COMPILE_PARAMETERS)
    def lower(self, mod: IRModule, target="llvm", target_host=None) -> None:
        """Optimize a module, then compile every global function to bytecode and lower its kernels to
        loop nests (codegen compiles them); get_exec returns the result.

        Parameters
        ----------
        target_host : str or Target, optional
            The host target, for a device target such as "cuda". Defaults to None.
        """
        target = as_target(target)
        if target_host is not None:
            target = target.with_host(target_host)
        mod, _ = self.optimize(mod, target)
        self.optimized_mod = mod
        ctx = self._context = CompileContext(mod, target)
        functions = []
        with build_scope(target):          # one build: one untuned warning, shipped records on
            for gv, fn in mod.functions.items():
                fc = VMFunctionCompiler(ctx, gv.name_hint, fn)
                params, code, nregs = fc.compile()
                code = insert_kills(code, keep=len(params))
                functions.append(VMFunction(gv.name_hint, [p.name_hint for p in params],
                                            param_descriptors(params), code, nregs))
        self._exec = Executable(functions, ctx.global_map, ctx.packed_names,
                                {i: p for i, p in ctx.shape_funcs.items()}, ctx.constants, None)
        self._exec.kernel_info = {name: {"ops": relay_ops(prim), "macs": mac_count(prim)}
                                  for name, prim in ctx.kernel_sources.items()}
        self._exec.concat_kernels = {ctx.packed_index(name): found for name, prim in ctx.kernel_sources.items()
                                     if (found := pure_concatenation(prim)) is not None}

    def codegen(self) -> None:
        """Compile every kernel the bytecode calls into one runtime Module."""
        if self._context is None:
            raise CompileError("VMCompiler.codegen: call lower(mod, target) first")
        cached = list(self._context.cached_funcs.values())
        if cached:
            self._exec.lib = get_te_compiler().build(cached, self._context.target)

    def get_exec(self) -> Executable:
        """The executable lower and codegen produced; a CompileError before they ran.

        Returns
        -------
        exe : Executable
            The executable.
        """
        if self._exec is None:
            raise CompileError("VMCompiler.get_exec: nothing compiled yet; call lower() and codegen()")
        return self._exec


def compile(mod, target="llvm", target_host=None, params=None) -> Executable:  # noqa: A001 - tvm name
    """Compile a module for the virtual machine (tvm.relay.vm.compile), which runs what the
    graph executor cannot: control flow, ADTs, closures and shapes known only at run time.

        exe = relay.vm.compile(mod, target="llvm", params=params)
        vm = relay.vm.VirtualMachine(exe, relay.cpu())
        out = vm.invoke("main", data)

    Parameters
    ----------
    mod : IRModule
        The module; its main is the entry point, and every function main reaches is
        compiled.
    target : str or Target, optional
        What the kernels are compiled for. Defaults to "llvm".
    target_host : str or Target, optional
        The host target of a device target. Defaults to None.
    params : dict of str to numpy.ndarray or NDArray, optional
        Values for parameters of main, bound as constants before optimising. Defaults to
        None.

    Returns
    -------
    exe : Executable
        The bytecode, constants and kernels; save() and Executable.load_exec round-trip it.
    """
    compiler = VMCompiler()
    if params:
        compiler.set_params(params)
    target = as_target(target) if target_host is None else as_target(target).with_host(target_host)
    with build_progress("vm.compile"), compiling_ahead(target):
        compiler.lower(mod, target)          # kernels compile in the pool meanwhile
        compiler.codegen()
    return compiler.get_exec()


__all__ = ["VMCompiler", "compile", "CompileContext", "insert_kills", "type_descriptor", "MOD_NAME"]
