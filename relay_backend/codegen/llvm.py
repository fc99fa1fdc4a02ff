"""PrimFunc -> LLVM IR -> a runtime Module (JIT-compiled for the host CPU).

For every PrimFunc `f` (name = attrs["global_symbol"] or f.name) the module holds

    void rb_f(void** args, int64_t* shape_vars)       exported entry (runtime/module.py)
    internal void rb_f_compute(ptr noalias align 64 %A, ..., <shape vars>)

The native symbol is prefixed so a kernel named `exp` cannot shadow libm's `exp`;
`FunctionInfo.symbol` records it.

The entry unpacks the argument array and calls the compute function, whose buffer
parameters are `noalias` and 64-byte aligned (NDArrays are), so LLVM vectorizes without
runtime alias checks; after -O3 inlining the entry is one function. Shape variables arrive
in `FunctionInfo.shape_vars` order as int64 and are narrowed to their tir dtype.
"""
import re

from llvmlite import ir

from .. import diagnostics, progress, tir
from ..errors import CompileError
from ..runtime.module import FunctionInfo, Module, ParamInfo
from ..runtime.signature import SYMBOL_PREFIX
from ..target import as_target
from ..tir.dim_json import dim_to_json, unique_var_names
from ..tir.merge_split_axes import merge_split_axes
from ..tir.unroll import unroll_loops
from . import llvm_ahead, llvm_target, llvm_thread_pool
from .llvm_cache import KernelRecord, compile_kernels
from .llvm_expr import I64, PTR, llvm_type
from .llvm_math import MathLib
from .llvm_parallel_shim import shim_ir, shim_object
from .llvm_stmt import ALIGN, FunctionEmitter
from .llvm_workspace import Workspace, free_when_collected

_CODE_LOG = diagnostics.get_logger("codegen")

# native symbol = SYMBOL_PREFIX + function name (load_module accepts only such symbols)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LOOP_ID = re.compile(r'^(!\d+) = !\{ !"rb\.loop\.\d+"', re.MULTILINE)


def read_only_params(params, body) -> frozenset:
    """id(buffer.data) of the parameters no BufferStore in `body` writes (tir writes memory
    only by BufferStore); empty when `body` holds a statement kind this walk does not know."""
    stored, stack = set(), [body]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is tir.BufferStore:
            stored.add(id(node.buffer.data))
        elif kind is tir.SeqStmt:
            stack.extend(node.seq)
        elif kind in (tir.For, tir.Allocate, tir.LetStmt):
            stack.append(node.body)
        elif kind is tir.IfThenElse:
            stack.extend(case for case in (node.then_case, node.else_case) if case is not None)
        else:
            return frozenset()
    return frozenset(id(p.data) for p in params) - stored


class ModuleCodegen:
    """One llvmlite module being filled with PrimFuncs; owns shared helpers and metadata."""

    def __init__(self, name: str = "rb_kernels", has_openmp: bool = True):
        self.module = ir.Module(name)
        self.math = MathLib(self.module)
        self.workspace = Workspace(self.module, self.math.declare)     # heap temporaries kept between calls
        self.has_openmp = has_openmp
        self._names = set()
        self._loops = 0

    def declare(self, name, ret, args, var_arg: bool = False) -> ir.Function:
        return self.math.declare(name, ret, args, var_arg)

    def fresh_name(self, base: str) -> str:
        name, k = base, 0
        while name in self._names or name in self.module.globals:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    def loop_metadata(self, props):
        """A loop-ID node carrying `props` [(name, value)]; made self-referential in `text()`."""
        mds = []
        for key, value in props:
            ops = [ir.MetaDataString(self.module, key)]
            if isinstance(value, bool):
                ops.append(ir.Constant(ir.IntType(1), int(value)))
            elif value is not None:             # a count, e.g. llvm.loop.vectorize.width
                ops.append(ir.Constant(ir.IntType(32), int(value)))
            mds.append(self.module.add_metadata(ops))
        self._loops += 1
        tag = ir.MetaDataString(self.module, f"rb.loop.{self._loops}")
        return self.module.add_metadata([tag] + mds)

    def text(self) -> str:
        """The module as LLVM IR text, with loop IDs turned into distinct self-references."""
        self.workspace.finish_module()
        return _LOOP_ID.sub(lambda m: f"{m.group(1)} = distinct !{{ {m.group(1)}", str(self.module))

    # ------------------------------------------------------------------ functions
    def add(self, func: "tir.PrimFunc") -> FunctionInfo:
        """Emit `func` (entry + compute function); returns its boundary signature."""
        info = kernel_signature(func, self._names)
        shape_vars = func.shape_vars
        symbol = info.symbol            # prefixed, so "exp" cannot shadow libm's exp

        params = func.params
        compute_ty = ir.FunctionType(ir.VoidType(), [PTR] * len(params) +
                                     [llvm_type(v.dtype) for v in shape_vars])
        compute = ir.Function(self.module, compute_ty, name=self.fresh_name(symbol + "_compute"))
        compute.linkage = "internal"
        compute.attributes.add("nounwind")
        seen = set()
        for arg, buf in zip(compute.args, params):
            if id(buf.data) in seen:
                raise CompileError(f"build {symbol}: parameter {buf.name} shares its data with "
                                   f"another parameter")
            seen.add(id(buf.data))
            for attr in ("noalias",):
                arg.add_attribute(attr)
            arg.attributes.align = ALIGN
        emitter = FunctionEmitter(
            self, compute,
            {id(v): a for v, a in zip(shape_vars, compute.args[len(params):])},
            {id(buf.data): a for buf, a in zip(params, compute.args)})
        body = unroll_loops(merge_split_axes(func.body))
        emitter.read_only = read_only_params(params, body)
        self.workspace.start_kernel(info.name)
        emitter.stmt(body)
        emitter.finish()
        self.workspace.finish_kernel(symbol)

        entry = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR, PTR]), name=symbol)
        entry.attributes.add("nounwind")
        b = ir.IRBuilder(entry.append_basic_block("entry"))
        args, shapes = entry.args
        vals = [b.load(b.gep(args, [ir.Constant(I64, i)], source_etype=PTR), typ=PTR)
                for i in range(len(params))]
        for j, v in enumerate(shape_vars):
            raw = b.load(b.gep(shapes, [ir.Constant(I64, j)], source_etype=I64), typ=I64)
            ty = llvm_type(v.dtype)
            vals.append(raw if ty == I64 else b.trunc(raw, ty))
        b.call(compute, vals)
        b.ret_void()
        return info


def kernel_signature(func, taken: set) -> FunctionInfo:
    """The boundary signature of `func`, after checking its name is a C identifier not in
    `taken` (which then holds it)."""
    if not isinstance(func, tir.PrimFunc):
        raise CompileError(f"build: expected a tir.PrimFunc, got {type(func).__name__}")
    symbol = str(func.attrs.get("global_symbol", func.name))
    if not _IDENT.match(symbol):
        raise CompileError(f"build: function name {symbol!r} is not a C identifier; rename "
                           f"the PrimFunc (letters, digits, underscores)")
    if symbol in taken:
        raise CompileError(f"build: two functions are named {symbol!r}")
    taken.add(symbol)
    return signature(func, symbol, func.shape_vars)


def record_signature(record: KernelRecord, taken: set) -> FunctionInfo:
    """The boundary signature a KernelRecord carries, after kernel_signature's name checks."""
    name = record.name
    if not _IDENT.match(name) or name in taken:
        raise CompileError(f"build: function name {name!r} is not a C identifier or is taken twice")
    taken.add(name)
    return record.info


def shape_var_names(shape_vars) -> dict:
    """{id(var): unique name} for a function's shape variables, in order (tir/dim_json.py)."""
    return unique_var_names(shape_vars)


def encode_dim(e, names: dict, symbol: str):
    """A tir size expression as a signature dim (runtime/signature.py): an int, a shape-variable
    name or (op, lhs, rhs) with op in + - * // % min max; a CompileError naming `symbol` else."""
    try:
        return _as_tuples(dim_to_json(e, names))
    except ValueError as err:
        raise CompileError(f"build {symbol}: buffer {err}") from None


def signature(func, symbol: str, shape_vars) -> FunctionInfo:
    """The boundary signature of `func`: buffer shapes with dims as ints / var names / exprs."""
    names = shape_var_names(shape_vars)
    params = tuple(ParamInfo(buf.name, tuple(encode_dim(d, names, symbol) for d in buf.shape),
                             buf.dtype)
                   for buf in func.params)
    return FunctionInfo(symbol, params,
                        tuple(names[id(v)] for v in shape_vars), SYMBOL_PREFIX + symbol,
                        int(func.attrs.get("num_outputs", 0)))


def _as_tuples(dim):
    """A JSON dim with its [op, a, b] lists as tuples (ParamInfo is frozen and hashable)."""
    return (dim[0], _as_tuples(dim[1]), _as_tuples(dim[2])) if isinstance(dim, list) else dim


def codegen_llvm(funcs, has_openmp=None):
    """Lower PrimFuncs into one LLVM IR text; returns (ir_text, [FunctionInfo])."""
    if has_openmp is None:
        has_openmp = bool(llvm_target.libgomp_path())
    mcg = ModuleCodegen(has_openmp=has_openmp)
    infos = [mcg.add(f) for f in funcs]
    return mcg.text(), infos


def compile_kernel_objects(funcs, target=None) -> tuple:
    """Compile PrimFuncs (or KernelRecords: kernels known by signature and content digest,
    llvm_cache.py) for an llvm Target into position-independent objects, one per kernel:
    each looked up in the on-disk cache, else compiled (in parallel when there are several:
    llvm_cache / llvm_pool) and stored. Shared by build_llvm (which JIT-loads the objects) and
    the AOT executor (which links them into the model's library), so both run the same code.

    Returns
    -------
    result : tuple
        ([FunctionInfo], [llvm_cache.CompiledKernel], MachineSpec, has_openmp), the kernels in
        `funcs` order; has_openmp says whether parallel loops call GNU OpenMP (libgomp).
    """
    funcs = list(funcs)
    target = as_target(target if target is not None else "llvm")
    spec = llvm_target.machine_spec(target)
    has_openmp = bool(llvm_target.libgomp_path())
    taken = set()
    infos = [record_signature(f, taken) if isinstance(f, KernelRecord) else kernel_signature(f, taken)
             for f in funcs]
    kernels = compile_kernels(funcs, spec, str(target), has_openmp,
                              lambda func: codegen_llvm([func], has_openmp)[0], llvm_ahead)
    return infos, kernels, spec, has_openmp


def compiling_ahead(target):
    """llvm_ahead.compiling_ahead with this module's code generator: within it, kernels handed
    to llvm_ahead.submit while a model is lowered compile in the pool meanwhile, and
    compile_kernel_objects takes them (relay.build opens it around its executor's codegen)."""
    return llvm_ahead.compiling_ahead(target, lambda func, has_openmp: codegen_llvm([func], has_openmp)[0])


def build_llvm(funcs, target=None) -> Module:
    """Compile PrimFuncs for an llvm Target (the host CPU by default) into a runtime Module.

    Every kernel is its own LLVM module, compiled (or found in the disk cache) by
    compile_kernel_objects to a position-independent object. Code for this machine is then
    loaded into one MCJIT engine and callable; code for another
    machine (-mtriple of another instruction set, a -mcpu or -mattr the host lacks) stays
    object code for that machine: the Module exports it (export_library with cc= a cross
    compiler, or a ".o" path) and refuses to run it here.
    """
    infos, kernels, spec, has_openmp = compile_kernel_objects(funcs, target)
    module = kernel_module(infos, kernels, spec, has_openmp)
    module.build_stats = {"kernels": len(kernels),
                          "compiled": sum(not k.from_cache for k in kernels),
                          "from_cache": sum(k.from_cache for k in kernels)}
    return module


def link_libraries(has_openmp: bool) -> tuple:
    """The libraries linked kernels call into: libm, and GNU OpenMP (the parallel-loop shim's
    fallback and team size, llvm_parallel_shim.py) when their parallel loops use it."""
    return ("m", "gomp") if has_openmp else ("m",)


def linkable_objects(kernels, spec, has_openmp: bool) -> list:
    """The object files a library of these kernels (llvm_cache.CompiledKernel) links: one per
    kernel, plus the parallel-loop shim (llvm_parallel_shim.py) when they have parallel loops."""
    objects = [k.object_code for k in kernels]
    return objects + [shim_object(spec)] if has_openmp else objects


def single_object(kernels, spec, has_openmp: bool = False) -> bytes:
    """One relocatable object holding every kernel (llvm_cache.CompiledKernel) and, with
    `has_openmp`, the parallel-loop shim: the kernel's own object when it is alone, else their
    optimised IR linked in LLVM and emitted again."""
    texts = [k.ir for k in kernels] + ([shim_ir(spec.triple)] if has_openmp else [])
    if len(texts) == 1:
        return kernels[0].object_code
    return llvm_target.emit_linked_object(texts, spec)


def kernel_module(infos, kernels, spec, has_openmp: bool) -> Module:
    """The runtime Module of compiled kernels (llvm_cache.CompiledKernel, in `infos` order)."""
    optimized = [k.ir for k in kernels]
    what = ", ".join(i.name for i in infos)
    if diagnostics.wants(4):
        _CODE_LOG.debug("LLVM IR for %s (%s, %s):\n%s", what, spec.triple, spec.cpu, "\n".join(optimized))
    for info, ir_text in zip(infos, optimized):
        diagnostics.dump("llvm", info.name, ir_text, "ll")
    libs = link_libraries(has_openmp)

    def object_code():
        return single_object(kernels, spec, has_openmp)

    def exporter(path, cc=None, fcompile=None):
        if not spec.runs_here and cc is None and fcompile is None:
            raise CompileError(
                f"export_library({path!r}): these kernels are for -mtriple={spec.triple} "
                f"-mcpu={spec.cpu}, and this machine cannot run them ({spec.foreign}), so its C "
                f"compiler cannot link them: pass cc= a compiler for that machine (e.g. "
                f"cc='aarch64-linux-gnu-gcc') or fcompile=, or export to a path ending in '.o' "
                f"to get the object file")
        llvm_target.link_shared(linkable_objects(kernels, spec, has_openmp), path, libs, cc=cc,
                                fcompile=fcompile)
    sources = {"ll": "\n".join(optimized),
               "asm": lambda: "\n".join(llvm_target.emit_assembly(text, spec) for text in optimized)}
    if not spec.runs_here:
        return Module(infos, {}, sources=sources, exporter=exporter, type_key="llvm",
                      object_code=object_code, unrunnable=spec.foreign)
    if has_openmp:
        llvm_thread_pool.ensure_loaded()        # parallel loops resolve rb_parallel_for to it
    progress.begin("linked", total=1)
    engine = llvm_target.load_objects([k.object_code for k in kernels], spec)
    progress.advance("linked")
    addresses = {i.name: engine.get_function_address(i.symbol) for i in infos}
    module = Module(infos, addresses, handle=engine, sources=sources, exporter=exporter,
                    type_key="llvm", object_code=object_code)
    free_when_collected(module, engine, [i.symbol for i in infos])     # the kernels' kept temporaries
    return module
