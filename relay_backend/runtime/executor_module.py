"""ExecutorModule: the set_input / run / get_output protocol shared by the graph and AOT modules.

Both own one preallocated NDArray per flat model input and per output, and copy user values
into them, checked by name, shape and dtype before anything native runs. This base holds that
checking and copying, the checks `run` makes before any native code (every input was set;
no other thread interfered, see thread_guard), the output lookup, TVM's
`module["set_input"]`-style access and `benchmark`. A subclass says where its arrays live
(`_input_array`, `_output_array`), how it runs (`_execute`) and how it names itself.

Thread safety: a module is one set of buffers and serves one thread at a time. Calls from
several threads that could mix their data raise ExecutionError (runtime.thread_guard); use
one module per thread, a lock around whole set_input/run/get_output cycles, or
`create_executor(...).evaluate()`, whose function is thread-safe.
"""
import numpy as np

from .. import diagnostics
from ..docstrings import shared_parameters
from ..errors import InputError, RelayError
from .benchmark import TIMING_PARAMETERS, TIMING_RESULT, BenchmarkResult
from .ndarray import NDArray
from .packed_module import PackedModule
from .params import load_param_dict
from .thread_count import apply_to_this_thread
from .thread_guard import ThreadUseGuard


_LOG = diagnostics.get_logger("runtime")


def _is_index(key) -> bool:
    return isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_))


class ExecutorModule:
    """Base of GraphModule and AotModule.

    Subclasses call `_init_inputs(names)` once their input arrays exist and implement
    `_input_array(idx)`, `_output_array(idx)`, `get_num_outputs()` and `_execute()`.
    """

    _module_name = "module"            # "GraphModule has no function 'x'"
    _holder = "the module"             # "input index 7 is out of range: the graph has 2 inputs"
    _inputs_of = "the module's"        # "Could not find 'x' in graph's inputs"
    _type_key = "ExecutorModule"       # the runtime module's type_key (TVM: "GraphExecutor")
    # names of the params relay.build bound as constants (its params=): set_input(**params)
    # ignores them as TVM does, so code that passes the same dict to build and set_input ports
    bound_param_names = frozenset()

    def _init_inputs(self, names) -> None:
        """Input bookkeeping: names (several inputs may share one: by name they are ambiguous,
        by index they work), which inputs were set, and the thread guard."""
        self._input_names = list(names)
        self._input_index, self._ambiguous = {}, {}
        for i, name in enumerate(self._input_names):
            if name in self._input_index:
                self._ambiguous.setdefault(name, [self._input_index[name]]).append(i)
            else:
                self._input_index[name] = i
        self._input_set = [False] * len(self._input_names)
        self._unset = len(self._input_names)      # how many are still False (run checks it)
        self._param_names = set()                 # inputs set from params (load_params, build)
        self._guard = ThreadUseGuard(self._module_name)
        self._run_call = self._guard.call("run")

    def get_num_inputs(self) -> int:
        """The number of inputs of the model, params included.

        Returns
        -------
        count : int
            How many inputs set_input accepts.
        """
        return len(self._input_names)

    def get_num_outputs(self) -> int:
        """How many outputs the model has (the fields of a tuple result).

        Returns
        -------
        count : int
            The number of outputs.
        """
        raise NotImplementedError

    def _input_array(self, idx: int) -> NDArray:
        raise NotImplementedError

    def _output_array(self, idx: int) -> NDArray:
        raise NotImplementedError

    def _execute(self) -> None:
        """Run the model once over the current inputs (native code, no checks)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ inputs
    def get_input_index(self, name: str) -> int:
        """The index of the input called `name`.

        Parameters
        ----------
        name : str
            The input's name.

        Returns
        -------
        index : int
            Its index, or -1 when there is no such input (InputError when several inputs have
            that name: set them by index).
        """
        if not isinstance(name, str):
            raise InputError(f"get_input_index: an input name is a string, got {type(name).__name__} {name!r}")
        self._check_unambiguous(name)
        return self._input_index.get(name, -1)

    def _check_unambiguous(self, name) -> None:
        if name in self._ambiguous:
            raise InputError(f"input name {name!r} is ambiguous: inputs {self._ambiguous[name]} of "
                             f"{self._holder} are all named {name!r}; set them by index, e.g. "
                             f"set_input({self._ambiguous[name][0]}, value)")

    def _index(self, key) -> int:
        """The index of input `key` (a name or an index), or an InputError listing the names."""
        if _is_index(key):
            if not 0 <= int(key) < self.get_num_inputs():
                raise InputError(f"input index {key} is out of range: {self._holder} has "
                                 f"{self.get_num_inputs()} inputs {self._input_names}")
            return int(key)
        if not isinstance(key, str):
            raise InputError(f"an input is named by a string or numbered by an int, got "
                             f"{type(key).__name__} {key!r}; the inputs are {self._input_names}")
        self._check_unambiguous(key)
        idx = self._input_index.get(key, -1)
        if idx < 0:
            raise InputError(f"Could not find '{key}' in {self._inputs_of} inputs; valid names are "
                             f"{self._input_names}")
        return idx

    def _copy_in(self, idx: int, value) -> None:
        """Copy `value` into input `idx` after checking its shape and dtype exactly."""
        dst = self._input_array(idx)
        src = value
        if isinstance(src, (bool, int, float)):
            src = np.asarray(src, dtype=dst.dtype)
        if not isinstance(src, NDArray):
            src = np.asarray(src)
        if tuple(src.shape) != tuple(dst.shape) or str(src.dtype) != dst.dtype:
            hint = "; cast it with .astype(...)" if tuple(src.shape) == tuple(dst.shape) else ""
            raise InputError(f"input '{self._input_names[idx]}' expects Tensor[{tuple(dst.shape)}, "
                             f"{dst.dtype}], got Tensor[{tuple(src.shape)}, {src.dtype}]{hint}")
        dst.copyfrom(src)               # host or device memory, whichever each side lives in
        self._mark_set(idx)

    def _mark_set(self, idx: int) -> None:
        if not self._input_set[idx]:
            self._input_set[idx] = True
            self._unset -= 1

    def set_input(self, key=None, value=None, **params):
        """Copy a value into an input, checked by name, shape and dtype before anything native runs.

        As in TVM, keyword names that are not inputs are ignored (a params dict may hold more
        than this module takes, e.g. the params relay.build bound as constants; logged at DEBUG
        on the relay_backend logger); an unknown `key` is an InputError. If an input then stays
        unset, `run` names the ignored keywords.

        Parameters
        ----------
        key : str or int, optional
            The input's name or index. Defaults to None (only keyword inputs are set).
        value : numpy.ndarray or NDArray or number, optional
            The value for `key`; its shape and dtype must match the input exactly. Defaults to
            None.
        **params
            More inputs by name; they are copied largest first.
        """
        if key is None and value is not None:
            raise InputError(f"set_input(None, value): an input is named by a string or numbered by "
                             f"an int; the inputs are {self._input_names}")
        with self._guard.call("set_input") as me:
            if key is not None:
                if value is None:
                    raise InputError(f"set_input({key!r}): no value given")
                self._set_one(me, self._index(key), value)
            known = {k: v for k, v in params.items() if k in self._input_index or k in self._ambiguous}
            self._ignored = sorted(set(params) - set(known))
            if self._ignored:
                _LOG.debug("set_input: ignored %s (not inputs of this module%s), as TVM does",
                           self._ignored, "; bound as constants by relay.build(params=...)"
                           if set(self._ignored) & self.bound_param_names else "")
            for name in sorted(known, key=lambda k: -int(np.prod(np.shape(known[k])))):
                self._set_one(me, self._index(name), known[name])

    def _set_params(self, params: dict) -> None:
        """Set graph params by name, skipping names that are not inputs (the factory's rule)."""
        for name in sorted(params, key=lambda k: -int(np.prod(np.shape(params[k])))):
            if name in self._input_index:
                self._copy_in(self._index(name), params[name])
                self._param_names.add(name)

    def load_params(self, params_bytes) -> None:
        """Set inputs from a params blob made by save_param_dict; names that are not inputs are
        ignored.

        Parameters
        ----------
        params_bytes : bytes or bytearray
            The contents of the blob (not a file name: pass open(path, "rb").read()).
        """
        if not isinstance(params_bytes, (bytes, bytearray, memoryview)):
            hint = (": that looks like a file name; pass its contents, open(path, 'rb').read()"
                    if isinstance(params_bytes, str) else "")
            raise InputError(f"load_params expects the bytes of a params blob "
                             f"(relay_backend.runtime.save_param_dict(...)), got "
                             f"{type(params_bytes).__name__}{hint}")
        params = load_param_dict(params_bytes)
        with self._guard.call("load_params") as me:
            self._set_params(params)
            for name in params:
                if name in self._input_index:
                    self._guard.input_set(me, self._input_index[name], name)

    def _set_one(self, me, idx: int, value) -> None:
        self._copy_in(idx, value)
        self._guard.input_set(me, idx, self._input_names[idx])

    def get_input(self, key, out=None) -> NDArray:
        """The array behind an input.

        Without `out` the caller may fill the returned array in place, so the input counts as
        set from then on.

        Parameters
        ----------
        key : str or int
            The input's name or index.
        out : NDArray, optional
            An array of the input's shape and dtype to copy the value into. Defaults to None
            (return the module's own array).

        Returns
        -------
        value : NDArray
            The module's array, or `out` holding a copy.
        """
        with self._guard.call("get_input"):
            idx = self._index(key)
            arr = self._input_array(idx)
            if out is None:
                self._mark_set(idx)
                return arr
            return _check_out(f"get_input({key!r}, out)", out, arr, "input").copyfrom(arr)

    def _raise_unset(self) -> None:
        """InputError naming the inputs never set: running would read uninitialized memory."""
        unset = [name if name not in self._ambiguous else f"{name} (index {i})"
                 for i, (name, done) in enumerate(zip(self._input_names, self._input_set)) if not done]
        ignored = getattr(self, "_ignored", None)
        hint = (f"; the keyword(s) {ignored} were ignored: they are not inputs (valid names are "
                f"{self._input_names})" if ignored else "")
        raise InputError(f"{self._module_name}.run(): input(s) {unset} were never set, and the "
                         f"model would read uninitialized memory; set them first with "
                         f"set_input(name, value) or run(name=value){hint}")

    # ------------------------------------------------------------------ running
    def run(self, **inputs) -> None:
        """Run the model once over the current inputs, after setting any given here.

        Every input must have been set (params bound at build time count as set); otherwise
        InputError names those missing.

        Parameters
        ----------
        **inputs
            Inputs to set first, by name (as set_input(**inputs)).
        """
        with self._run_call as me:
            self._begin_run(me, inputs)
            self._execute()
            self._guard.after_run(me)

    def _begin_run(self, me, inputs: dict) -> None:
        """The checks before any native code runs: `inputs` set, every input set, no input
        overwritten by another thread (call inside `self._guard.call(...)`)."""
        self._ignored = []                  # only this run's ignored keywords are reported
        if inputs:
            self.set_input(**inputs)
        if self._unset:
            self._raise_unset()
        apply_to_this_thread()           # the set_num_threads limit, in this thread too
        self._guard.before_run(me)

    # ------------------------------------------------------------------ outputs
    def _output_index(self, index) -> int:
        """The output number of `index` (an int, or a name where the subclass has names)."""
        if isinstance(index, str):
            return self._output_by_name(index)
        if not _is_index(index):
            raise InputError(f"get_output: an output is numbered by an int (0 to "
                             f"{self.get_num_outputs() - 1}), got {type(index).__name__} {index!r}")
        if not 0 <= int(index) < self.get_num_outputs():
            raise InputError(f"output index {index} is out of range: {self._holder} has "
                             f"{self.get_num_outputs()} outputs")
        return int(index)

    def _output_by_name(self, name: str) -> int:
        raise InputError(f"get_output: the outputs of {self._holder} are numbered, not named; use "
                         f"an index from 0 to {self.get_num_outputs() - 1}, got {name!r}")

    def get_output(self, index, out=None) -> NDArray:
        """One output of the last run.

        Parameters
        ----------
        index : int or str
            The output's index (or its name, where the module names outputs).
        out : NDArray, optional
            An array of the output's shape and dtype to copy the value into. Defaults to None.

        Returns
        -------
        value : NDArray
            The module's own array, overwritten by the next run (copy it, or call .numpy(),
            before running again), or `out` holding a copy.
        """
        with self._guard.call("get_output") as me:
            self._guard.before_output(me)
            arr = self._output_array(self._output_index(index))
            if out is None:
                return arr
            return _check_out(f"get_output({index!r}, out)", out, arr, "output").copyfrom(arr)

    # ------------------------------------------------------------------ TVM's runtime module
    @property
    def module(self):
        """This executor as a runtime module (TVM's `GraphModule.module`): its functions by TVM
        name ("run", "set_input", "get_output", ..., "run_from_inputs"), `time_evaluator`, and
        the kernel library in `imported_modules`."""
        mod = self.__dict__.get("_runtime_module")
        if mod is None:
            names = ("run", "set_input", "get_output", "get_input", "get_num_outputs",
                     "get_num_inputs", "get_input_index", "get_input_info", "load_params",
                     "share_params", "run_from_inputs")
            funcs = {n: getattr(self, n) for n in names if hasattr(self, n)}
            mod = self._runtime_module = PackedModule(self._type_key, funcs, [self._kernel_library()],
                                                       owner=self)
        return mod

    def _kernel_library(self):
        """The runtime Module of compiled kernels this executor calls (or None)."""
        return getattr(self, "lib", None)

    def run_from_inputs(self, device_type=None, device_id=0, *args):
        """TVM's end-to-end run: set the inputs, run, and copy every output to the host.

        Parameters
        ----------
        device_type : int, optional
            The device type TVM passes first (not used: the module runs on its own device).
            Defaults to None.
        device_id : int, optional
            The device id TVM passes second (not used). Defaults to 0.
        *args
            The inputs, as name, value pairs.

        Returns
        -------
        outputs : list of numpy.ndarray
            Every output, in order.
        """
        if len(args) % 2:
            raise InputError(f"run_from_inputs takes name, value pairs after the device, got "
                             f"{len(args)} values")
        self.run(**{args[i]: args[i + 1] for i in range(0, len(args), 2)})
        return [self.get_output(i).numpy() for i in range(self.get_num_outputs())]

    def share_params(self, other, params_bytes) -> None:
        """Use another module's arrays, without copying, for the inputs named in a params blob
        (TVM: share weights between executors of one model).

        Names that are not inputs of this module are skipped; a shared input must have the same
        shape, dtype and device in both modules.

        Parameters
        ----------
        other : ExecutorModule
            A module of the same class that holds the weights.
        params_bytes : bytes or bytearray
            A params blob (save_param_dict) whose names say which inputs to share.
        """
        if type(other) is not type(self):
            raise InputError(f"share_params: other must be a {type(self).__name__}, got "
                             f"{type(other).__name__}")
        if not isinstance(params_bytes, (bytes, bytearray, memoryview)):
            raise InputError(f"share_params: params_bytes must be a params blob (save_param_dict), "
                             f"got {type(params_bytes).__name__}")
        names = [n for n in load_param_dict(params_bytes) if n in self._input_index]
        with self._guard.call("share_params") as me:
            for name in names:
                mine, theirs = self._index(name), other._index(name)
                arr, src = self._input_array(mine), other._input_array(theirs)
                if tuple(arr.shape) != tuple(src.shape) or arr.dtype != src.dtype:
                    raise InputError(f"share_params: input '{name}' is Tensor[{tuple(arr.shape)}, "
                                     f"{arr.dtype}] here but Tensor[{tuple(src.shape)}, {src.dtype}] "
                                     f"in the other module")
                if arr.device != src.device:
                    raise InputError(f"share_params: input '{name}' is on {arr.device} here but on "
                                     f"{src.device} in the other module; only modules on one device "
                                     f"can share memory (copy it with set_input instead)")
                self._share_input(mine, src)
                self._mark_set(mine)
                self._guard.input_set(me, mine, name)
            self._after_share()

    def _share_input(self, idx: int, array: NDArray) -> None:
        """Make input `idx` be `array` itself (subclasses rebind what reads it)."""
        raise NotImplementedError

    def _after_share(self) -> None:
        """Called once after share_params replaced inputs (the graph module re-binds kernels)."""

    @shared_parameters(TIMING_PARAMETERS, TIMING_RESULT)
    def benchmark(self, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=None,
                  limit_zero_time_iterations=100, end_to_end=False, cooldown_interval_ms=0,
                  repeats_to_cooldown=1, **kwargs) -> BenchmarkResult:
        """Time one of the module's functions (TVM's GraphModule.benchmark).

        Parameters
        ----------
        func_name : str, optional
            The function to time, as named in module (e.g. "run"). Defaults to "run".
        end_to_end : bool, optional
            If True, every call sets the inputs from `kwargs` and copies the outputs out
            (run_from_inputs); if False (the default) inputs are set once before timing.
        **kwargs
            Inputs by name.
        """
        min_repeat_ms = 0 if min_repeat_ms is None else min_repeat_ms
        if end_to_end:
            pairs = [x for kv in kwargs.items() for x in kv]
            return self.module.time_evaluator(
                "run_from_inputs", device, repeat=repeat, number=number, min_repeat_ms=min_repeat_ms,
                limit_zero_time_iterations=limit_zero_time_iterations)(
                    getattr(device, "device_type", 1), getattr(device, "device_id", 0), *pairs)
        if kwargs:
            self.set_input(**kwargs)
        return self.module.time_evaluator(
            func_name, device, repeat=repeat, number=number, min_repeat_ms=min_repeat_ms,
            limit_zero_time_iterations=limit_zero_time_iterations,
            cooldown_interval_ms=cooldown_interval_ms, repeats_to_cooldown=repeats_to_cooldown)()

    def __getitem__(self, key):
        """TVM's module["run"] / ["set_input"] / ... access to the methods, by name."""
        if not isinstance(key, str):
            raise RelayError(f"{self._module_name}[...] looks up a function by name (e.g. "
                             f"module['run']), got {type(key).__name__} {key!r}; for an output use "
                             f"get_output({key!r})")
        if not hasattr(self, key) or key.startswith("_"):
            raise RelayError(f"{self._module_name} has no function {key!r}")
        return getattr(self, key)


def _check_out(call: str, out, arr: NDArray, role: str) -> NDArray:
    """`out` if it is an NDArray of `arr`'s (the `role`'s) shape and dtype, else InputError
    naming `call`."""
    want = f"Tensor[{tuple(arr.shape)}, {arr.dtype}]"
    if not isinstance(out, NDArray):
        raise InputError(f"{call}: out must be an NDArray ({want}, e.g. "
                         f"relay_backend.nd.empty({tuple(arr.shape)}, {arr.dtype!r})), got {type(out).__name__}")
    if tuple(out.shape) != tuple(arr.shape) or str(out.dtype) != str(arr.dtype):
        raise InputError(f"{call}: out is Tensor[{tuple(out.shape)}, {out.dtype}], "
                         f"but the {role} is {want}")
    return out


__all__ = ["ExecutorModule"]
