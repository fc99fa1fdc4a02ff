"""AotModule: runs a compiled AOT model through ctypes (set_input / run / get_output).

It owns one aligned NDArray per input and per output and two ctypes structs pointing at them,
filled once, so `run()` is a single native call of `tvmgen_default_run`. Inputs are checked by
name, shape and dtype in set_input, before anything native runs.
"""
import ctypes
import time

import numpy as np

from ..errors import ExecutionError, InputError, RelayError
from ..runtime import ndarray as _nd
from ..runtime.device import cpu, device as _make_device
from ..runtime.module import BenchmarkResult
from ..runtime.ndarray import NDArray


def _struct(fields):
    names = list(fields) or ["unused_"]
    klass = type("AotStruct", (ctypes.Structure,), {"_fields_": [(n, ctypes.c_void_p) for n in names]})
    return klass()


class AotModule:
    """An AOT executor instance (tvm.runtime.executor.AotModule): one per device."""

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
    def get_input_index(self, name: str) -> int:
        return self._input_index.get(name, -1)

    def _index(self, key) -> int:
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not 0 <= int(key) < len(self._inputs):
                raise InputError(f"input index {key} is out of range: the model has "
                                 f"{len(self._inputs)} inputs {self._input_names}")
            return int(key)
        idx = self._input_index.get(key, -1)
        if idx < 0:
            raise InputError(f"Could not find '{key}' in the AOT model's inputs; valid names are "
                             f"{self._input_names}")
        return idx

    def _copy_in(self, idx: int, value) -> None:
        dst = self._inputs[idx]
        src = value.view_numpy() if isinstance(value, NDArray) else value
        if isinstance(src, (bool, int, float)):
            src = np.asarray(src, dtype=dst.dtype)
        src = np.asarray(src)
        if tuple(src.shape) != tuple(dst.shape) or str(src.dtype) != dst.dtype:
            hint = "; cast it with .astype(...)" if tuple(src.shape) == tuple(dst.shape) else ""
            raise InputError(f"input '{self._input_names[idx]}' expects Tensor[{tuple(dst.shape)}, "
                             f"{dst.dtype}], got Tensor[{tuple(src.shape)}, {src.dtype}]{hint}")
        np.copyto(dst.view_numpy(), src)

    def set_input(self, key=None, value=None, **params):
        """Copy `value` into input `key` (name or index); keyword arguments set inputs by name."""
        if key is not None:
            if value is None:
                raise InputError(f"set_input({key!r}): no value given")
            self._copy_in(self._index(key), value)
        for name, val in params.items():
            self._copy_in(self._index(name), val)

    def get_input(self, key, out=None) -> NDArray:
        arr = self._inputs[self._index(key)]
        return arr if out is None else out.copyfrom(arr)

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
                                 f"-D{self.lib.prefix.upper()}_MAX_THREADS; -3: a misaligned buffer)")

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
        if tuple(out.shape) != tuple(arr.shape):
            raise InputError(f"get_output({index}): out has shape {tuple(out.shape)}, the output "
                             f"is {tuple(arr.shape)}")
        return out.copyfrom(arr)

    def benchmark(self, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=0,
                  end_to_end=False, **kwargs) -> BenchmarkResult:
        """Time `run` (repeat x number calls, each repeat at least min_repeat_ms long)."""
        if func_name != "run":
            raise RelayError(f"benchmark: only func_name='run' is supported, got {func_name!r}")
        if kwargs and not end_to_end:
            self.set_input(**kwargs)

        def once():
            if end_to_end:
                self.set_input(**kwargs)
            self.run()
            if end_to_end:
                for arr in self._outputs:
                    arr.numpy()

        once()
        results = []
        for _ in range(int(repeat)):
            n = max(int(number), 1)
            while True:
                start = time.perf_counter()
                for _ in range(n):
                    once()
                elapsed = time.perf_counter() - start
                if elapsed * 1e3 >= (min_repeat_ms or 0) or n >= 1 << 20:
                    break
                n *= 2
            results.append(elapsed / n)
        return BenchmarkResult(results)

    def __getitem__(self, key):
        if not hasattr(self, key) or key.startswith("_"):
            raise RelayError(f"AotModule has no function {key!r}")
        return getattr(self, key)
