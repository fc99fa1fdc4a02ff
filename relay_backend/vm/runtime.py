"""VirtualMachine: runs an Executable's bytecode (tvm.runtime.vm.VirtualMachine).

    vm = VirtualMachine(exe, relay_backend.cpu())
    out = vm.run(x)                    # = vm.invoke("main", x)
    vm.set_input("main", x=x); vm.invoke_stateful("main"); vm.get_outputs()
    vm.set_one_input("main", "x", x); vm.invoke("main")          # inputs one at a time
    vm.invoke_with_outputs("main", {"x": x}, [out])               # kernels write into `out`

One loop, no Python recursion: a call pushes a frame (function, pc, registers, caller's
destination register) on a list, `ret` pops it, so deep Relay recursion needs no Python stack.
Register values are NDArrays, ADTs (tuples are tag 0), VMClosures, and Storage blocks.
Kernels are called destination-passing style with inputs then outputs; shape functions
(ShapeProgram) are called the same way. Inputs are checked against the function's parameter
types before anything runs; a `fatal` instruction raises ExecutionError.

Threads: each call has its own registers, and everything a call remembers is per thread: the
inputs given to `run` / `invoke` / `set_input` / `set_one_input` (as in TVM, invoke with
arguments sets them), the outputs of `set_outputs`, and the result `invoke_stateful` keeps for
`get_outputs`. So one VirtualMachine may serve many threads at once; a thread sees only its own.
"""
import threading

import numpy as np

from ..docstrings import shared_parameters
from ..errors import InputError, RelayError
from ..executor import check_unambiguous_keywords
from ..runtime import ndarray as _nd
from ..runtime.container import ADT
from ..runtime.device import cpu
from ..runtime.device import device as _make_device
from ..runtime.benchmark import TIMING_PARAMETERS, TIMING_RESULT, BenchmarkResult
from ..runtime.ndarray import NDArray
from ..runtime.packed_module import PackedModule
from ..runtime.thread_count import apply_to_this_thread
from .executable import Executable
from .inputs import check_inputs, convert
from .loop import VMClosure, decode, fast_kernel, run_loop
from .outputs import bind_outputs, check_outputs, copy_results
from .steps import build_steps
from .storage import Storage, StoragePool

# Signatures (dtypes and shapes of a call's tensor inputs) remembered per function as checked:
# a call with one of them skips the parameter-type check, which costs more than a small kernel.
MAX_REMEMBERED_SIGNATURES = 64


class _PerThread(threading.local):
    """What one thread remembers of a VirtualMachine (threading.local runs __init__ once per
    thread): the inputs of set_input / invoke (`inputs`), of set_one_input (`partial`), the
    outputs of set_outputs (`outputs`), {func_name: ...} each; the last invoke_stateful result
    (`last`); the thread's StoragePool (`pool`)."""

    def __init__(self, host):
        self.inputs = {}
        self.partial = {}
        self.outputs = {}
        self.last = None
        self.pool = StoragePool(host)


class _Entry:
    """A VM function as invoke sees it: its index, parameter names and types, and the
    signatures of inputs already checked against those types (see VirtualMachine._prepare)."""

    __slots__ = ("index", "names", "param_types", "checked")

    def __init__(self, index: int, names: list, param_types: list):
        self.index = index
        self.names = names
        self.param_types = param_types
        self.checked = set()


def _to_device(value, device):
    """A VM result with its tensors copied to `device` (tuples and ADTs field by field)."""
    if isinstance(value, NDArray):
        return _nd.array(value, device=device)
    if isinstance(value, ADT):
        return ADT(value.tag, [_to_device(f, device) for f in value.fields])
    return value


# the constructor parameters of VirtualMachine and VirtualMachineProfiler (shared_parameters
# completes their docstrings)
VM_PARAMETERS = {
    "exe": ("Executable or runtime.Module", "What vm.compile returned (or its runtime module, exe.mod, "
                                            "as in TVM)."),
    "device": ("Device or str or list of Device", 'Where to run: the CPU (None), or a CUDA GPU for an '
               'executable compiled for "cuda" (the first of a list).'),
    "memory_cfg": ("object", "TVM's allocator choice (NAIVE_ALLOCATOR / POOLED_ALLOCATOR); accepted for "
                             "its signature and not used: the VM allocates as its bytecode says."),
}

# the parameters of the calls that run or feed a VM function (shared_parameters completes their
# docstrings)
INVOCATION_PARAMETERS = {
    "func_name": ("str", 'The name of the VM function, e.g. "main".'),
    "args": ("NDArray or numpy.ndarray or ADT", "Its inputs, in parameter order."),
    "kwargs": ("NDArray or numpy.ndarray or ADT", "Its inputs by parameter name."),
}


@shared_parameters(VM_PARAMETERS)
class VirtualMachine:
    """Runs a VM executable (tvm.runtime.vm.VirtualMachine): invoke(func_name, *args), or
    set_input then invoke, returning NDArrays, ADTs or tuples of them.

    Registers (tensors, shapes, control values) live in host memory; with a CUDA executable
    each kernel call stages its arguments on the device (copy in, launch, copy the outputs
    back), and the results are returned on `device`.
    """

    NAIVE_ALLOCATOR = 1
    POOLED_ALLOCATOR = 2

    def __init__(self, exe, device=None, memory_cfg=None):
        if isinstance(exe, PackedModule) and isinstance(exe.owner, Executable):
            exe = exe.owner                    # TVM: VirtualMachine(exe.mod, dev)
        if not isinstance(exe, Executable):
            raise RelayError(f"VirtualMachine expects an Executable, got {type(exe).__name__}")
        if isinstance(device, (list, tuple)):
            device = device[0] if device else None
        self.device = cpu(0) if device is None else _make_device(device)
        on_gpu = getattr(exe.lib, "type_key", None) == "cuda"
        if self.device.device_type != (2 if on_gpu else 1):
            raise RelayError(f"the executable's kernels run on {'cuda' if on_gpu else 'cpu'}, got "
                             f"device {self.device}; compile for target 'cuda' to run on a GPU, "
                             f"'llvm' for the CPU")
        exe.check_constants_loaded()
        self.host = cpu(0)
        self.exe = self._exec = exe
        self._packed = []
        for i, name in enumerate(exe.primitive_names):
            if i in exe.shape_funcs:
                self._packed.append(exe.shape_funcs[i])
            elif exe.lib is None or not exe.lib.has_function(name, query_imports=True):
                raise RelayError(f"Cannot find function in module: {name}")
            else:
                self._packed.append(self._kernel(exe, exe.lib.get_function(name, query_imports=True)))
        self._code = [tuple(decode(ins, exe.constant_pool, self.host) for ins in f.instructions)
                      for f in exe.functions]
        self._steps = None               # (steps, straight lines), built on the first run
        self._on_host = self.device == self.host
        self._functions = {}             # func_name -> _Entry
        self._state = _PerThread(self.host)
        self._runtime_module = None

    def _kernel(self, exe, function):
        """How the loop calls `function`: a CUDA kernel staged through host memory, a checked call
        for an executable loaded from bytes, else the fast unchecked path."""
        if function.device_type != self.host.device_type:
            return function.on_host(self.device)
        if getattr(exe, "checked_calls", False):           # loaded from bytes: never unchecked
            return function
        return fast_kernel(function)

    def _compiled(self) -> tuple:
        """(per function the per-pc steps of vm/steps.py, per function its straight line or
        None), built on the first run from the kernels as they are then (a profiler wraps
        them after construction)."""
        compiled = self._steps
        if compiled is None:
            compiled = self._steps = build_steps(self)
        return compiled

    def _storage_pool(self) -> StoragePool:
        """This thread's pool of static-size storages (vm/storage.py)."""
        return self._state.pool

    def _function(self, func_name: str) -> _Entry:
        """The _Entry of a VM function; InputError for a name the executable lacks."""
        found = self._functions.get(func_name)
        if found is None:
            func = self.exe.function(func_name)
            found = self._functions[func_name] = _Entry(self.exe.global_map[func_name], list(func.params),
                                                        func.param_types)
        return found

    def _signature(self, values):
        """The key under which a call's checked inputs are remembered: (dtype, shape) per input
        when every input is a host tensor, else None (tuples, closures: always checked)."""
        key = []
        for value in values:
            if type(value) is not NDArray:
                return None
            array = value.view_numpy()
            key.append((array.dtype, array.shape))
        return tuple(key)

    # -- inputs
    def _prepare(self, func_name: str, args, kwargs, entry: _Entry = None) -> list:
        """TVM's argument order: keyword names fill their parameters (names that are not
        parameters are ignored), positional arguments fill the rest in order.

        The common call, host NDArrays in parameter order with a (dtype, shape) signature
        checked before, returns at once; anything else is converted and checked."""
        if entry is None:
            entry = self._function(func_name)
        names = entry.names
        if not kwargs and entry.checked and len(args) == len(names):
            host, key = self.host, []
            for value in args:
                if type(value) is not NDArray or (value.device is not host and value.device != host):
                    break
                array = value.view_numpy()
                key.append((array.dtype, array.shape))
            else:
                if tuple(key) in entry.checked:
                    return list(args)
        param_types = entry.param_types
        if kwargs:
            check_unambiguous_keywords(names, kwargs, func_name)
            slots = [None] * len(names)
            given = 0
            for key, value in kwargs.items():
                if key in names:
                    slots[names.index(key)] = value
                    given += 1
            if len(args) + given != len(names):
                extra = sorted(set(kwargs) - set(names))
                note = f"; keyword(s) {extra} are not parameters (ignored)" if extra else ""
                raise InputError(f"{func_name}: got {len(args)} positional and {given} named argument(s) "
                                 f"for {len(names)} parameters ({', '.join(names)}){note}")
            rest = iter(args)
            args = [next(rest) if v is None else v for v in slots]
        if len(args) != len(names):
            raise InputError(f"{func_name}: the number of provided parameters ({len(args)}) doesn't match the "
                             f"number of arguments ({len(names)}: {', '.join(names)})")
        values = [convert(a, self.host) for a in args]
        key = self._signature(values)
        checked = entry.checked
        if key is not None and key in checked:
            return values
        check_inputs(func_name, names, values, param_types)
        if key is not None and len(checked) < MAX_REMEMBERED_SIGNATURES:
            checked.add(key)
        return values

    def _thread(self, key: str) -> dict:
        """This thread's {func_name: ...} table called `key` (inputs, partial, outputs)."""
        return getattr(self._state, key)

    def _inputs(self) -> dict:
        return self._state.inputs

    @shared_parameters(INVOCATION_PARAMETERS)
    def set_input(self, func_name: str = "main", *args, **kwargs) -> None:
        """Keep the inputs of a function for this thread's next invoke(func_name) or
        invoke_stateful(func_name); they are converted and checked against the parameter types
        now. Keywords name parameters; positional values fill the others in order.
        """
        self._keep_inputs(func_name, self._prepare(func_name, args, kwargs))

    def _keep_inputs(self, func_name: str, values: list) -> None:
        """`values` are this thread's inputs of `func_name` now; set_one_input starts over."""
        state = self._state
        state.inputs[func_name] = values
        if state.partial:
            state.partial.pop(func_name, None)

    @shared_parameters(INVOCATION_PARAMETERS)
    def set_one_input(self, func_name: str, *args, **kwargs) -> None:
        """Set one input of a function, by name or by index: set_one_input("main", "x", value),
        set_one_input("main", 0, value) or set_one_input("main", x=value). The calls add up; the
        function can be invoked once every input has been given (here or by set_input).

        Parameters
        ----------
        *args
            (name or index, value).
        **kwargs
            name=value, instead of `args`.
        """
        if kwargs:
            if args or len(kwargs) != 1:
                raise InputError(f"set_one_input({func_name!r}, ...): give one input, by keyword or as "
                                 f"(name or index, value)")
            (tag, value), = kwargs.items()
        elif len(args) == 2:
            tag, value = args
        else:
            raise InputError(f"set_one_input({func_name!r}, ...): expected (name or index, value), got "
                             f"{len(args)} positional argument(s)")
        func = self.exe.function(func_name)
        names = list(func.params)
        if isinstance(tag, str):
            if tag not in names:
                raise InputError(f"set_one_input: {func_name} has no parameter {tag!r}; the parameters "
                                 f"are {names}")
            index = names.index(tag)
        elif isinstance(tag, (int, np.integer)) and not isinstance(tag, bool) and 0 <= tag < len(names):
            index = int(tag)
        else:
            raise InputError(f"set_one_input: {tag!r} is neither a parameter name nor an index below "
                             f"{len(names)} of {func_name}")
        converted = convert(value, self.host)
        check_inputs(func_name, [names[index]], [converted], [func.param_types[index]])
        partial = self._thread("partial")
        values = list(partial.get(func_name) or self._inputs().get(func_name, [None] * len(names)))
        values[index] = converted
        if all(v is not None for v in values):
            # every input is known now: size variables shared between inputs must agree (a
            # rejected value is not kept)
            check_inputs(func_name, names, values, func.param_types)
            self._inputs()[func_name] = values
        partial[func_name] = values

    @shared_parameters(INVOCATION_PARAMETERS)
    def get_input_index(self, input_name: str, func_name: str = "main") -> int:
        """The position of a parameter of a VM function.

        Parameters
        ----------
        input_name : str
            The parameter's name.

        Returns
        -------
        index : int
            Its index, or -1 when the function has no parameter of that name.
        """
        params = self.exe.function(func_name).params
        return params.index(input_name) if input_name in params else -1

    def _stored_inputs(self, func_name: str) -> list:
        state = self._state
        partial = state.partial.get(func_name) if state.partial else None
        if partial is not None and any(v is None for v in partial):
            names = self.exe.function(func_name).params
            missing = [n for n, v in zip(names, partial) if v is None]
            raise InputError(f"{func_name}: input(s) {missing} were never set; set them with "
                             f"set_one_input / set_input, or pass them to invoke")
        found = state.inputs.get(func_name)
        return self._prepare(func_name, (), {}) if found is None else found

    # -- running
    @shared_parameters(INVOCATION_PARAMETERS)
    def invoke(self, func_name: str, *args, **kwargs):
        """Run a VM function, on the given inputs or those set before for this thread.

        Returns
        -------
        result : NDArray or ADT or VMClosure
            The function's value on this VM's device: a tensor, a tuple or ADT value (ADT), or a
            closure.
        """
        return self._invoke(func_name, args, kwargs)

    def run(self, *args, **kwargs):
        """Run "main": invoke("main", *args, **kwargs).

        Parameters
        ----------
        *args
            The inputs of main, in parameter order (or none, to use those set before).
        **kwargs
            Its inputs by parameter name.

        Returns
        -------
        result : NDArray or ADT or VMClosure
            What main returns.
        """
        return self._invoke("main", args, kwargs)

    def _invoke(self, func_name: str, args, kwargs):
        """invoke(func_name, *args, **kwargs), with the arguments as a tuple and a dict: what
        `run` calls too, so a small model pays for one call layer, not two."""
        state = self._state
        if args or kwargs:
            entry = self._functions.get(func_name) or self._function(func_name)
            values = None
            if not kwargs and len(args) == 1 and entry.checked and len(entry.names) == 1:
                # one tensor input with a checked signature: _prepare's fast path, inlined
                value = args[0]
                if type(value) is NDArray and (value.device is self.host or value.device == self.host):
                    array = value.view_numpy()
                    if ((array.dtype, array.shape),) in entry.checked:
                        values = [value]
            if values is None:
                values = self._prepare(func_name, args, kwargs, entry)
            state.inputs[func_name] = values            # _keep_inputs, inlined
            if state.partial:
                state.partial.pop(func_name, None)
        else:
            values = self._stored_inputs(func_name)
            entry = self._functions.get(func_name) or self._function(func_name)
        outputs = state.outputs.pop(func_name, None) if state.outputs else None
        if outputs is None:
            apply_to_this_thread()
            result = run_loop(self, entry.index, values)
            return result if self._on_host else _to_device(result, self.device)
        func = self.exe.function(func_name)
        outputs = check_outputs(func_name, outputs, values)
        result = run_loop(self, entry.index, values, bind_outputs(func_name, func, outputs))
        copy_results(func_name, result, outputs)
        return self._on_device(result)

    @shared_parameters(INVOCATION_PARAMETERS)
    def invoke_stateful(self, func_name: str = "main", *args, **kwargs) -> None:
        """Run a VM function like invoke, keeping its result for this thread's get_outputs,
        get_output and get_num_outputs instead of returning it.
        """
        self._state.last = self.invoke(func_name, *args, **kwargs)

    @shared_parameters(INVOCATION_PARAMETERS)
    def set_outputs(self, func_name: str, *outputs) -> None:
        """The tensors the next invoke of a function (in this thread) writes its results into, as
        invoke_with_outputs does.

        Parameters
        ----------
        *outputs
            One NDArray per result (per field of a tuple result), of the result's shape and dtype.
        """
        self._thread("outputs")[func_name] = list(outputs)

    @shared_parameters(INVOCATION_PARAMETERS)
    def invoke_with_outputs(self, func_name: str, input_args, output_args) -> None:
        """Run a VM function writing its results into given tensors (kernels write straight into
        them; see vm/outputs.py).

        Parameters
        ----------
        input_args : dict or None
            {parameter name: value} for every parameter, or None / empty to use the inputs set
            before.
        output_args : NDArray or list of NDArray
            One tensor per result (per field of a tuple result).
        """
        if input_args:
            if not hasattr(input_args, "items"):
                raise InputError(f"invoke_with_outputs: input_args must map parameter names to values, "
                                 f"got {type(input_args).__name__}")
            names = self.exe.function(func_name).params
            missing = [n for n in names if n not in input_args]
            if missing:
                raise InputError(f"invoke_with_outputs: input_args lacks parameter(s) {missing} of "
                                 f"{func_name}")
            self.set_input(func_name, **{n: input_args[n] for n in names})
        self.set_outputs(func_name, *(output_args if isinstance(output_args, (list, tuple))
                                      else [output_args]))
        self.invoke(func_name)

    def get_outputs(self) -> list:
        """This thread's last invoke_stateful result as a list (the fields of a tuple result)."""
        last = self._state.last
        if last is None:
            raise RelayError("get_outputs: call invoke_stateful first (in this thread)")
        return list(last.fields) if isinstance(last, ADT) else [last]

    def get_num_outputs(self) -> int:
        """How many results the last invoke_stateful of this thread returned (the fields of a tuple).

        Returns
        -------
        count : int
            The number of outputs.
        """
        return len(self.get_outputs())

    def get_output(self, index: int):
        """One result of this thread's last invoke_stateful.

        Parameters
        ----------
        index : int
            Which result (which field of a tuple result), from 0.

        Returns
        -------
        value : NDArray or ADT
            The result.
        """
        outs = self.get_outputs()
        if not 0 <= index < len(outs):
            raise InputError(f"get_output: index {index} out of range for {len(outs)} output(s)")
        return outs[index]

    @shared_parameters(INVOCATION_PARAMETERS)
    def invoke_return_to_device(self, func_name: str, device_type=1, device_id=0, *args):
        """TVM's end-to-end call: invoke a VM function on the given inputs, then copy every tensor
        result to the host.

        Parameters
        ----------
        device_type : int, optional
            Accepted for TVM's signature (the VM's own device is used). Defaults to 1.
        device_id : int, optional
            Accepted for TVM's signature. Defaults to 0.

        Returns
        -------
        result : NDArray or ADT or VMClosure
            What the function returns.
        """
        result = self.invoke(func_name, *args)
        for value in (result.fields if isinstance(result, ADT) else [result]):
            if isinstance(value, NDArray):
                value.numpy()
        return result

    @property
    def module(self) -> PackedModule:
        """This VM as a runtime module (TVM's `vm.module`): its functions by TVM name and
        `time_evaluator`, with the kernel library imported."""
        if self._runtime_module is None:
            names = ("invoke", "invoke_stateful", "get_output", "get_num_outputs", "get_input_index",
                     "set_input", "set_one_input", "set_outputs", "invoke_return_to_device")
            self._runtime_module = PackedModule("VirtualMachine", {n: getattr(self, n) for n in names},
                                                [self.exe.lib], owner=self)
        return self._runtime_module

    @shared_parameters({**TIMING_PARAMETERS, **INVOCATION_PARAMETERS}, TIMING_RESULT)
    def benchmark(self, device=None, *args, func_name="main", repeat=5, number=5, min_repeat_ms=None,
                  limit_zero_time_iterations=100, end_to_end=False, cooldown_interval_ms=0,
                  repeats_to_cooldown=1, **kwargs) -> BenchmarkResult:
        """Time a VM function (TVM's VirtualMachine.benchmark) with `self.module.time_evaluator`.

        Parameters
        ----------
        end_to_end : bool, optional
            If True, every call passes the inputs and copies the results to the host
            ("invoke_return_to_device"); if False (the default), the inputs given here are set once
            before timing.
        """
        min_repeat_ms = 0 if min_repeat_ms is None else min_repeat_ms
        if end_to_end:
            packed = list(args)
            for key, value in kwargs.items():
                i = self.get_input_index(key, func_name)
                if i < 0:
                    raise InputError(f"{func_name}() got an unexpected keyword argument '{key}'")
                packed += [None] * (i + 1 - len(packed))
                packed[i] = value
            return self.module.time_evaluator(
                "invoke_return_to_device", device, repeat=repeat, number=number,
                min_repeat_ms=min_repeat_ms, limit_zero_time_iterations=limit_zero_time_iterations)(
                    func_name, getattr(device, "device_type", 1), getattr(device, "device_id", 0), *packed)
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        return self.module.time_evaluator(
            "invoke", device, repeat=repeat, number=number, min_repeat_ms=min_repeat_ms,
            limit_zero_time_iterations=limit_zero_time_iterations,
            cooldown_interval_ms=cooldown_interval_ms, repeats_to_cooldown=repeats_to_cooldown)(func_name)

    def _on_device(self, result):
        """A result of the loop (in host memory) on this VM's device."""
        return result if self._on_host else _to_device(result, self.device)


__all__ = ["VirtualMachine", "VMClosure", "Storage", "convert"]
