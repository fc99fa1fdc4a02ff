"""Executable: the VM's compiled program (bytecode, constants, kernel names, kernels) and its file format.

`exe.bytecode` is a readable listing; `exe.save()` returns (bytearray, lib) where lib is the runtime
Module of kernels (export it with `lib.export_library(path)`, load it with
`relay_backend.runtime.load_module(path)`); `Executable.load_exec(bytes, lib)` rebuilds it.

Byte layout (little-endian, no pickle; loading never runs code from the file):

    8s  MAGIC "RBVMEXE\\0"      u32 FORMAT_VERSION
    u64 n, n bytes JSON         functions (name, params, param types, register_file_size,
                                instructions as [opcode, fields...]), globals, primitive names,
                                shape functions, package version, the kernels that only
                                concatenate (packed index -> [axis, inputs])
                                (and the index, name, shape and dtype of late-bound constants)
    u64 m, m bytes              constants as a params blob (runtime.params, names "0", "1", ...;
                                late-bound constants are not in it, see late_bound.py)
    32s sha256 of everything before

Every field is validated on load (magic, version, lengths, checksum, each instruction's shape,
register / function / constant / packed indices in range, jump targets forward and inside the
function, numeric dtypes, non-negative shapes, parameter types, shape-function nodes), and
verify.py follows every path to prove each register holds the kind of value its instructions
need; a bad file raises SerializationError (static allocations over the size limit raise
AllocationError naming the instruction). The checksum only detects accidents (anyone can
recompute it), so a loaded executable is also never trusted at run time: the VM calls its
kernels through the checked call (count, dtype, shape, alignment and aliasing of every
argument), except the calls of a straight-line function whose arguments the bytecode itself
fixes, proven once when the VM builds the line (vm/static_calls.py).
"""
import hashlib
import json
import struct
from dataclasses import dataclass

from ..config import VERSION
from ..errors import SerializationError
from ..runtime.limits import check_tensor_size
from ..runtime.module import Module
from ..runtime.packed_module import PackedModule
from ..runtime.params import load_param_dict, save_param_dict
from ..runtime.signature import dim_from_json
from .bytecode import FIELDS, SUPPORTED_DTYPES, Opcode, format_instruction, make
from .late_bound import (describe_constants, fill_late_bound, is_late_bound, late_bound_metadata,
                         read_late_bound_metadata, restore_late_bound, take_late_bound)
from .shape_func import ShapeProgram
from .verify import verify_function

MAGIC = b"RBVMEXE\x00"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sI")
_U64 = struct.Struct("<Q")


@dataclass
class VMFunction:
    """One function's bytecode: parameter names and types, instructions, register count."""

    name: str
    params: list
    param_types: list
    instructions: list
    register_file_size: int

    def to_json(self) -> dict:
        return {"name": self.name, "params": list(self.params), "param_types": list(self.param_types),
                "register_file_size": self.register_file_size,
                "instructions": [[v if not isinstance(v, tuple) else list(v) for v in ins]
                                 for ins in self.instructions]}


class Executable:
    """The VM's compiled program (tvm.runtime.vm.Executable): bytecode, constants, kernel names
    and kernels. Made by vm.compile or Executable.load_exec, not by users.

    Parameters
    ----------
    functions : list of VMFunction
        The bytecode functions.
    global_map : dict of str to int
        The index of each global function by name.
    primitive_names : list of str
        The kernel names, by packed-function index.
    shape_funcs : dict of int to ShapeProgram
        The shape functions, by packed-function index.
    constants : list of NDArray
        The constant pool (None for a late-bound constant not loaded yet).
    lib : runtime.Module
        The compiled kernels.
    """

    def __init__(self, functions, global_map, primitive_names, shape_funcs, constants, lib):
        self.functions = list(functions)
        self.global_map = dict(global_map)
        self.primitive_names = list(primitive_names)
        self.shape_funcs = dict(shape_funcs)        # packed index -> ShapeProgram
        # NDArray per constant; None for a late-bound constant not loaded yet (late_bound.py)
        self.constant_pool = list(constants)
        # per constant its late-bound name (or None); empty when no constant is late-bound
        self.late_bound_constant_names = []
        self.late_bound_types = {}                  # index -> (shape, dtype) of late-bound ones
        self.lib = lib
        self._function_params = {}
        self._runtime_module = None
        # True for executables read from bytes (load_exec): the VM then calls every kernel with
        # its signature check, so a hand-edited file cannot make a kernel touch foreign memory
        self.checked_calls = False
        # kernel name -> {"ops": Relay op names, "macs": multiply-adds}, for profiles; known for
        # executables compiled in this process (not stored by save())
        self.kernel_info = {}
        # packed index -> (axis, number of inputs) of the kernels that only concatenate their
        # inputs, which the VM may run in place (vm/site_plan.py checks every such call's
        # shapes and slices against the bytecode's allocations before it skips the kernel)
        self.concat_kernels = {}

    # -- inspection
    @property
    def bytecode(self) -> str:
        """The readable listing of every function."""
        names = [f.name for f in self.functions]
        lines = []
        for func in self.functions:
            lines.append(f"VM Function[{self.global_map.get(func.name, '?')}]: {func.name}"
                         f"({', '.join(func.params)})")
            lines.append(f"# reg file size = {func.register_file_size}")
            lines.append(f"# instruction count = {len(func.instructions)}")
            lines.append("opcode, fields # inst(text):")
            for pc, ins in enumerate(func.instructions):
                lines.append(f"{pc:>3}: {format_instruction(ins, self.primitive_names, names)}")
            lines.append("")
        return "\n".join(lines)

    @property
    def primitive_ops(self) -> list:
        """Names of the kernels (not shape functions) the bytecode calls."""
        return [n for i, n in enumerate(self.primitive_names) if i not in self.shape_funcs]

    @property
    def stats(self) -> str:
        """A readable summary: the size of the constant pool, the VM functions and the packed
        functions (kernels and shape functions) the bytecode calls.
        """
        return (f"Relay VM executable statistics:\n  Constant pool (# constants: {len(self.constant_pool)})\n"
                f"  Globals (#{len(self.functions)}): {list(self.global_map)}\n"
                f"  Primitive ops (#{len(self.primitive_names)}): {self.primitive_names}")

    @property
    def globals(self) -> list:
        """The names of the VM functions, in function-index order."""
        return sorted(self.global_map, key=self.global_map.get)

    @property
    def constants(self) -> str:
        """One line per constant of the pool (TVM's readable description, for diffs in tests)."""
        return describe_constants(self)

    @property
    def primitives(self) -> str:
        """One line per packed function (kernel or shape function) the bytecode calls."""
        return "".join(f"VM PackedFunc[{i}]: {name}\n" for i, name in enumerate(self.primitive_names))

    @property
    def virtual_devices(self) -> str:
        """The devices the executable uses: where its kernels run (cpu, or cuda then the cpu host
        that holds the VM's registers)."""
        types = [2, 1] if getattr(self.lib, "type_key", None) == "cuda" else [1]
        return "".join(f"VM VirtualDevice[{i}]: device type {t}, id 0 and mem_scope \n"
                       for i, t in enumerate(types))

    @property
    def module(self) -> PackedModule:
        """The executable as a runtime module (TVM's `exe.mod`): save, get_lib, get_bytecode, ...
        and the late-bound constant calls by TVM name, with the kernel library imported."""
        if self._runtime_module is None:
            funcs = {"save": lambda: self.save()[0], "get_lib": self.get_lib,
                     "get_bytecode": lambda: self.bytecode, "get_constants": lambda: self.constants,
                     "get_virtual_devices": lambda: self.virtual_devices,
                     "get_primitives": lambda: self.primitives, "get_stats": lambda: self.stats,
                     "get_function_arity": self.get_function_arity,
                     "get_function_param_name": self.get_function_param_name,
                     "move_late_bound_consts": self.move_late_bound_consts,
                     "get_late_bound_consts": self.get_late_bound_consts,
                     "load_late_bound_consts": self.load_late_bound_consts,
                     "load_late_bound_consts_from_map": self.load_late_bound_consts_from_map}
            self._runtime_module = PackedModule("VMExecutable", funcs, [self.lib], owner=self)
        return self._runtime_module

    mod = module

    def get_lib(self):
        """The runtime Module holding the compiled kernels (TVM's Executable.lib).

        Returns
        -------
        lib : runtime.Module or None
            The kernel library; None when no function calls a kernel.
        """
        return self.lib

    def get_function_params(self, func_name: str) -> list:
        """The parameter names of a VM function.

        Parameters
        ----------
        func_name : str
            The VM function, e.g. "main".

        Returns
        -------
        names : list of str
            Its parameter names, in order.
        """
        return list(self.function(func_name).params)

    # -- late-bound constants (kept out of the code blob; see late_bound.py)
    def get_late_bound_consts(self, byte_limit: int) -> dict:
        """Take the large constants out of the executable (TVM's late-bound constants), e.g. to store
        them apart from the bytecode; they must be loaded back before a VirtualMachine is made.

        Parameters
        ----------
        byte_limit : int
            The least size, in bytes, of a constant that is taken out.

        Returns
        -------
        constants : dict of str to NDArray
            {"const_<index>": value} for each constant taken out.
        """
        return take_late_bound(self, byte_limit)

    def move_late_bound_consts(self, path, byte_limit: int) -> None:
        """Take the large constants out of the executable (see get_late_bound_consts) and write them
        to a params file.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write (in the format of runtime.save_param_dict).
        byte_limit : int
            The least size, in bytes, of a constant that is moved.
        """
        data = save_param_dict(self.get_late_bound_consts(byte_limit))
        with open(path, "wb") as f:
            f.write(data)

    def load_late_bound_consts(self, path) -> None:
        """Load the late-bound constants back from the file move_late_bound_consts wrote.

        Parameters
        ----------
        path : str or os.PathLike
            The params file; a SerializationError when it cannot be read or lacks a constant.
        """
        if not self.late_bound_constant_names:
            return
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as err:
            raise SerializationError(f"load_late_bound_consts: cannot read {path!r}: {err}") from None
        self.load_late_bound_consts_from_map(load_param_dict(data))

    def load_late_bound_consts_from_map(self, map) -> None:  # noqa: A002 - TVM's name
        """Load the late-bound constants back from a dict.

        Parameters
        ----------
        map : dict of str to NDArray or numpy.ndarray
            {"const_<index>": value} with every constant that was taken out and no other; each
            value must have the shape and dtype the constant had.
        """
        fill_late_bound(self, map)

    def check_constants_loaded(self) -> None:
        """SerializationError when late-bound constants were not loaded yet."""
        missing = [n for n, c in zip(self.late_bound_constant_names, self.constant_pool)
                   if n is not None and c is None]
        if missing:
            raise SerializationError(f"the VM executable has {len(missing)} late-bound constant(s) not "
                                     f"loaded ({missing[:5]}); call exe.load_late_bound_consts(path) or "
                                     f"load_late_bound_consts_from_map(...) before making a VirtualMachine")

    def function(self, name: str) -> VMFunction:
        """The VMFunction of a name: its parameters, their types and its bytecode.

        Parameters
        ----------
        name : str
            The VM function, e.g. "main"; an InputError lists the functions when it is not one.

        Returns
        -------
        function : VMFunction
            The function.
        """
        from ..errors import InputError
        if name not in self.global_map:
            raise InputError(f"the VM executable has no function {name!r}; it has {sorted(self.global_map)}")
        return self.functions[self.global_map[name]]

    def get_function_arity(self, name: str) -> int:
        """The number of parameters of a VM function (TVM's get_function_arity).

        Parameters
        ----------
        name : str
            The VM function.

        Returns
        -------
        arity : int
            Its number of parameters.
        """
        return len(self.function(name).params)

    def get_function_param_name(self, name: str, index: int) -> str:
        """The name of one parameter of a VM function (TVM's get_function_param_name).

        Parameters
        ----------
        name : str
            The VM function.
        index : int
            The parameter's position, from 0.

        Returns
        -------
        param_name : str
            The parameter's name.
        """
        return self.function(name).params[index]

    # -- serialization
    def save(self):
        """(bytearray, lib): the bytecode, constants and metadata as bytes, and the kernel Module.
        Late-bound constants are left out (only their names, shapes and dtypes are kept)."""
        meta = {"format": "relay_backend.vm", "version": FORMAT_VERSION, "package_version": VERSION,
                "functions": [f.to_json() for f in self.functions],
                "globals": sorted(self.global_map, key=self.global_map.get),
                "primitives": self.primitive_names,
                "shape_funcs": {str(i): p.to_json() for i, p in self.shape_funcs.items()},
                "num_constants": len(self.constant_pool),
                "concat_kernels": {str(i): list(found) for i, found in sorted(self.concat_kernels.items())}}
        late = late_bound_metadata(self)
        if late:
            meta["late_bound_constants"] = late
        meta_bytes = json.dumps(meta, separators=(",", ":")).encode()
        consts = save_param_dict({str(i): c for i, c in enumerate(self.constant_pool)
                                  if not is_late_bound(self, i)})
        body = (_HEADER.pack(MAGIC, FORMAT_VERSION) + _U64.pack(len(meta_bytes)) + meta_bytes
                + _U64.pack(len(consts)) + consts)
        return bytearray(body + hashlib.sha256(body).digest()), self.lib

    @staticmethod
    def load_exec(bytecode, lib) -> "Executable":
        """Rebuild an Executable from the bytes save() returned and its kernel Module.

        `lib` is usually `load_module(path)`, and loading a library runs its code: only load
        files you trust. The bytecode is data (never pickle), and it is validated, but those
        checks catch accidental corruption and foreign files, not a file crafted to pass them.

        Parameters
        ----------
        bytecode : bytes or bytearray or memoryview
            The first value save() returned (or the contents of the file it was written to).
        lib : runtime.Module or None
            The kernel library: the second value save() returned, or load_module of its export;
            None only for an executable that calls no kernel.

        Returns
        -------
        exe : Executable
            The executable; a SerializationError when the bytes or the library do not fit.
        """
        if not isinstance(bytecode, (bytes, bytearray, memoryview)):
            raise SerializationError(f"load_exec: bytecode must be bytes (the first value save() returns, "
                                     f"or open(path, 'rb').read()), got {type(bytecode).__name__}")
        if lib is not None and not isinstance(lib, Module):
            raise SerializationError(f"load_exec: lib must be the kernel Module (the second value save() "
                                     f"returns, or relay_backend.runtime.load_module(path) of its export), "
                                     f"got {type(lib).__name__}")
        meta, constants, late = _read(bytes(bytecode))
        functions, globals_, prims, shape_funcs = _decode(meta)
        if len(globals_) != len(functions) or [f.name for f in functions] != globals_:
            raise SerializationError("VM executable: the globals table does not match the functions")
        if any(not 0 <= i < len(prims) for i in shape_funcs):
            raise SerializationError("VM executable: a shape function index is out of range")
        for func in functions:
            _validate_function(func, len(functions), len(prims), len(constants))
        for func in functions:
            verify_function(func, functions)
        exe = Executable(functions, {n: i for i, n in enumerate(globals_)}, prims, shape_funcs, constants, lib)
        exe.concat_kernels = _concat_kernels(meta, len(prims))
        restore_late_bound(exe, late)
        exe.checked_calls = True
        missing = [n for n in exe.primitive_ops if lib is None or not lib.has_function(n, query_imports=True)]
        if missing:
            raise SerializationError(f"VM executable: cannot find function(s) {missing} in module {lib!r}; "
                                     f"pass the lib that save() returned (or load_module of its export)")
        return exe


def _decode(meta: dict) -> tuple:
    """(functions, global names, primitive names, shape functions) of the metadata; any field of
    the wrong type or form is a SerializationError."""
    try:
        functions = [VMFunction(str(f["name"]), [str(p) for p in f["params"]], list(f["param_types"]),
                                [make(Opcode(ins[0]), *ins[1:]) for ins in f["instructions"]],
                                int(f["register_file_size"])) for f in meta["functions"]]
        globals_ = [str(g) for g in meta["globals"]]
        prims = [str(p) for p in meta["primitives"]]
        shape_funcs = {int(i): ShapeProgram.from_json(p) for i, p in meta["shape_funcs"].items()}
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as err:
        raise SerializationError(f"VM executable: malformed metadata ({type(err).__name__}: "
                                 f"{str(err)[:200]})") from None
    return functions, globals_, prims, shape_funcs


def _concat_kernels(meta: dict, npacked: int) -> dict:
    """{packed index: (axis, number of inputs)} of the metadata's "concat_kernels" (absent in
    files that record none); a malformed or out-of-range entry is a SerializationError."""
    table = meta.get("concat_kernels", {})
    found = {}
    if not isinstance(table, dict):
        raise SerializationError("VM executable: concat_kernels must map packed indices to [axis, inputs]")
    for key, value in table.items():
        if not (isinstance(key, str) and key.isdigit() and int(key) < npacked and isinstance(value, list)
                and len(value) == 2 and all(type(v) is int for v in value) and value[1] >= 2):
            raise SerializationError(f"VM executable: bad concat_kernels entry {key!r}: {str(value)[:80]} "
                                     f"(want a packed index below {npacked} and [axis, inputs >= 2])")
        found[int(key)] = (value[0], value[1])
    return found


def _read(data: bytes):
    """(metadata dict, constants list with None for late-bound ones, {index: (name, shape, dtype)}
    of the late-bound ones) from the bytes, checking magic, version and checksum."""
    if len(data) < _HEADER.size + 2 * _U64.size + 32:
        raise SerializationError(f"VM executable: {len(data)} bytes is too short to be an executable (truncated?)")
    magic, version = _HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise SerializationError(f"VM executable: bad magic {magic!r} (expected {MAGIC!r}); "
                                 f"this is not a relay_backend VM executable")
    if version != FORMAT_VERSION:
        raise SerializationError(f"VM executable: format version {version}, this build reads {FORMAT_VERSION}")
    body, digest = data[:-32], data[-32:]
    if hashlib.sha256(body).digest() != digest:
        raise SerializationError("VM executable: checksum mismatch (the bytes are corrupt or truncated)")
    pos = _HEADER.size
    (meta_len,) = _U64.unpack_from(body, pos)
    pos += _U64.size
    if pos + meta_len + _U64.size > len(body):
        raise SerializationError("VM executable: metadata length exceeds the data")
    try:
        meta = json.loads(body[pos:pos + meta_len].decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise SerializationError(f"VM executable: unreadable metadata: {str(err)[:200]}") from None
    pos += meta_len
    (const_len,) = _U64.unpack_from(body, pos)
    pos += _U64.size
    if pos + const_len != len(body):
        raise SerializationError("VM executable: constants section length does not match the data")
    if not isinstance(meta, dict) or meta.get("format") != "relay_backend.vm":
        raise SerializationError("VM executable: metadata is not relay_backend.vm")
    if meta.get("package_version") != VERSION:
        raise SerializationError(f"VM executable: written by relay_backend {meta.get('package_version')}, "
                                 f"this is {VERSION}; recompile it")
    blob = load_param_dict(body[pos:pos + const_len])
    late = read_late_bound_metadata(meta.get("late_bound_constants", []))
    n = meta.get("num_constants")
    if type(n) is not int or n != len(blob) + len(late):   # compare counts before building n names
        late_note = f" and {len(late)} late-bound" if late else ""
        raise SerializationError(f"VM executable: the constant pool holds {len(blob)} constants{late_note} "
                                 f"but num_constants is {str(n)[:40]}")
    if sorted(blob) != sorted(str(i) for i in range(n) if i not in late):
        raise SerializationError("VM executable: the constant pool's names are not 0..num_constants-1 "
                                 "less the late-bound ones")
    return meta, [blob.get(str(i)) for i in range(n)], late


_TERMINATORS = (Opcode.Ret, Opcode.Goto, Opcode.Fatal, Opcode.If)
_INT64_MAX = (1 << 63) - 1
_MAX_IMMEDIATE = 1 << 31


def _bad(func: VMFunction, pc, what: str) -> SerializationError:
    where = f"{func.name}" if pc is None else f"{func.name}[{pc}] {Opcode(func.instructions[pc][0]).name}"
    return SerializationError(f"VM executable: function {where}: {what}")


def _validate_param_type(desc, where: str) -> None:
    """SerializationError unless `desc` is a compiler.type_descriptor (None, tensor or tuple)."""
    if desc is None:
        return
    if isinstance(desc, dict) and set(desc) == {"tuple"} and isinstance(desc["tuple"], list):
        for i, d in enumerate(desc["tuple"]):
            _validate_param_type(d, f"{where}.{i}")
        return
    ok = (isinstance(desc, dict) and set(desc) == {"shape", "dtype"} and isinstance(desc["shape"], list)
          and isinstance(desc["dtype"], str) and desc["dtype"] in SUPPORTED_DTYPES
          and all(d is None or (type(d) is int and 0 <= d <= _INT64_MAX) or _is_symbolic_dim(d, where)
                  for d in desc["shape"]))
    if not ok:
        raise SerializationError(f"VM executable: {where} has a malformed type {str(desc)[:120]} (a tensor "
                                 f"type needs a shape of ints / null / symbolic dims and one of the dtypes "
                                 f"{sorted(SUPPORTED_DTYPES)})")


def _is_symbolic_dim(dim, where: str) -> bool:
    """Whether `dim` is a well-formed symbolic dim (a size variable's name or [op, a, b] over
    them, runtime/signature.py's form); a malformed one is a SerializationError."""
    if not isinstance(dim, (str, list)):
        return False
    dim_from_json(dim, f"VM executable: {where}")
    return True


def _validate_function(func: VMFunction, nfuncs: int, npacked: int, nconsts: int) -> None:
    """SerializationError naming the function, instruction index and field of anything the run loop
    could not execute safely: registers, functions, constants and kernels out of range, jumps
    outside the function (or onto themselves), code that falls off the end, dtypes that are not
    numeric, negative or overflowing shapes and immediates, and malformed parameter types."""
    n = len(func.instructions)
    limits = {"reg": func.register_file_size, "func": nfuncs, "packed": npacked, "const": nconsts}
    if not func.instructions or func.register_file_size < len(func.params):
        raise _bad(func, None, "is empty or has too few registers")
    # the compiler gives every register at least one writing instruction
    if func.register_file_size > len(func.params) + 2 * n + 16:
        raise _bad(func, None, f"register_file_size={func.register_file_size} is larger than "
                               f"{len(func.params)} parameters and {n} instructions can use")
    if len(func.param_types) != len(func.params):
        raise _bad(func, None, f"has {len(func.params)} parameters but {len(func.param_types)} parameter types")
    for name, desc in zip(func.params, func.param_types):
        _validate_param_type(desc, f"function {func.name}: parameter '{name}'")
    for pc, ins in enumerate(func.instructions):
        op = Opcode(ins[0])
        for value, (name, kind) in zip(ins[1:], FIELDS[op]):
            values = value if kind in ("regs", "ints") else (value,)
            key = "reg" if kind == "regs" else kind
            for v in values:
                if key in limits and not 0 <= v < limits[key]:
                    raise _bad(func, pc, f"{name}={v} is out of range (0..{limits[key] - 1})")
                if kind == "off" and v <= 0:          # the compiler only ever jumps forward
                    raise _bad(func, pc, f"{name}={v} jumps {'backwards' if v else 'onto itself'} to "
                                         f"{pc + v}; jumps must go forward (nothing else is ever "
                                         f"compiled, and a backward jump could loop forever)")
                if kind == "off" and pc + v >= n:
                    raise _bad(func, pc, f"{name}={v} jumps to {pc + v}, outside the function's "
                                         f"{n} instructions")
                if kind == "ints" and not 0 <= v <= _INT64_MAX:
                    raise _bad(func, pc, f"{name} has the dim {v}; dims must be non-negative")
                if kind == "int" and op != Opcode.LoadConsti and not 0 <= v < _MAX_IMMEDIATE:
                    raise _bad(func, pc, f"{name}={v} is out of range")
                if kind == "int" and not -_INT64_MAX - 1 <= v <= _INT64_MAX:
                    raise _bad(func, pc, f"{name}={v} does not fit in int64")
            if kind == "dtype" and value not in SUPPORTED_DTYPES:
                raise _bad(func, pc, f"{name}={value!r} is not one of the supported dtypes "
                                     f"{sorted(SUPPORTED_DTYPES)}")
        if op in (Opcode.AllocTensor, Opcode.AllocStorage):     # static sizes: checked before any run
            shape, dtype = (ins[3], ins[4]) if op == Opcode.AllocTensor else (ins[5], ins[3])
            check_tensor_size(shape, dtype, f"VM executable: function {func.name}[{pc}] {op.name}: "
                                            f"shape={list(shape)}")
        if op == Opcode.InvokePacked and not (ins[2] == len(ins[4]) and 0 <= ins[3] <= ins[2]):
            raise _bad(func, pc, f"arity={ins[2]} / output_size={ins[3]} do not fit its {len(ins[4])} "
                                 f"arguments")
    if Opcode(func.instructions[-1][0]) not in _TERMINATORS:
        raise _bad(func, n - 1, "the last instruction falls off the end of the function (expected ret, "
                                "goto, if or fatal)")


__all__ = ["Executable", "VMFunction", "MAGIC", "FORMAT_VERSION"]
