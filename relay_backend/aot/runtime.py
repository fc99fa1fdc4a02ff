"""AotModule: runs a compiled AOT model through ctypes (set_input / run / get_output).

It owns one aligned NDArray per input and per output and two ctypes structs pointing at them,
filled once, so `run()` is a single native call of `tvmgen_default_run`. Inputs are checked by
name, shape and dtype in set_input, before anything native runs; run() refuses to start while an
input was never set.

Threads: an AotModule is one set of input and output buffers and serves one thread at a time;
calls from another thread that could mix their data raise ExecutionError (runtime.thread_guard).
Use one AotModule per thread (the library's static workspace is shared, so their runs take
turns under the library's lock), a lock around whole set_input/run/get_output cycles, or
`create_executor("aot", ...).evaluate()`, whose function is thread-safe.
"""
import ctypes

from ..errors import ExecutionError, RelayError
from ..runtime import ndarray as _nd
from ..runtime.device import cpu, device as _make_device
from ..runtime.executor_module import ExecutorModule
from ..runtime.ndarray import NDArray
from .codegen import run_error


def _struct(fields):
    names = list(fields) or ["unused_"]
    klass = type("AotStruct", (ctypes.Structure,), {"_fields_": [(n, ctypes.c_void_p) for n in names]})
    return klass()


class AotModule(ExecutorModule):
    """An AOT executor instance (tvm.runtime.executor.AotModule): set_input, run, get_output
    over the compiled C program's static workspace; one per device and thread.

        module = relay.aot.AotModule(relay.build(mod, "llvm", executor="aot")["default"](relay.cpu()))

    Parameters
    ----------
    module : AotModule or AotExecutorFactoryModule
        What factory["default"](device) returned (the usual, TVM-style use), or the factory
        itself.
    device : Device or str, optional
        Where to run: the CPU only. Defaults to None (the CPU).
    """

    _module_name, _holder, _inputs_of = "AotModule", "the model", "the AOT model's"
    _type_key = "AotExecutor"

    def __init__(self, module, device=None):
        if isinstance(module, AotModule):      # TVM style: AotModule(factory["default"](dev))
            self.__dict__.update(module.__dict__)
            self.__dict__.pop("_runtime_module", None)   # `.module` binds to this object
            return
        self.factory = module
        self.device = _make_device(device) if device is not None else cpu(0)
        if self.device.device_type != 1:
            raise RelayError(f"the AOT executor runs C code on the cpu, got device {self.device}")
        self.lib = module.lib
        self._inputs = [_nd.empty(s, d, self.device) for s, d in module.input_types]
        self._outputs = [_nd.empty(s, d, self.device) for s, d in module.output_types]
        self._in_struct = _struct(module.input_fields)
        self._out_struct = _struct(module.output_fields)
        for fld, arr in zip(module.input_fields, self._inputs):
            setattr(self._in_struct, fld, arr.data_ptr)
        for fld, arr in zip(module.output_fields, self._outputs):
            setattr(self._out_struct, fld, arr.data_ptr)
        self._init_inputs(module.input_names)

    # ------------------------------------------------------------------ inputs
    def _input_array(self, idx: int) -> NDArray:
        return self._inputs[idx]

    def get_input_info(self):
        """({name: shape}, {name: dtype}) of the inputs."""
        return ({n: tuple(a.shape) for n, a in zip(self._input_names, self._inputs)},
                {n: a.dtype for n, a in zip(self._input_names, self._inputs)})

    def _share_input(self, idx: int, array: NDArray) -> None:
        """Input `idx` is `array` itself: the input struct points the C program at it."""
        self._inputs[idx] = array
        setattr(self._in_struct, self.factory.input_fields[idx], array.data_ptr)

    # ------------------------------------------------------------------ running
    def _execute(self) -> None:
        """The whole model in one native call."""
        rc = self.lib.run(ctypes.addressof(self._in_struct), ctypes.addressof(self._out_struct))
        if rc != 0:
            raise ExecutionError(f"{self.lib.prefix}_run returned error code {rc}: {run_error(rc, self.lib.prefix)}")

    def get_num_outputs(self) -> int:
        """How many outputs the model has (the fields of a tuple result).

        Returns
        -------
        count : int
            The number of outputs.
        """
        return len(self._outputs)

    def _output_array(self, idx: int) -> NDArray:
        return self._outputs[idx]
