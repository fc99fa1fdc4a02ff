"""VirtualMachine: runs an Executable's bytecode (tvm.runtime.vm.VirtualMachine).

    vm = VirtualMachine(exe, relay_backend.cpu())
    out = vm.run(x)                    # = vm.invoke("main", x)
    vm.set_input("main", x=x); vm.invoke_stateful("main"); vm.get_outputs()

One loop, no Python recursion: a call pushes a frame (function, pc, registers, caller's
destination register) on a list, `ret` pops it, so deep Relay recursion needs no Python stack.
Register values are NDArrays, ADTs (tuples are tag 0), VMClosures, and Storage blocks.
Kernels are called destination-passing style with inputs then outputs; shape functions
(ShapeProgram) are called the same way. Inputs are checked against the function's parameter
types before anything runs; a `fatal` instruction raises ExecutionError.

Threads: `run` / `invoke` with arguments keep no state in the VirtualMachine (each call has its
own registers), so one VirtualMachine may serve many threads at once. The inputs remembered by
`set_input` and the result kept by `invoke_stateful` for `get_outputs` are per thread: a thread
sees only its own.
"""
import threading
import time

import numpy as np

from ..errors import InputError, RelayError
from ..executor import check_unambiguous_keywords
from ..runtime import ndarray as _nd
from ..runtime.container import ADT
from ..runtime.device import cpu
from ..runtime.device import device as _make_device
from ..runtime.module import BenchmarkResult
from ..runtime.ndarray import NDArray
from ..runtime.signature import dim_str, eval_dim
from .executable import Executable
from .loop import Storage, VMClosure, decode, fast_kernel, run_loop

def convert(arg, device):
    """A Python argument as a VM value (tvm.runtime.vm._convert)."""
    if isinstance(arg, NDArray):
        return arg if arg.device == device else _nd.array(arg, device=device)
    if isinstance(arg, (np.ndarray, np.generic)):
        return _nd.array(np.asarray(arg), device=device)
    if isinstance(arg, ADT):
        return ADT(arg.tag, [convert(f, device) for f in arg.fields])
    if isinstance(arg, (tuple, list)):
        return ADT(0, [convert(f, device) for f in arg])
    if isinstance(arg, VMClosure):
        return arg
    if isinstance(arg, bool):
        return _nd.array(np.array(arg, dtype="bool"), device=device)
    if isinstance(arg, int):
        return _nd.array(np.array(arg, dtype="int32"), device=device)
    if isinstance(arg, float):
        return _nd.array(np.array(arg, dtype="float32"), device=device)
    raise InputError(f"cannot pass a {type(arg).__name__} to the VM: use a numpy array, an NDArray, "
                     f"a Python scalar or a tuple of these")


def _check(value, desc, where: str, sizes: dict) -> None:
    """InputError unless `value` fits the parameter type descriptor (see
    compiler.type_descriptor). `sizes` ({name: int}) holds the size variables bound so far by
    this call's inputs: a plain variable dim binds its name, and a name met again (in the same
    or another input) must get the same size. Expression dims are checked by `_check_exprs`
    once every input has bound its variables."""
    if desc is None:
        return
    if "tuple" in desc:
        if not isinstance(value, ADT) or len(value) != len(desc["tuple"]):
            raise InputError(f"{where}: expects a tuple of {len(desc['tuple'])} fields, got {_describe(value)}")
        for i, (v, d) in enumerate(zip(value.fields, desc["tuple"])):
            _check(v, d, f"{where}.{i}", sizes)
        return
    want = _want(desc)
    if not isinstance(value, NDArray):
        raise InputError(f"{where}: expects {want}, got {_describe(value)}")
    if value.dtype != desc["dtype"]:
        raise InputError(f"{where}: expects {want}, got dtype {value.dtype} (shape {value.shape}); "
                         f"convert it with .astype({desc['dtype']!r})")
    shape = desc["shape"]
    if len(value.shape) != len(shape):
        raise InputError(f"{where}: expects {want}, got shape {value.shape}")
    for axis, (d, s) in enumerate(zip(shape, value.shape)):
        if isinstance(d, str):
            if sizes.setdefault(d, s) != s:
                raise InputError(f"{where}: expects {want}, got shape {value.shape}: dimension {axis} is "
                                 f"{s}, but {d} = {sizes[d]} (bound by an earlier dimension or input); "
                                 f"inputs sharing a size variable must agree on it")
        elif isinstance(d, int) and d != s:
            raise InputError(f"{where}: expects {want}, got shape {value.shape}")


def _check_exprs(value, desc, where: str, sizes: dict) -> None:
    """InputError unless the expression dims of `desc` (like `n * 2`) equal `value`'s sizes
    under the bound size variables (dims whose variables no input binds are left to the
    kernels' checked calls)."""
    if desc is None:
        return
    if "tuple" in desc:
        for i, (v, d) in enumerate(zip(value.fields, desc["tuple"])):
            _check_exprs(v, d, f"{where}.{i}", sizes)
        return
    for axis, (d, s) in enumerate(zip(desc["shape"], value.shape)):
        if isinstance(d, list):
            expected = eval_dim(d, sizes)
            if expected is not None and expected != s:
                bound = ", ".join(f"{k}={v}" for k, v in sorted(sizes.items()))
                raise InputError(f"{where}: expects {_want(desc)}, got shape {value.shape}: dimension {axis} "
                                 f"is {s}, but {_dim_text(d)} = {expected} ({bound})")


def _dim_text(dim) -> str:
    """A descriptor dim as Relay prints it: `n * 2`, not the signature's `(n * 2)`."""
    text = dim_str(dim)
    return text[1:-1] if isinstance(dim, list) else text


def _want(desc) -> str:
    dims = ("?" if d is None else _dim_text(d) for d in desc["shape"])
    return "Tensor[(" + ", ".join(dims) + f"), {desc['dtype']}]"


def _describe(value) -> str:
    if isinstance(value, NDArray):
        return f"Tensor[{value.shape}, {value.dtype}]"
    if isinstance(value, ADT):
        return f"an ADT with tag {value.tag} and {len(value)} fields"
    return type(value).__name__


class VirtualMachine:
    """Runs `exe` on `device` (cpu)."""

    def __init__(self, exe: Executable, device=None, memory_cfg=None):
        if not isinstance(exe, Executable):
            raise RelayError(f"VirtualMachine expects an Executable, got {type(exe).__name__}")
        if isinstance(device, (list, tuple)):
            device = device[0] if device else None
        self.device = cpu(0) if device is None else _make_device(device)
        if self.device.device_type != 1:
            raise RelayError(f"the VM runs kernels on cpu only, got {self.device}")
        self.exe = exe
        self._packed = []
        for i, name in enumerate(exe.primitive_names):
            if i in exe.shape_funcs:
                self._packed.append(exe.shape_funcs[i])
            elif exe.lib is None or name not in exe.lib:
                raise RelayError(f"Cannot find function in module: {name}")
            elif getattr(exe, "checked_calls", False):
                self._packed.append(exe.lib[name])       # loaded from bytes: never unchecked
            else:
                self._packed.append(fast_kernel(exe.lib[name]))
        self._code = [tuple(decode(ins, exe.constants, self.device) for ins in f.instructions)
                      for f in exe.functions]
        self._state = threading.local()        # per thread: .inputs (set_input), .last (invoke_stateful)

    # -- inputs
    def _prepare(self, func_name: str, args, kwargs) -> list:
        func = self.exe.function(func_name)
        if kwargs:
            names = list(func.params)
            check_unambiguous_keywords(names, kwargs, func_name)
            unknown = sorted(set(kwargs) - set(names))
            if unknown:
                raise InputError(f"{func_name}: unknown input name(s) {unknown}; the parameters are {names}")
            dup = [n for n in names[:len(args)] if n in kwargs]
            if dup:
                raise InputError(f"{func_name}: parameter(s) {dup} given both by position and by name")
            args = list(args) + [kwargs[n] for n in names[len(args):] if n in kwargs]
        if len(args) != len(func.params):
            raise InputError(f"{func_name}: the number of provided parameters ({len(args)}) doesn't match the "
                             f"number of arguments ({len(func.params)}: {', '.join(func.params)})")
        values = [convert(a, self.device) for a in args]
        sizes = {}
        for name, value, desc in zip(func.params, values, func.param_types):
            _check(value, desc, f"{func_name}: parameter '{name}'", sizes)
        for name, value, desc in zip(func.params, values, func.param_types):
            _check_exprs(value, desc, f"{func_name}: parameter '{name}'", sizes)
        return values

    def _inputs(self) -> dict:
        """This thread's inputs remembered by set_input: func_name -> values."""
        if not hasattr(self._state, "inputs"):
            self._state.inputs = {}
        return self._state.inputs

    def set_input(self, func_name: str = "main", *args, **kwargs) -> None:
        """Remember inputs for this thread's `invoke(func_name)` / `invoke_stateful(func_name)`."""
        self._inputs()[func_name] = self._prepare(func_name, args, kwargs)

    def get_input_index(self, input_name: str, func_name: str = "main") -> int:
        params = self.exe.function(func_name).params
        return params.index(input_name) if input_name in params else -1

    # -- running
    def invoke(self, func_name: str, *args, **kwargs):
        """Run a function on `args` (or the inputs given to set_input); returns NDArray / ADT / closure."""
        if args or kwargs:
            values = self._prepare(func_name, args, kwargs)
        elif func_name in self._inputs():
            values = self._inputs()[func_name]
        else:
            values = self._prepare(func_name, (), {})
        return self._run(self.exe.global_map[func_name], values)

    def run(self, *args, **kwargs):
        return self.invoke("main", *args, **kwargs)

    def invoke_stateful(self, func_name: str = "main", *args, **kwargs) -> None:
        """Run like `invoke`, keeping the result for this thread's get_outputs."""
        self._state.last = self.invoke(func_name, *args, **kwargs)

    def get_outputs(self) -> list:
        """This thread's last invoke_stateful result as a list (the fields of a tuple result)."""
        last = getattr(self._state, "last", None)
        if last is None:
            raise RelayError("get_outputs: call invoke_stateful first (in this thread)")
        return list(last.fields) if isinstance(last, ADT) else [last]

    def get_num_outputs(self) -> int:
        return len(self.get_outputs())

    def get_output(self, index: int):
        outs = self.get_outputs()
        if not 0 <= index < len(outs):
            raise InputError(f"get_output: index {index} out of range for {len(outs)} output(s)")
        return outs[index]

    def benchmark(self, device=None, *args, func_name="main", repeat=5, number=5, min_repeat_ms=0,
                  end_to_end=False, **kwargs) -> BenchmarkResult:
        """Time `func_name` on the given (or set) inputs: repeat x number calls."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        self.invoke(func_name)                       # warm-up
        results = []
        for _ in range(int(repeat)):
            n = max(int(number), 1)
            while True:
                start = time.perf_counter()
                for _ in range(n):
                    out = self.invoke(func_name)
                    if end_to_end:
                        for o in (out.fields if isinstance(out, ADT) else [out]):
                            if isinstance(o, NDArray):
                                o.numpy()
                elapsed = time.perf_counter() - start
                if elapsed * 1e3 >= (min_repeat_ms or 0) or n >= 1 << 20:
                    break
                n *= 2
            results.append(elapsed / n)
        return BenchmarkResult(results)

    def _run(self, func_index: int, args):
        return run_loop(self, func_index, args)


__all__ = ["VirtualMachine", "VMClosure", "Storage", "convert"]
