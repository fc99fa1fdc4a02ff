"""GraphModule: runs a graph JSON's kernels over storage planned once (tvm.contrib.graph_executor).

Setup (once per module instance): one aligned pool per storage id, sized as the largest entry
sharing it; every entry is a view into its pool; every kernel node's argument list (input views
then output views) is checked once and bound to a prepared native call. run() then only calls
those closures in node order: no allocation, no argument checks. Inputs are checked by name,
shape and dtype in set_input, before anything native runs; run() refuses to start while an
input was never set (params bound at build time count as set).

Threads: a GraphModule is one set of buffers and serves one thread at a time. Calls from
another thread that could mix the two threads' inputs or outputs raise ExecutionError (see
runtime.thread_guard) instead of returning wrong results. Safe: one GraphModule per thread
(`factory["default"](dev)` is cheap next to a build), a lock held around whole
set_input/run/get_output cycles, or `create_executor("graph", ...).evaluate()`, whose function
is thread-safe. `get_output(i)` without `out` returns the module's own buffer, which the next
run overwrites: copy it (pass `out`, or `.numpy()`) before another run.
"""
import math

import numpy as np

from .. import diagnostics
from ..codegen.kernel_sequence import KernelSequence
from ..errors import InputError, RelayError
from ..runtime import ndarray as _nd
from ..runtime.device import cpu, device as _make_device
from ..runtime.cuda_module import host_function_on_device
from ..runtime.executor_module import ExecutorModule
from ..runtime.ndarray import NDArray
from .graph import CPU_DEVICE_TYPE, CUDA_DEVICE_TYPE, Graph, check_sizes, parse_graph


class GraphModule(ExecutorModule):
    """A graph executor instance (tvm.contrib.graph_executor.GraphModule): set_input, run,
    get_output over storage planned once.

        module = GraphModule(relay.build(mod, "llvm", params=params)["default"](relay.cpu()))
        module.set_input("data", data)
        module.run()
        out = module.get_output(0).numpy()

    Not thread-safe: one thread at a time (see the module docstring); sharing raises
    ExecutionError.

    Parameters
    ----------
    module : GraphModule or str
        What a build factory's factory["default"](device) returned (the usual, TVM-style
        use), or the graph JSON text of a build (then `lib` and `device` are needed too).
    lib : runtime.Module, optional
        The compiled kernels the graph calls, when `module` is graph JSON text. Defaults to
        None.
    device : Device or str, optional
        Where the graph runs, when `module` is graph JSON text; it must be where the kernels
        were built for. Defaults to None (the CPU).
    """

    _module_name, _holder, _inputs_of = "GraphModule", "the graph", "graph's"
    _type_key = "GraphExecutor"

    def __init__(self, module, lib=None, device=None):
        if isinstance(module, GraphModule):     # TVM style: GraphModule(factory["default"](dev))
            self.__dict__.update(module.__dict__)
            self.__dict__.pop("_runtime_module", None)   # `.module` binds to this object
            return
        self.graph: Graph = parse_graph(module)
        self.graph_json = module if isinstance(module, str) else None
        self.lib = lib
        self.device = _make_device(device) if device is not None else cpu(0)
        self._check_device()
        g = self.graph
        self._pools, self._views = self._setup_storage()
        self._init_inputs([g.nodes[nid].name for nid in g.arg_nodes])
        self._node_execs = [(nid, e) for nid in range(len(g.nodes)) if (e := self._setup_exec(nid)) is not None]
        self._execs = [e for _, e in self._node_execs]
        self._runs = None                        # _execs batched (_batched), on the first run

    # ------------------------------------------------------------------ setup
    def _check_device(self):
        """The device must be where the graph's kernels run (device_index; cpu or cuda)."""
        g = self.graph
        wanted = set(g.device_index or [CPU_DEVICE_TYPE])
        lib_type = getattr(self.lib, "type_key", None)
        if lib_type == "cuda":
            wanted = {CUDA_DEVICE_TYPE}
        if wanted != {self.device.device_type}:
            names = sorted({"cuda" if w == CUDA_DEVICE_TYPE else "cpu" for w in wanted})
            raise RelayError(f"the graph's kernels run on {'/'.join(names)} but device {self.device} "
                             f"was given; build for target 'cuda' to run on a GPU, 'llvm' for the CPU")
        if self.lib is not None and not self.lib.runnable and lib_type != "cuda":
            self.lib.get_function(self.lib.function_names[0])        # says why it cannot run here

    def _setup_storage(self):
        g = self.graph
        check_sizes(g)                          # AllocationError naming the entry, before allocating
        nbytes = [int(np.prod(s, dtype=np.int64)) * np.dtype(t).itemsize for s, t in zip(g.shape, g.dltype)]
        pool_bytes = {}
        for eid, (sid, size) in enumerate(zip(g.storage_id, nbytes)):
            pool_bytes[sid] = max(pool_bytes.get(sid, 0), g.offset(eid) + size)
        # float32 words, as TVM's runtime allocates its pools
        pools = {sid: _nd.empty((max(math.ceil(size / 4), 1),), "float32", self.device)
                 for sid, size in sorted(pool_bytes.items())}
        return pools, [self._entry_view(pools, eid) for eid in range(len(g.storage_id))]

    def _entry_view(self, pools, eid: int) -> NDArray:
        """Entry `eid` as a view into its storage's pool at its offset (bytes reinterpreted as
        its dtype; an in-place concatenation's inputs lie inside its output)."""
        g = self.graph
        pool, shape, dtype = pools[g.storage_id[eid]], g.shape[eid], np.dtype(g.dltype[eid])
        start = g.offset(eid)
        if self.device.device_type == CUDA_DEVICE_TYPE:
            return pool.view(start, shape, dtype)
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return NDArray(pool.view_numpy().reshape(-1).view(np.uint8)[start:start + size].view(dtype).reshape(shape),
                       self.device)

    # ------------------------------------------------------------------ share_params
    def _share_input(self, idx: int, array: NDArray) -> None:
        """Input `idx` (and the reshape nops aliasing its storage) now view `array`'s bytes."""
        g = self.graph
        sid = g.storage_id[g.entry_id(g.arg_nodes[idx], 0)]
        self._pools[sid] = array
        for eid, other in enumerate(g.storage_id):
            if other == sid:
                self._views[eid] = self._entry_view(self._pools, eid)

    def _after_share(self) -> None:
        """Kernels were bound to the old input pointers: bind them again."""
        self._node_execs = [(nid, e) for nid in range(len(self.graph.nodes))
                            if (e := self._setup_exec(nid)) is not None]
        self._execs = [e for _, e in self._node_execs]
        self._runs = None

    def _setup_exec(self, nid: int):
        g = self.graph
        node = g.nodes[nid]
        if node.op == "null":
            return None
        args = [self._views[g.entry_id(src, idx)] for src, idx in node.inputs]
        args += [self._views[g.entry_id(nid, k)] for k in range(node.num_outputs)]
        if node.func_name == "__nop" and len(node.inputs) > 1:
            return None          # an in-place concatenation: the producers wrote the slices
        if node.func_name in ("__nop", "__copy"):
            src, dst = args[0], args[-1]
            if node.func_name == "__nop" and src.data_ptr == dst.data_ptr:
                return None
            if self.device.device_type == CUDA_DEVICE_TYPE:
                return lambda: dst.copy_bytes_from(src)
            src_arr, dst_arr = src.view_numpy(), dst.view_numpy()
            return lambda: np.copyto(dst_arr, src_arr.reshape(dst_arr.shape))
        if self.lib is None or not self.lib.has_function(node.func_name, query_imports=True):
            raise RelayError(f"no such function in module: {node.func_name} (graph node {nid} '{node.name}'); "
                             f"the library has {sorted(getattr(self.lib, 'function_names', []))}")
        try:
            function = self.lib.get_function(node.func_name, query_imports=True)
            if function.device_type == CPU_DEVICE_TYPE and self.device.device_type == CUDA_DEVICE_TYPE:
                return host_function_on_device(function, args)     # an external codegen's
            return function.prepare(*args)
        except InputError as err:
            raise RelayError(f"graph node {nid} '{node.name}' does not match its kernel: {err}") from None

    # ------------------------------------------------------------------ inputs
    def _input_array(self, idx: int) -> NDArray:
        return self._views[self.graph.entry_id(self.graph.arg_nodes[idx], 0)]

    def get_input_info(self):
        """The shapes and dtypes of the inputs still to be given (those not set from params).

        Returns
        -------
        info : tuple of dict
            ({name: shape}, {name: dtype}).
        """
        shapes, dtypes = {}, {}
        for name, idx in self._input_index.items():
            if name in self._param_names:
                continue
            view = self._input_array(idx)
            shapes[name], dtypes[name] = view.shape, view.dtype
        return shapes, dtypes

    # ------------------------------------------------------------------ running
    def _execute(self) -> None:
        if diagnostics.wants(2):                 # RB_DEBUG=2: each kernel timed on its own
            for call in self._execs:
                call()
            return
        runs = self._runs
        if runs is None:
            runs = self._runs = _batched(self._execs)
        for run in runs:
            run()

    def get_num_outputs(self) -> int:
        """The number of outputs of the graph.

        Returns
        -------
        count : int
            How many outputs get_output can return.
        """
        return len(self.graph.heads)

    def _output_array(self, idx: int) -> NDArray:
        nid, k = self.graph.heads[idx]
        return self._views[self.graph.entry_id(nid, k)]

    def _output_by_name(self, name: str) -> int:
        """The index of output "<node name>" or "<node name>:<i>"."""
        for i, (nid, k) in enumerate(self.graph.heads):
            node_name = self.graph.nodes[nid].name
            if name in (node_name, f"{node_name}:{k}"):
                return i
        raise InputError(f"no output named {name!r}; outputs are "
                         f"{[f'{self.graph.nodes[n].name}:{k}' for n, k in self.graph.heads]}")

    def get_output_info(self):
        """The shapes and dtypes of the outputs, keyed "<node name>:<output index>".

        Returns
        -------
        info : tuple of dict
            ({name: shape}, {name: dtype}).
        """
        shapes, dtypes = {}, {}
        for nid, k in self.graph.heads:
            view = self._views[self.graph.entry_id(nid, k)]
            key = f"{self.graph.nodes[nid].name}:{k}"
            shapes[key], dtypes[key] = view.shape, view.dtype
        return shapes, dtypes


def _batched(execs: list) -> list:
    """`execs` with every stretch of two or more consecutive prepared native calls replaced by
    one KernelSequence (one native call running them in order); the other calls (copies,
    external and CUDA functions) stay as they are, between the stretches."""
    out, stretch = [], []

    def flush():
        if len(stretch) > 1:
            out.append(KernelSequence([call.native_args for call in stretch], keep=list(stretch)))
        else:
            out.extend(stretch)
        stretch.clear()

    for call in execs:
        if getattr(call, "native_args", None) is not None:
            stretch.append(call)
        else:
            flush()
            out.append(call)
    flush()
    return out


def create(graph_json_str, libmod, device) -> GraphModule:
    """A GraphModule over a graph JSON and its kernels (tvm.contrib.graph_executor.create).

    Parameters
    ----------
    graph_json_str : str
        The graph JSON of a build (factory.get_graph_json()).
    libmod : runtime.Module
        The compiled kernels the graph calls (factory.get_lib()).
    device : Device or list of Device
        Where to run; a list must hold exactly one device (heterogeneous execution is not
        supported).

    Returns
    -------
    module : GraphModule
        The runnable module; its params are not set (use set_input or load_params).
    """
    if isinstance(device, (list, tuple)):
        if len(device) != 1:
            raise RelayError("heterogeneous graph execution is not supported: pass one device")
        device = device[0]
    return GraphModule(graph_json_str, libmod, device)
