"""AotModule: runs a compiled AOT model through ctypes (set_input / run / get_output).

It owns one aligned NDArray per input and per output and two ctypes structs pointing at them,
filled once, so `run()` is a single native call of `tvmgen_default_run`. Inputs are checked by
name, shape and dtype in set_input, before anything native runs.
"""
import ctypes

import numpy as np

from ..errors import ExecutionError, InputError, RelayError
from ..runtime import ndarray as _nd
from ..runtime.device import cpu, device as _make_device
from ..runtime.executor_module import ExecutorModule
from ..runtime.ndarray import NDArray


def _struct(fields):
    names = list(fields) or ["unused_"]
    klass = type("AotStruct", (ctypes.Structure,), {"_fields_": [(n, ctypes.c_void_p) for n in names]})
    return klass()


class AotModule(ExecutorModule):
    """An AOT executor instance (tvm.runtime.executor.AotModule): one per device."""

    _module_name, _holder, _inputs_of = "AotModule", "the model", "the AOT model's"

    def __init__(self, module, device=None):
        if isinstance(module, AotModule):      # TVM style: AotModule(factory["default"](dev))
            self.__dict__.update(module.__dict__)
            return
        self.factory = module
        self.device = _make_device(device) if device is not None else cpu(0)
        if self.device.device_type != 1:
            raise RelayError(f"the AOT executor runs C code on the cpu, got device {self.device}")
        self.lib = module.lib
        self._input_names = list(module.input_names)
        self._input_index = {n: i for i, n in enumerate(self._input_names)}
        self._inputs = [_nd.empty(s, d, self.device) for s, d in module.input_types]
        self._outputs = [_nd.empty(s, d, self.device) for s, d in module.output_types]
        self._in_struct = _struct(module.input_fields)
        self._out_struct = _struct(module.output_fields)
        for fld, arr in zip(module.input_fields, self._inputs):
            setattr(self._in_struct, fld, arr.data_ptr)
        for fld, arr in zip(module.output_fields, self._outputs):
            setattr(self._out_struct, fld, arr.data_ptr)

    # ------------------------------------------------------------------ inputs
    def _input_array(self, idx: int) -> NDArray:
        return self._inputs[idx]

    def set_input(self, key=None, value=None, **params):
        """Copy `value` into input `key` (name or index); keyword arguments set inputs by name."""
        if key is not None:
            if value is None:
                raise InputError(f"set_input({key!r}): no value given")
            self._copy_in(self._index(key), value)
        for name, val in params.items():
            self._copy_in(self._index(name), val)

    def get_num_inputs(self) -> int:
        return len(self._inputs)

    def get_input_info(self):
        """({name: shape}, {name: dtype}) of the inputs."""
        return ({n: tuple(a.shape) for n, a in zip(self._input_names, self._inputs)},
                {n: a.dtype for n, a in zip(self._input_names, self._inputs)})

    # ------------------------------------------------------------------ running
    def run(self, **inputs) -> None:
        """Set `inputs` (by name), then run the whole model in one native call."""
        if inputs:
            self.set_input(**inputs)
        rc = self.lib.run(ctypes.addressof(self._in_struct), ctypes.addressof(self._out_struct))
        if rc != 0:
            raise ExecutionError(f"{self.lib.prefix}_run returned error code {rc} (-1/-2: a kernel's "
                                 f"workspace is too small or misaligned: rebuild with more "
                                 f"-D{self.lib.prefix.upper()}_MAX_THREADS; -3: a misaligned buffer; "
                                 f"-4: the model_params.bin compiled in is not the one generated "
                                 f"with model.c)")

    def get_num_outputs(self) -> int:
        return len(self._outputs)

    def get_output(self, index, out=None) -> NDArray:
        """Output `index`: the internal array (overwritten by the next run) or a copy into `out`."""
        if not isinstance(index, (int, np.integer)) or not 0 <= int(index) < len(self._outputs):
            raise InputError(f"output index {index!r} is out of range: the model has "
                             f"{len(self._outputs)} outputs")
        arr = self._outputs[int(index)]
        if out is None:
            return arr
        want = f"Tensor[{tuple(arr.shape)}, {arr.dtype}]"
        if not isinstance(out, NDArray):
            raise InputError(f"get_output({index}, out): out must be an NDArray ({want}), "
                             f"got {type(out).__name__}")
        if tuple(out.shape) != tuple(arr.shape) or str(out.dtype) != str(arr.dtype):
            raise InputError(f"get_output({index}, out): out is Tensor[{tuple(out.shape)}, "
                             f"{out.dtype}], but the output is {want}")
        return out.copyfrom(arr)
