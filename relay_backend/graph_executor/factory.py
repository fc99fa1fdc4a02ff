"""GraphExecutorFactoryModule: what `relay_backend.build` returns for the graph executor.

It holds the graph JSON, the compiled kernels (one runtime Module) and the params (p0, p1, ...):
`factory["default"](dev)` creates a GraphModule with the params already set. `export_library`
writes ONE file: the kernels' shared library with the graph JSON and the params blob carried as
sections of the library's checksummed trailer; `relay_backend.runtime.load_module(path)` in any
process gives back a factory (section format and version are validated on load).
"""
import json
import warnings

import numpy as np

from ..errors import RelayError, SerializationError, TargetError
from ..runtime.module import register_artifact_loader
from ..runtime.params import load_param_dict, save_param_dict
from ..target import as_target
from .graph import parse_graph
from .runtime import GraphModule

GRAPH_SECTION = "relay_backend.graph_executor"
PARAMS_SECTION = "relay_backend.graph_params"
FACTORY_FORMAT = "relay_backend.graph_factory"
FACTORY_VERSION = 1


class GraphExecutorFactoryModule:
    """What relay.build returns for the graph executor
    (tvm.relay.backend.executor_factory.GraphExecutorFactoryModule): the graph JSON, the
    kernel library and the params; factory["default"](device) makes a runnable module.

    Parameters
    ----------
    ir_mod : IRModule
        The optimised module the graph was built from.
    target : str or Target
        What the kernels were compiled for.
    graph_json_str : str
        The graph JSON: nodes, their inputs, the storage plan, shapes and dtypes.
    libmod : runtime.Module
        The compiled kernels.
    libmod_name : str, optional
        The name the runnable module is made under (factory[libmod_name](device)). Defaults
        to "default".
    params : dict of str to NDArray, optional
        Values of the graph's param inputs (p0, p1, ...), set on every module the factory
        makes. Defaults to None.
    codegen_result : object, optional
        The in-memory result of code generation (primitive functions, kernel names) kept for
        debugging tools; None for a factory loaded from a file. Defaults to None.
    """

    def __init__(self, ir_mod, target, graph_json_str, libmod, libmod_name="default", params=None,
                 codegen_result=None):
        self.ir_mod = ir_mod
        self.target = as_target(target)
        self.graph_json = graph_json_str
        self.lib = libmod
        self.libmod_name = libmod_name
        self.params = dict(params or {})
        self._codegen = codegen_result
        # planned_bytes: every storage (inputs, params, outputs too); no_reuse_bytes: one storage
        # per entry; intermediate_bytes: what the plan spends on intermediates (AOT's workspace)
        self.planned_bytes, self.no_reuse_bytes, self.intermediate_bytes = \
            _plan_bytes(parse_graph(graph_json_str))
        self._iter_cnt = 0
        self.bound_param_names = frozenset()      # build(params=...) names, see ExecutorModule

    # -- TVM accessors
    def get_graph_json(self) -> str:
        """The graph JSON the executor runs.

        Returns
        -------
        graph_json : str
            Nodes, their inputs, the storage plan, shapes and dtypes.
        """
        return self.graph_json

    def get_executor_config(self) -> str:
        """The executor's configuration, which for the graph executor is its graph JSON (as TVM's).

        Returns
        -------
        graph_json : str
            The graph JSON.
        """
        return self.graph_json

    def get_params(self) -> dict:
        """The values of the graph's param inputs, set on every module the factory makes.

        Returns
        -------
        params : dict of str to NDArray
            A copy of {"p0": value, ...}.
        """
        return dict(self.params)

    def get_lib(self):
        """The compiled kernels.

        Returns
        -------
        lib : runtime.Module or None
            The kernel library; None when the graph calls no kernel.
        """
        return self.lib

    @property
    def primitive_functions(self) -> dict:
        """func_name -> the primitive Relay function it was compiled from (in-memory builds only)."""
        return dict(getattr(self._codegen, "primitive_functions", {}) or {})

    @property
    def memory_plan(self):
        """(steps, entries, plan) of the static memory plan (in-memory builds only): the problem
        the planner solved, which analysis.memory_plan.check_plan proves safe. With in-place
        concatenations their inputs (views inside the output, `_codegen.views`) and the dropped
        concatenation steps are not in it (analysis.memory_views)."""
        if self._codegen is None:
            return None
        return self._codegen.steps, self._codegen.entries, self._codegen.plan

    # -- creating executors
    def create(self, device, debug=False, dump_root=None) -> GraphModule:
        """A runnable module on a device, with the params set: what factory["default"](device) makes.

        Parameters
        ----------
        device : Device
            Where the module runs.
        debug : bool, optional
            If True, a GraphModuleDebug (node-by-node outputs, per-node timing) instead of a
            GraphModule. Defaults to False.
        dump_root : str, optional
            For a debug module: the folder its run() dumps outputs and the graph into (TVM's
            _tvmdbg_device_* layout); None (the default) dumps nothing.

        Returns
        -------
        module : GraphModule or GraphModuleDebug
            The module.
        """
        if debug:
            from .debug_executor import GraphModuleDebug
            gmod = GraphModuleDebug(self.graph_json, self.lib, device, dump_root=dump_root)
        else:
            gmod = GraphModule(self.graph_json, self.lib, device)
        gmod._set_params(self.params)
        gmod.bound_param_names = self.bound_param_names
        return gmod

    def __getitem__(self, key):
        if key == self.libmod_name:
            return lambda device: self.create(device)
        if key == "debug_create":
            def debug_create(name, device, dump_root=None):
                if name != self.libmod_name:
                    raise RelayError(f"debug_create: this factory's module is {self.libmod_name!r}, not {name!r}")
                return self.create(device, debug=True, dump_root=dump_root)
            return debug_create
        if key in ("get_graph_json", "get_params", "get_lib"):
            return getattr(self, key)
        raise RelayError(f"the graph executor factory has no function {key!r}; use "
                         f"factory[{self.libmod_name!r}](device) or factory['debug_create']"
                         f"({self.libmod_name!r}, device)")

    def __iter__(self):
        warnings.warn("legacy graph executor behavior of producing json / lib / params will be removed "
                      "in the next release. Please see documents of tvm.contrib.graph_executor.GraphModule "
                      "for the new recommended usage.", DeprecationWarning, stacklevel=2)
        return iter((self.graph_json, self.lib, self.params))

    # -- export
    def export_library(self, file_name, fcompile=None, addons=None, **kwargs) -> str:
        """Write the kernels, the graph JSON and the params as one library file, which
        runtime.load_module reads back as a factory.

        Parameters
        ----------
        file_name : str or os.PathLike
            The file to write (a shared library, .so).
        fcompile : callable, optional
            Replaces the link step, as in TVM: fcompile(path, [object files]). Defaults to None.
        addons : list, optional
            Accepted for TVM's signature; extra files to link are not supported. Defaults to None.
        **kwargs
            Passed on to runtime.Module.export_library (e.g. cc=, the compiler that links).

        Returns
        -------
        path : str
            The path written.
        """
        if self.lib is None:
            raise SerializationError("this graph has no kernels to export (main only returns inputs or "
                                     "constants); nothing needs compiling")
        header = json.dumps({"format": FACTORY_FORMAT, "version": FACTORY_VERSION,
                             "module_name": self.libmod_name, "target": str(self.target),
                             "graph_json": self.graph_json,
                             "bound_params": sorted(self.bound_param_names)}).encode()
        return self.lib.export_library(file_name, fcompile, sections={
            GRAPH_SECTION: header, PARAMS_SECTION: save_param_dict(self.params)}, **kwargs)

    def __repr__(self) -> str:
        return (f"<GraphExecutorFactoryModule {self.libmod_name!r}: {len(self.params)} params, "
                f"planned {self.planned_bytes} B (no reuse {self.no_reuse_bytes} B)>")


def _plan_bytes(graph) -> tuple:
    """(bytes allocated with the graph's storage ids, bytes without any reuse, bytes of the
    storages that hold intermediates only).

    The last counts, per storage holding no input or param, its largest intermediate entry (a
    node output that is not a head): the memory the plan spends on temporaries, comparable with
    the AOT executor's workspace (whose outputs and inputs are the caller's buffers).
    """
    sizes, pools, temps, pinned = [], {}, {}, set()
    heads = {graph.entry_id(nid, k) for nid, k in graph.heads}
    for eid, (sid, shape, dtype) in enumerate(zip(graph.storage_id, graph.shape, graph.dltype)):
        nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
        sizes.append(nbytes)
        pools[sid] = max(pools.get(sid, 0), nbytes)
    for nid, node in enumerate(graph.nodes):
        for k in range(node.num_outputs):
            eid = graph.entry_id(nid, k)
            sid = graph.storage_id[eid]
            if node.op == "null":
                pinned.add(sid)
            elif eid not in heads:
                temps[sid] = max(temps.get(sid, 0), sizes[eid])
    return (sum(pools.values()), sum(sizes),
            sum(nbytes for sid, nbytes in temps.items() if sid not in pinned))


def _load_factory(module, sections) -> GraphExecutorFactoryModule:
    """The load_module hook: a library carrying a graph section becomes a factory again."""
    try:
        header = json.loads(sections[GRAPH_SECTION].decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise SerializationError(f"load_module: the graph executor section is unreadable: "
                                 f"{str(err)[:200]}") from None
    if not isinstance(header, dict) or header.get("format") != FACTORY_FORMAT:
        raise SerializationError(f"load_module: the graph executor section is not {FACTORY_FORMAT}")
    if header.get("version") != FACTORY_VERSION:
        raise SerializationError(f"load_module: graph executor section version {header.get('version')!r}; "
                                 f"this build reads {FACTORY_VERSION}")
    fields = {"graph_json": header.get("graph_json"), "target": header.get("target", "llvm"),
              "module_name": header.get("module_name", "default")}
    for key, value in fields.items():
        if not isinstance(value, str):
            raise SerializationError(f"load_module: the graph executor section's {key!r} must be a str, "
                                     f"got {str(value)[:60]}")
    if PARAMS_SECTION not in sections:
        raise SerializationError("load_module: the library has a graph but no params section")
    params = load_param_dict(sections[PARAMS_SECTION])
    try:
        as_target(fields["target"])
    except TargetError as err:
        raise SerializationError(f"load_module: the graph executor section's target "
                                 f"{fields['target'][:80]!r} does not parse: {err}") from None
    factory = GraphExecutorFactoryModule(None, fields["target"], fields["graph_json"], module,
                                         fields["module_name"], params)
    bound = header.get("bound_params", [])
    if isinstance(bound, list) and all(isinstance(name, str) for name in bound):
        factory.bound_param_names = frozenset(bound)
    return factory


register_artifact_loader(GRAPH_SECTION, _load_factory)
