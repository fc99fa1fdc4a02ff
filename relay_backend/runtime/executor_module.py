"""ExecutorModule: the input side shared by the graph and AOT executor modules.

Both own one preallocated NDArray per flat model input and copy user values into it, checked
by name, shape and dtype before anything native runs. This base holds that checking and
copying, TVM's `module["set_input"]`-style access, and `benchmark`; each subclass says where
its input arrays live and how it names itself in messages.
"""
import numpy as np

from ..errors import InputError, RelayError
from .benchmark import BenchmarkResult, benchmark_module
from .ndarray import NDArray


class ExecutorModule:
    """Base of GraphModule and AotModule.

    Subclasses set `_input_names` (one per input index) and `_input_index` (name -> index), and
    implement `_input_array(idx)` (the NDArray input `idx` is copied into) and get_num_inputs().
    """

    _module_name = "module"            # "GraphModule has no function 'x'"
    _holder = "the module"             # "input index 7 is out of range: the graph has 2 inputs"
    _inputs_of = "the module's"        # "Could not find 'x' in graph's inputs"

    def get_num_inputs(self) -> int:
        raise NotImplementedError

    def _input_array(self, idx: int) -> NDArray:
        raise NotImplementedError

    def get_input_index(self, name: str) -> int:
        """The index of input `name`, or -1."""
        return self._input_index.get(name, -1)

    def _index(self, key) -> int:
        """The index of input `key` (a name or an index), or an InputError listing the names."""
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not 0 <= int(key) < self.get_num_inputs():
                raise InputError(f"input index {key} is out of range: {self._holder} has "
                                 f"{self.get_num_inputs()} inputs {self._input_names}")
            return int(key)
        idx = self._input_index.get(key, -1)
        if idx < 0:
            raise InputError(f"Could not find '{key}' in {self._inputs_of} inputs; valid names are "
                             f"{self._input_names}")
        return idx

    def _copy_in(self, idx: int, value) -> None:
        """Copy `value` into input `idx` after checking its shape and dtype exactly."""
        dst = self._input_array(idx)
        src = value.view_numpy() if isinstance(value, NDArray) else value
        if isinstance(src, (bool, int, float)):
            src = np.asarray(src, dtype=dst.dtype)
        src = np.asarray(src)
        if tuple(src.shape) != tuple(dst.shape) or str(src.dtype) != dst.dtype:
            hint = "; cast it with .astype(...)" if tuple(src.shape) == tuple(dst.shape) else ""
            raise InputError(f"input '{self._input_names[idx]}' expects Tensor[{tuple(dst.shape)}, "
                             f"{dst.dtype}], got Tensor[{tuple(src.shape)}, {src.dtype}]{hint}")
        np.copyto(dst.view_numpy(), src)

    def get_input(self, key, out=None) -> NDArray:
        """The internal array of input `key` (copied into `out` if given)."""
        arr = self._input_array(self._index(key))
        return arr if out is None else out.copyfrom(arr)

    def benchmark(self, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=0,
                  end_to_end=False, **kwargs) -> BenchmarkResult:
        """Time `run` (repeat x number calls, each repeat at least min_repeat_ms long).

        end_to_end=True also times setting the inputs in kwargs and copying the outputs out.
        """
        return benchmark_module(self, device, func_name, repeat, number, min_repeat_ms, end_to_end, **kwargs)

    def __getitem__(self, key):
        """TVM's module["run"] / ["set_input"] / ... access to the methods."""
        if not hasattr(self, key) or key.startswith("_"):
            raise RelayError(f"{self._module_name} has no function {key!r}")
        return getattr(self, key)


__all__ = ["ExecutorModule"]
