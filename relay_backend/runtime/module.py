"""Module: a set of named native functions, checked at the boundary, exportable as a .so.

Native calling convention (what codegen emits, what this file calls):

    void <symbol>(void** args, int64_t* shape_vars)

`args[i]` is the data pointer of buffer parameter i (inputs then outputs, 64-byte aligned,
C-contiguous); `shape_vars[j]` is the value of the function's j-th symbolic shape variable,
bound here from the arguments' shapes. Functions are called destination-passing style:
`mod["f"](a, b, out)`. Count, device, dtype, rank, shape (symbolic dims bound consistently
across buffers) and alignment are checked before the native call, so a wrong call raises
InputError instead of crashing.

An exported library is an ordinary ELF shared object followed by a trailer that describes
the function signatures:  <.so bytes> <sections> <json> <u64 json length> <sha256 of the rest>
<MAGIC>. Optional named byte sections (e.g. a graph executor's JSON and params) ride inside
the same checksummed file; the JSON lists their names and sizes, and a loader registered for
a section name (`register_artifact_loader`) turns the loaded library into that artifact.
`load_module` validates magic, version and checksum *before* dlopen, so a corrupt or foreign
file raises SerializationError and never runs code. No pickle.
"""
import ctypes
import hashlib
import json
import os
import struct
import tempfile
import time

import numpy as np

from .. import diagnostics
from ..docstrings import shared_parameters
from ..errors import InputError, RelayError, SerializationError
from .benchmark import TIMING_PARAMETERS, BenchmarkResult, module_time_evaluator  # noqa: F401 (re-exported)
from .elf_check import check_elf_bounds, check_elf_machine
from .ndarray import ALIGNMENT, NDArray
from .shared_library import SharedLibrary
from .signature import FunctionInfo, ParamInfo, dim_str, eval_dim  # noqa: F401 (re-exported)

_KERNEL_LOG = diagnostics.get_logger("kernels")      # RB_DEBUG=2: one line per kernel run

MAGIC = b"RBLIB\x00v1"          # 8 bytes, ends every exported library
FORMAT_VERSION = 1
_ELF_MAGIC = b"\x7fELF"
_TRAILER_FIXED = 8 + 32 + len(MAGIC)

# ---------------------------------------------------------------- functions

_NATIVE_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class Function:
    """A native function with its signature; calling it checks the arguments first."""

    device_type = 1                  # where its arguments must live (1: cpu, 2: cuda)

    def __init__(self, info: FunctionInfo, address: int, owner: "Module"):
        self.info = info
        self._owner = owner          # keeps the JIT engine / shared library alive
        self._native = _NATIVE_TYPE(address)
        self._nargs = len(info.params)

    @property
    def name(self) -> str:
        return self.info.name

    def _role(self, i: int) -> str:
        n_out = self.info.num_outputs
        if n_out and i >= self._nargs - n_out:
            return f"output {i - (self._nargs - n_out)}"
        return f"argument {i}"

    def check_args(self, args) -> list:
        """Validate `args` against the signature; returns the shape-variable values."""
        info = self.info
        if len(args) != self._nargs:
            sig = ", ".join(p.describe() for p in info.params)
            raise InputError(f"{info.name}: expected {self._nargs} arguments "
                             f"(inputs then outputs: {sig}), got {len(args)}")
        env = {}
        for i, (arg, p) in enumerate(zip(args, info.params)):
            where = f"{info.name}: {self._role(i)} ({p.name})"
            if not isinstance(arg, NDArray):
                raise InputError(f"{where}: expected an NDArray, got {type(arg).__name__}; "
                                 f"wrap it with relay_backend.nd.array(...)")
            if arg.device.device_type != self.device_type:
                raise InputError(f"{where}: is on {arg.device}, but this module runs on "
                                 f"{'cpu' if self.device_type == 1 else 'cuda'}")
            if arg.dtype != p.dtype:
                raise InputError(f"{where}: dtype {arg.dtype} does not match the expected "
                                 f"{p.describe()}")
            shape = arg.shape
            if len(shape) != len(p.shape):
                raise InputError(f"{where}: shape {shape} has rank {len(shape)}, expected "
                                 f"{p.describe()}")
            for dim, got in zip(p.shape, shape):     # bind plain variables first
                if isinstance(dim, str) and dim not in env:
                    env[dim] = got
            if self.device_type != 1:      # device arrays are dense, aligned allocations
                continue
            flags = arg.view_numpy().flags
            if not (flags.c_contiguous and flags.aligned):
                raise InputError(f"{where}: data is a {'misaligned' if not flags.aligned else 'strided'}"
                                 f" view (strides {arg.view_numpy().strides}); kernels read "
                                 f"C-contiguous, aligned memory: copy it with "
                                 f"relay_backend.nd.array(...)")
            if arg.data_ptr % ALIGNMENT:
                raise InputError(f"{where}: data is not {ALIGNMENT}-byte aligned; "
                                 f"copy it with relay_backend.nd.array(...)")
        self._check_dims(args, env)              # only now: every variable of every arg is bound
        self._check_no_alias(args)
        missing = [v for v in info.shape_vars if v not in env]
        if missing:
            raise InputError(f"{info.name}: shape variables {missing} are not determined by "
                             f"any argument's shape")
        return [env[v] for v in info.shape_vars]

    def _check_dims(self, args, env: dict) -> None:
        """Every dim of every argument against the signature, with all shape variables bound
        (an expression dim checked before its variable was bound would be skipped)."""
        for i, (arg, p) in enumerate(zip(args, self.info.params)):
            where = f"{self.info.name}: {self._role(i)} ({p.name})"
            for axis, (dim, got) in enumerate(zip(p.shape, arg.shape)):
                try:
                    want = eval_dim(dim, env)
                except InputError as err:
                    raise InputError(f"{where}: {err}") from None
                if want is not None and want != got:
                    bound = ", ".join(f"{v}={env[v]}" for v in sorted(env))
                    raise InputError(f"{where}: shape {arg.shape} does not match {p.describe()} "
                                     f"at axis {axis}: expected {want}, got {got}"
                                     f"{f' (bound {bound})' if bound else ''}")

    def _check_no_alias(self, args) -> None:
        """Kernels take every buffer `noalias`: an output must not share memory with any other
        argument (an input read while it is written, or another output). When the signature
        does not say how many outputs there are, the last argument is one (destination-passing
        style always ends with an output)."""
        n_out = self.info.num_outputs or 1
        first_out = self._nargs - n_out
        spans = []
        for arg in args:
            start = arg.data_ptr
            nbytes = int(np.prod(arg.shape, dtype=np.int64)) * np.dtype(arg.dtype).itemsize
            spans.append((start, start + nbytes))
        for o in range(max(first_out, 0), self._nargs):
            lo, hi = spans[o]
            if hi == lo:
                continue
            for j, (jlo, jhi) in enumerate(spans):
                if j == o or jhi == jlo or (j > o) or not (jlo < hi and lo < jhi):
                    continue
                other = f"{self._role(j)} ({self.info.params[j].name})"
                raise InputError(f"{self.info.name}: {self._role(o)} ({self.info.params[o].name}) "
                                 f"overlaps the memory of {other}; kernel arguments must not "
                                 f"alias (an output is written while the others are read): pass "
                                 f"a separate output array, e.g. relay_backend.nd.empty(...)")

    def __call__(self, *args):
        shape_values = self.check_args(args)
        ptrs = (ctypes.c_void_p * max(self._nargs, 1))(*[a.data_ptr for a in args])
        shapes = (ctypes.c_int64 * max(len(shape_values), 1))(*shape_values)
        if diagnostics.wants(2):                 # RB_DEBUG=2: one line per kernel run
            start = time.perf_counter()
            self._native(ptrs, shapes)
            _KERNEL_LOG.debug("kernel %s: %.3f ms", self.info.name, (time.perf_counter() - start) * 1e3)
            return
        self._native(ptrs, shapes)         # ctypes passes an array as its address

    @property
    def is_static(self) -> bool:
        """True when the signature has no symbolic shape variables (every dim is fixed)."""
        return not self.info.shape_vars

    def unchecked(self):
        """A callable f(*ndarrays) that runs the kernel with no boundary checks.

        For executors that already guarantee count, dtype, shape and alignment (the VM checks
        its inputs on entry and allocates outputs with the compiled shapes); unlike
        `prepare`, the arrays may change from call to call. Only for static functions: symbolic
        shape variables are bound by the checked call. A wrong argument count still goes
        through the checked call, so it raises InputError instead of crashing.
        """
        if not self.is_static:
            raise InputError(f"{self.info.name}: unchecked() needs a function without symbolic "
                             f"shape variables, this one has {list(self.info.shape_vars)}; call "
                             f"the function itself (it binds them from the arguments' shapes)")
        if diagnostics.wants(2) or type(self).__call__ is not Function.__call__:
            # RB_DEBUG=2 keeps its per-kernel timing line; a subclass with its own calling
            # protocol (the C backend's workspace entry) keeps its checked call
            return self.__call__
        native, nargs, checked = self._native, self._nargs, self.__call__
        ptr_array = ctypes.c_void_p * max(nargs, 1)

        def call(*args):
            if len(args) != nargs:
                return checked(*args)
            native(ptr_array(*[a.data_ptr for a in args]), None)
        call.checked = self                       # the Function, for introspection
        return call

    def native_entry(self):
        """(native, pointer_array) for runtimes that hold the buffer addresses themselves:
        `native(pointer_array(*addresses), None)` runs the kernel on buffers at those addresses
        (inputs then outputs), with no checks at all.

        Only for static functions, called by a runtime that guarantees every buffer's count,
        dtype, shape, alignment and liveness (the VM's compiled calls). None when the function
        cannot be called that way (symbolic shape variables, RB_DEBUG=2's timing, a subclass
        with its own calling protocol): call the function or `unchecked()` instead.
        """
        if not self.is_static or diagnostics.wants(2) or type(self).__call__ is not Function.__call__:
            return None
        return self._native, ctypes.c_void_p * max(self._nargs, 1)

    def prepare(self, *args):
        """Check `args` once and return a zero-argument callable running the kernel on them.

        For executors whose buffers are fixed (the graph runtime): no per-call checks or
        allocations. The arrays must stay alive and keep their storage while it is used.
        """
        shape_values = self.check_args(args)
        ptrs = (ctypes.c_void_p * max(self._nargs, 1))(*[a.data_ptr for a in args])
        shapes = (ctypes.c_int64 * max(len(shape_values), 1))(*shape_values)
        ptrs_p, shapes_p = ctypes.cast(ptrs, ctypes.c_void_p), ctypes.cast(shapes, ctypes.c_void_p)
        native, keep = self._native, (ptrs, shapes, args)

        def call(_keep=keep):
            if diagnostics.wants(2):
                start = time.perf_counter()
                native(ptrs_p, shapes_p)
                _KERNEL_LOG.debug("kernel %s: %.3f ms", self.info.name, (time.perf_counter() - start) * 1e3)
                return
            native(ptrs_p, shapes_p)
        # what a caller running several prepared calls in one native call needs (the
        # graph executor's KernelSequence): the kernel's address and its two arrays' addresses;
        # the closure keeps the arrays alive
        call.native_args = (ctypes.cast(native, ctypes.c_void_p).value, ptrs_p.value, shapes_p.value)
        return call

    def __repr__(self) -> str:
        return f"<Function {self.info.name}({', '.join(p.describe() for p in self.info.params)})>"


# ---------------------------------------------------------------- modules

# the parameters of the two lookups (shared_parameters completes their docstrings)
_LOOKUP_PARAMETERS = {
    "name": ("str", "The function's name, e.g. a kernel's."),
    "query_imports": ("bool", "If True, the modules imported with import_module are searched too, "
                              "as TVM's executors look kernels up."),
}


class Module:
    """Named native functions (tvm.runtime.Module): `mod["f"](*arrays)`, export, sources.

    Built by codegen (a JIT engine plus callbacks that emit sources and object code) or by
    `load_module` (a shared library), not by users.

    Parameters
    ----------
    infos : list
        One signature record per function (its name, argument shapes and dtypes).
    addresses : dict of str to int
        The native address of each function, by name.
    handle : object, optional
        What keeps the native code alive (an LLVM engine or a loaded library). Defaults to
        None.
    sources : dict, optional
        format -> source text (or a function making it), for get_source(fmt). Defaults to
        None.
    exporter : callable, optional
        exporter(path, cc=None, fcompile=None) writes a shared library, for export_library.
        Defaults to None.
    type_key : str, optional
        The kind of module ("llvm", "cuda", ...). Defaults to "llvm".
    object_code : callable, optional
        Returns the relocatable object code of the functions. Defaults to None.
    unrunnable : str, optional
        Why this process cannot call the functions (e.g. cross-compiled code); "" (the
        default) when it can.
    """

    def __init__(self, infos, addresses: dict, handle=None, sources=None, exporter=None,
                 type_key: str = "llvm", object_code=None, unrunnable: str = ""):
        self.type_key = type_key
        self._handle = handle
        self._sources = dict(sources or {})        # fmt -> str or a callable producing it
        self._exporter = exporter                  # callable(path, cc=None, fcompile=None) -> .so
        self._object_code = object_code            # callable() -> relocatable object bytes
        self._unrunnable = unrunnable              # why this process cannot call the functions
        # what building it took: {"kernels", "compiled", "from_cache"} for LLVM code (codegen)
        self.build_stats = {}
        self._infos = {info.name: info for info in infos}
        # functions keep the native code (`handle`) alive, not the module: no reference cycle,
        # so a dropped module and its code are freed at once
        owner = handle if handle is not None else self
        self._functions = {} if unrunnable else {name: Function(info, addresses[name], owner)
                                                 for name, info in self._infos.items()}
        self.imported_modules = []                 # e.g. modules of external codegens (relay.ext.*)

    # -- lookup
    @property
    def function_names(self) -> list:
        """The names of the functions defined in this module (not in its imports), in build order."""
        return list(self._infos)

    @property
    def runnable(self) -> bool:
        """False for code built for another machine (cross-compiled): export it instead."""
        return not self._unrunnable

    def function_info(self, name: str) -> FunctionInfo:
        """The signature of one function: its parameters' shapes and dtypes, as calls are checked
        against them.

        Parameters
        ----------
        name : str
            The function's name; a RelayError lists the functions when it is not one.

        Returns
        -------
        info : FunctionInfo
            The signature.
        """
        if name not in self._infos:
            raise RelayError(f"module has no function {name!r}; it has {sorted(self._infos)}")
        return self._infos[name]

    def import_module(self, module) -> None:
        """Add a module to the imports that get_function(name, query_imports=True) searches
        (tvm.runtime.Module.import_module).

        Parameters
        ----------
        module : Module
            The module to import, e.g. one built by an external codegen.
        """
        if not isinstance(module, Module):
            raise RelayError(f"import_module expects a runtime Module, got {type(module).__name__}")
        self.imported_modules.append(module)

    @shared_parameters(_LOOKUP_PARAMETERS)
    def has_function(self, name: str, query_imports: bool = False) -> bool:
        """Whether a function is defined here (or, with query_imports, in an imported module).

        Returns
        -------
        defined : bool
            True when it is.
        """
        if name in self._infos:
            return True
        return query_imports and any(m.has_function(name, True) for m in self.imported_modules)

    @shared_parameters(_LOOKUP_PARAMETERS)
    def get_function(self, name: str, query_imports: bool = False) -> Function:
        """A function of the module, to call with NDArrays (tvm.runtime.Module.get_function).

        Returns
        -------
        function : Function
            The function; a RelayError when there is none of that name, or when the code was built
            for another machine.
        """
        if name in self._infos:
            if self._unrunnable:
                raise RelayError(f"{name}: this module cannot run in this process: {self._unrunnable}; "
                                 f"export it with export_library(path, cc=<compiler for that machine>) "
                                 f"and load it there")
            return self._functions[name]
        if query_imports:
            for mod in self.imported_modules:
                if mod.has_function(name, True):
                    return mod.get_function(name, True)
        raise RelayError(f"module has no function {name!r}; it has {sorted(self._infos)}")

    def __getitem__(self, name: str) -> Function:
        return self.get_function(name)

    def __contains__(self, name: str) -> bool:
        return name in self._infos

    @property
    def entry_name(self) -> str:
        """The name of the module's first function ("" for a module without any)."""
        return next(iter(self._infos), "")

    # -- sources
    def get_source(self, fmt: str = "ll") -> str:
        """The generated code of an LLVM module.

        Parameters
        ----------
        fmt : str, optional
            "ll" or "llvm" (the default "ll") for the optimized LLVM IR, "asm" or "s" for the
            assembly.

        Returns
        -------
        text : str
            The code; "" for a module loaded from a library file.
        """
        key = {"llvm": "ll", "s": "asm", "": "ll"}.get(fmt, fmt)
        if key not in ("ll", "asm"):
            raise RelayError(f"get_source: unknown format {fmt!r}; use 'll' or 'asm'")
        src = self._sources.get(key, "")
        if callable(src):
            src = self._sources[key] = src()
        return src

    # -- timing
    @shared_parameters(TIMING_PARAMETERS)
    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: int = 0, limit_zero_time_iterations: int = 100,
                       cooldown_interval_ms: int = 0, repeats_to_cooldown: int = 1,
                       cache_flush_bytes: int = 0, f_preproc: str = ""):
        """A callable that times one of the module's functions (tvm.runtime.Module.time_evaluator;
        see runtime.benchmark): called with the function's arguments, it runs it once untimed, then
        `repeat` measurements of `number` calls, and returns a BenchmarkResult.

        Parameters
        ----------
        func_name : str
            The function to time.
        cache_flush_bytes : int, optional
            If more than 0, that many bytes are copied between two buffers before each measurement,
            so it starts with a cold cache. Defaults to 0.
        f_preproc : str, optional
            The name of a global function (runtime.registry) called with the same arguments before
            each measurement; "" (the default) calls none.

        Returns
        -------
        evaluator : callable
            evaluator(*args) -> BenchmarkResult.
        """
        return module_time_evaluator(self, func_name, dev, number, repeat, min_repeat_ms,
                                     limit_zero_time_iterations, cooldown_interval_ms,
                                     repeats_to_cooldown, cache_flush_bytes, f_preproc)

    # -- export
    def export_library(self, path: str, fcompile=None, sections=None, cc=None, **kwargs) -> str:
        """Write a shared library that load_module(path) (and dlopen) loads back.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write. A path ending in ".o" receives the relocatable object file itself,
            with no loader trailer (input for a linker).
        fcompile : callable, optional
            For code built by LLVM: replaces the link step, as in TVM, called as
            fcompile(path, [object files]). Defaults to None.
        sections : dict of str to bytes, optional
            Named blobs carried in the same file (see register_artifact_loader). Defaults to None.
        cc : str, optional
            For code built by LLVM: the compiler that links it, e.g. a cross compiler such as
            "aarch64-linux-gnu-gcc" for a foreign -mtriple. Defaults to None (the system's).
        **kwargs
            Accepted for TVM's signature and not used.

        Returns
        -------
        path : str
            The path written.
        """
        path = os.fspath(path)
        if path.endswith(".o"):
            if self._object_code is None:
                raise SerializationError(f"export_library({path!r}): a {self.type_key} module has no "
                                         f"object file; export a shared library (.so) instead")
            with open(path, "wb") as f:
                f.write(self._object_code())
            return path
        if self._exporter is None:
            raise SerializationError(f"this {self.type_key} module cannot be exported")
        if self.imported_modules:
            names = sorted(n for m in self.imported_modules for n in m.function_names)
            raise SerializationError(f"export_library: this module imports modules of external "
                                     f"codegens (functions {names[:10]}), which cannot be linked into "
                                     f"one library here; run it in this process, or compile those "
                                     f"functions without the Compiler attribute")
        self._exporter(path, cc=cc, fcompile=fcompile)
        with open(path, "rb") as f:
            body = f.read()
        sections = dict(sections or {})
        meta = json.dumps({"format": "relay_backend.lib", "version": FORMAT_VERSION,
                           "functions": [i.to_json() for i in self._native_infos()],
                           "sections": [[name, len(blob)] for name, blob in sections.items()]}).encode()
        payload = body + b"".join(bytes(b) for b in sections.values()) + meta + struct.pack("<Q", len(meta))
        with open(path, "wb") as f:
            f.write(payload + hashlib.sha256(payload).digest() + MAGIC)
        return path

    def _native_infos(self) -> list:
        """The signatures of the functions the shared object itself exports (dlsym'ed on load)."""
        return list(self._infos.values())

    def __repr__(self) -> str:
        return f"<Module {self.type_key}: {', '.join(self._infos)}>"


def refuse_link_options(what: str, cc, fcompile) -> None:
    """export_library's cc=/fcompile= link LLVM object code; other modules are linked already."""
    if cc is not None or fcompile is not None:
        raise SerializationError(f"export_library: {what} is already linked; cc= and fcompile= only "
                                 f"apply to modules compiled by LLVM")


def _read_library(path: str):
    """Validate an exported library and return (body bytes, metadata dict)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise SerializationError(f"load_module: cannot read {path!r}: {err}") from err
    if len(data) < _TRAILER_FIXED or not data.endswith(MAGIC):
        if data.endswith(MAGIC[:5]) or MAGIC[:5] in data[-_TRAILER_FIXED:]:
            raise SerializationError(f"load_module: {path!r} was written by an unsupported "
                                     f"version of relay_backend (expected {MAGIC!r})")
        raise SerializationError(f"load_module: {path!r} is not a relay_backend library "
                                 f"(missing trailer magic {MAGIC!r}); export it with "
                                 f"Module.export_library")
    payload, digest = data[:-40], data[-40:-8]
    if hashlib.sha256(payload).digest() != digest:
        raise SerializationError(f"load_module: {path!r} is corrupt (checksum mismatch)")
    (meta_len,) = struct.unpack("<Q", payload[-8:])
    if meta_len > len(payload) - 8:
        raise SerializationError(f"load_module: {path!r} is corrupt (bad metadata length)")
    body, meta_bytes = payload[:-8 - meta_len], payload[-8 - meta_len:-8]
    try:
        meta = json.loads(meta_bytes.decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise SerializationError(f"load_module: {path!r} has unreadable metadata: "
                                 f"{str(err)[:200]}") from None
    if not isinstance(meta, dict) or meta.get("format") != "relay_backend.lib":
        raise SerializationError(f"load_module: {path!r} metadata is not relay_backend.lib")
    if meta.get("version") != FORMAT_VERSION:
        raise SerializationError(f"load_module: {path!r} has format version "
                                 f"{meta.get('version')!r}; this build reads {FORMAT_VERSION}")
    body, meta["sections"] = _split_sections(path, body, meta.get("sections", []))
    if not body.startswith(_ELF_MAGIC):
        raise SerializationError(f"load_module: {path!r} does not contain an ELF shared object")
    check_elf_bounds(body, path)
    check_elf_machine(body, path)
    return body, meta


def _split_sections(path, body: bytes, table) -> tuple:
    """(ELF bytes, {name: bytes}) from the body and the metadata's [[name, size], ...] table."""
    if not isinstance(table, list) or not all(
            isinstance(row, list) and len(row) == 2 and isinstance(row[0], str)
            and type(row[1]) is int for row in table):
        raise SerializationError(f"load_module: {path!r} has a malformed section table "
                                 f"{str(table)[:120]} (expected [[name, size], ...])")
    sizes = [(name, size) for name, size in table]
    total = sum(size for _, size in sizes)
    if any(size < 0 for _, size in sizes) or total > len(body):
        raise SerializationError(f"load_module: {path!r} is corrupt (section sizes {sizes} exceed the file)")
    sections, offset = {}, len(body) - total
    for name, size in sizes:
        sections[name] = body[offset:offset + size]
        offset += size
    return body[:len(body) - total], sections


_ARTIFACT_LOADERS = {}


def register_artifact_loader(section: str, loader) -> None:
    """Make `load_module` return `loader(module, sections)` for files carrying `section`.

    Lets a higher layer (e.g. the graph executor factory) store extra data in an exported
    library without this level importing it.
    """
    _ARTIFACT_LOADERS[section] = loader


def load_module(path: str):
    """Load a library written by Module.export_library (tvm.runtime.load_module); a file carrying
    a section with a registered loader (e.g. a build factory's) comes back as that artifact.

    Loading a library runs its code (its initializers on load, its kernels when called): only
    load files you trust. The checks made first (magic, version, SHA-256 of the contents, ELF
    bounds, signatures) catch accidental corruption and foreign files, not a file crafted to
    pass them.

    Parameters
    ----------
    path : str
        The path of the library file.

    Returns
    -------
    module : Module or artifact
        The runtime module, or the artifact its loader makes (e.g. a
        GraphExecutorFactoryModule).
    """
    module, sections = load_library(path)
    for name in sections:
        if name in _ARTIFACT_LOADERS:
            return _ARTIFACT_LOADERS[name](module, sections)
    return module


def load_library(path: str, require: dict = None) -> tuple:
    """(Module, {section name: bytes}) of an exported library, every signature validated;
    no artifact loader runs. `require` ({section name: bytes}) must match the file's sections,
    checked before dlopen (the kernel disk cache keeps each entry's key in one). Only load
    files you trust: see load_module."""
    path = os.fspath(path)
    body, meta = _read_library(path)
    for name, expected in (require or {}).items():
        if meta["sections"].get(name) != expected:
            raise SerializationError(f"load_module: {path!r}: section {name!r} does not hold what "
                                     f"was required (the file belongs to something else)")
    functions = meta.get("functions", [])
    if not isinstance(functions, list):
        raise SerializationError(f"load_module: {path!r}: 'functions' must be a list of signatures, "
                                 f"got {str(functions)[:60]}")
    try:
        infos = [FunctionInfo.from_json(f, i) for i, f in enumerate(functions)]
    except SerializationError as err:
        raise SerializationError(f"load_module: {path!r}: {err}") from None
    # dlopen a private copy of exactly the verified bytes: no race with the file changing,
    # and no stale handle when a path is overwritten and loaded again in this process. The
    # library is dlclose'd when the module and every function from it are gone.
    fd, private = tempfile.mkstemp(prefix="rb_lib_", suffix=".so")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        lib = SharedLibrary(private)
    except OSError as err:
        raise SerializationError(f"load_module: dlopen({path!r}) failed: {err}") from err
    finally:
        os.unlink(private)
    addresses = {}
    for info in infos:
        addresses[info.name] = lib.address(info.symbol)     # dlsym, never a Python attribute
        if addresses[info.name] is None:
            raise SerializationError(f"load_module: {path!r}: function {info.name!r}: symbol "
                                     f"{info.symbol!r} is not in the library")

    def re_export(dest, cc=None, fcompile=None):
        refuse_link_options("a loaded library", cc, fcompile)
        with open(dest, "wb") as f:
            f.write(body)
    from .cuda_module import CUDA_SECTION, load_cuda_section
    if CUDA_SECTION in meta["sections"]:         # CUDA kernels: PTX and launch plans
        return load_cuda_section(meta["sections"][CUDA_SECTION], re_export), meta["sections"]
    return Module(infos, addresses, handle=lib, exporter=re_export, type_key="library"), meta["sections"]
