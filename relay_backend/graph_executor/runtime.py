"""GraphModule: runs a graph JSON's kernels over storage planned once (tvm.contrib.graph_executor).

Setup (once per module instance): one aligned pool per storage id, sized as the largest entry
sharing it; every entry is a view into its pool; every kernel node's argument list (input views
then output views) is checked once and bound to a prepared native call. run() then only calls
those closures in node order: no allocation, no argument checks. Inputs are checked by name,
shape and dtype in set_input, before anything native runs.
"""
import math

import numpy as np

from ..errors import InputError, RelayError
from ..runtime import ndarray as _nd
from ..runtime.device import cpu, device as _make_device
from ..runtime.executor_module import ExecutorModule
from ..runtime.ndarray import NDArray
from ..runtime.params import load_param_dict
from .graph import Graph, check_sizes, parse_graph


class GraphModule(ExecutorModule):
    """A graph executor instance: set_input / run / get_output over preallocated storage."""

    _module_name, _holder, _inputs_of = "GraphModule", "the graph", "graph's"

    def __init__(self, module, lib=None, device=None):
        if isinstance(module, GraphModule):     # TVM style: GraphModule(factory["default"](dev))
            self.__dict__.update(module.__dict__)
            return
        self.graph: Graph = parse_graph(module)
        self.graph_json = module if isinstance(module, str) else None
        self.lib = lib
        self.device = _make_device(device) if device is not None else cpu(0)
        if self.device.device_type != 1:
            raise RelayError(f"the graph executor runs llvm kernels on cpu, got device {self.device}")
        self._param_names = set()
        g = self.graph
        self._input_names = [g.nodes[nid].name for nid in g.arg_nodes]
        self._input_index = {name: i for i, name in enumerate(self._input_names)}
        self._pools, self._views = self._setup_storage()
        self._node_execs = [(nid, e) for nid in range(len(g.nodes)) if (e := self._setup_exec(nid)) is not None]
        self._execs = [e for _, e in self._node_execs]

    # ------------------------------------------------------------------ setup
    def _setup_storage(self):
        g = self.graph
        check_sizes(g)                          # AllocationError naming the entry, before allocating
        nbytes = [int(np.prod(s, dtype=np.int64)) * np.dtype(t).itemsize for s, t in zip(g.shape, g.dltype)]
        pool_bytes = {}
        for sid, size in zip(g.storage_id, nbytes):
            pool_bytes[sid] = max(pool_bytes.get(sid, 0), size)
        # float32 words, as TVM's runtime allocates its pools
        pools = {sid: _nd.empty((max(math.ceil(size / 4), 1),), "float32", self.device).view_numpy().view(np.uint8)
                 for sid, size in sorted(pool_bytes.items())}
        views = []
        for sid, size, shape, dtype in zip(g.storage_id, nbytes, g.shape, g.dltype):
            arr = pools[sid][:size].view(np.dtype(dtype)).reshape(shape)
            views.append(NDArray(arr, self.device))
        return pools, views

    def _setup_exec(self, nid: int):
        g = self.graph
        node = g.nodes[nid]
        if node.op == "null":
            return None
        args = [self._views[g.entry_id(src, idx)] for src, idx in node.inputs]
        args += [self._views[g.entry_id(nid, k)] for k in range(node.num_outputs)]
        if node.func_name in ("__nop", "__copy"):
            src, dst = args[0], args[-1]
            if node.func_name == "__nop" and src.data_ptr == dst.data_ptr:
                return None
            src_arr, dst_arr = src.view_numpy(), dst.view_numpy()
            return lambda: np.copyto(dst_arr, src_arr.reshape(dst_arr.shape))
        if self.lib is None or node.func_name not in self.lib:
            raise RelayError(f"no such function in module: {node.func_name} (graph node {nid} '{node.name}'); "
                             f"the library has {sorted(getattr(self.lib, 'function_names', []))}")
        try:
            return self.lib[node.func_name].prepare(*args)
        except InputError as err:
            raise RelayError(f"graph node {nid} '{node.name}' does not match its kernel: {err}") from None

    # ------------------------------------------------------------------ inputs
    def _input_array(self, idx: int) -> NDArray:
        return self._views[self.graph.entry_id(self.graph.arg_nodes[idx], 0)]

    def set_input(self, key=None, value=None, **params):
        """Copy `value` into input `key` (name or index); keyword params are copied largest-first."""
        if key is not None:
            self._copy_in(self._index(key), value)
        for name in sorted(params, key=lambda k: -int(np.prod(np.shape(params[k])))):
            self._copy_in(self._index(name), params[name])

    def _set_params(self, params: dict) -> None:
        """Set graph params by name, skipping names that are not inputs (the factory's rule)."""
        for name in sorted(params, key=lambda k: -int(np.prod(np.shape(params[k])))):
            idx = self._input_index.get(name, -1)
            if idx >= 0:
                self._copy_in(idx, params[name])
                self._param_names.add(name)

    def load_params(self, params_bytes) -> None:
        """Set inputs from a save_param_dict blob (names that are not inputs are ignored)."""
        self._set_params(load_param_dict(params_bytes))     # it checks the type and names it

    def get_num_inputs(self) -> int:
        return len(self.graph.arg_nodes)

    def get_input_info(self):
        """({name: shape}, {name: dtype}) of the inputs not set as params."""
        shapes, dtypes = {}, {}
        for name, idx in self._input_index.items():
            if name in self._param_names:
                continue
            view = self._input_array(idx)
            shapes[name], dtypes[name] = view.shape, view.dtype
        return shapes, dtypes

    # ------------------------------------------------------------------ running
    def run(self, **inputs) -> None:
        """Set `inputs` (by name), then run every kernel in node order."""
        if inputs:
            self.set_input(**inputs)
        for call in self._execs:
            call()

    def get_num_outputs(self) -> int:
        return len(self.graph.heads)

    def _output_view(self, index) -> NDArray:
        heads = self.graph.heads
        if isinstance(index, str):              # "<node name>" or "<node name>:<i>"
            for nid, k in heads:
                name = self.graph.nodes[nid].name
                if index in (name, f"{name}:{k}"):
                    return self._views[self.graph.entry_id(nid, k)]
            raise InputError(f"no output named {index!r}; outputs are "
                             f"{[f'{self.graph.nodes[n].name}:{k}' for n, k in heads]}")
        if not 0 <= int(index) < len(heads):
            raise InputError(f"output index {index} is out of range: the graph has {len(heads)} outputs")
        nid, k = heads[int(index)]
        return self._views[self.graph.entry_id(nid, k)]

    def get_output(self, index, out=None) -> NDArray:
        """Output `index`: the internal array (overwritten by the next run) or a copy into `out`."""
        view = self._output_view(index)
        if out is None:
            return view
        return _check_out(index, out, view).copyfrom(view)

    def get_output_info(self):
        shapes, dtypes = {}, {}
        for nid, k in self.graph.heads:
            view = self._views[self.graph.entry_id(nid, k)]
            key = f"{self.graph.nodes[nid].name}:{k}"
            shapes[key], dtypes[key] = view.shape, view.dtype
        return shapes, dtypes


def _check_out(index, out, arr: NDArray) -> NDArray:
    """`out` if it is an NDArray of `arr`'s shape and dtype, else InputError (get_output's rule)."""
    want = f"Tensor[{tuple(arr.shape)}, {arr.dtype}]"
    if not isinstance(out, NDArray):
        raise InputError(f"get_output({index!r}, out): out must be an NDArray ({want}, e.g. "
                         f"relay_backend.nd.empty({tuple(arr.shape)}, {arr.dtype!r})), got {type(out).__name__}")
    if tuple(out.shape) != tuple(arr.shape) or str(out.dtype) != str(arr.dtype):
        raise InputError(f"get_output({index!r}, out): out is Tensor[{tuple(out.shape)}, {out.dtype}], "
                         f"but the output is {want}")
    return out


def create(graph_json_str, libmod, device) -> GraphModule:
    """A GraphModule over `graph_json_str` with kernels from `libmod` on `device`."""
    if isinstance(device, (list, tuple)):
        if len(device) != 1:
            raise RelayError("heterogeneous graph execution is not supported: pass one device")
        device = device[0]
    return GraphModule(graph_json_str, libmod, device)
