"""The debug graph executor: per-node timings, every intermediate output, layer-by-layer checks.

    gmod = debug_executor.create(graph_json, lib, dev)     # or factory["debug_create"]("default", dev)
    report = gmod.run(data=x)        # DebugReport: one row per kernel node, slowest first
    print(report); report.csv()
    gmod.dump_outputs("acts.npz")    # every node output, keyed "<node name>:<index>"
    profile = gmod.profile(data=x)   # runtime.profiling.ProfileReport: Relay ops, %, GFLOP/s,
    profile.save_chrome_trace("trace.json")   # CSV / JSON / Chrome trace exports

`compare_with_interpreter(factory, inputs)` re-runs each fused function in the reference
interpreter on the inputs that node actually received, so the first wrong kernel is named.
"""
import json
import os
import time

import numpy as np

from ..ir.module import IRModule
from ..docstrings import shared_parameters
from ..runtime.benchmark import TIMING_PARAMETERS, time_per_call
from ..runtime.params import save_param_dict
from ..runtime.profiling import PROFILE_PARAMETERS, PROFILE_RESULT, KernelCall, ProfileReport
from .runtime import GraphModule


class DebugReport:
    """Per-node timing rows of a debug run (TVM's debug table): str() is the table, csv() the
    same as CSV.

    Parameters
    ----------
    rows : list of dict
        One row per kernel node: name, func_name, ops, time_us, shape, num_inputs,
        num_outputs and measurements.
    sort_by_time : bool, optional
        If True (the default) the slowest node comes first; if False, node order is kept.
    """

    COLUMNS = ("Node Name", "Fused Function", "Ops", "Time(us)", "Time(%)", "Shape", "Inputs", "Outputs",
               "Measurements(us)")

    def __init__(self, rows, sort_by_time: bool = True):
        total = sum(r["time_us"] for r in rows) or 1e-12
        for r in rows:
            r["percent"] = 100.0 * r["time_us"] / total
        self.rows = sorted(rows, key=lambda r: -r["time_us"]) if sort_by_time else list(rows)
        self.total_us = sum(r["time_us"] for r in rows)

    def _cells(self, r) -> list:
        return [r["name"], r["func_name"], r["ops"], f"{r['time_us']:.3f}", f"{r['percent']:.3f}",
                str(r["shape"]), str(r["num_inputs"]), str(r["num_outputs"]),
                "[" + ", ".join(f"{m:.3f}" for m in r["measurements"]) + "]"]

    def table(self) -> list:
        """The report's rows as cells (the COLUMNS), with a closing Total_time row.

        Returns
        -------
        rows : list of list of str
            One list of cells per node, then the total.
        """
        rows = [self._cells(r) for r in self.rows]
        rows.append(["Total_time", "-", "-", f"{self.total_us:.3f}", "-", "-", "-", "-", "-"])
        return rows

    def __str__(self) -> str:
        rows = [list(self.COLUMNS)] + self.table()
        widths = [max(len(row[i]) for row in rows) for i in range(len(self.COLUMNS))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def csv(self) -> str:
        """The report as CSV text: a header row (COLUMNS), then the rows of table().

        Returns
        -------
        text : str
            The CSV, one line per row.
        """
        def quote(c):
            return f'"{c}"' if ("," in c or '"' in c) else c
        return "\n".join(",".join(quote(c.replace('"', "'")) for c in row)
                         for row in [list(self.COLUMNS)] + self.table()) + "\n"

    def __len__(self) -> int:
        return len(self.rows)


class GraphModuleDebug(GraphModule):
    """A GraphModule whose run() times every kernel node and keeps every node's outputs
    (tvm.contrib.debugger.debug_executor.GraphModuleDebug).

    Parameters
    ----------
    graph_json : str
        The graph JSON of a build.
    lib : runtime.Module
        The compiled kernels the graph calls.
    device : Device or str
        Where the graph runs.
    dump_root : str, optional
        A folder to write each node's outputs to, as TVM's debugger does. Defaults to None
        (nothing written).
    """

    def __init__(self, graph_json, lib, device, dump_root=None):
        super().__init__(graph_json, lib, device)
        self.dump_root = dump_root
        self._outputs = {}

    def _node_outputs(self, nid: int) -> dict:
        g = self.graph
        return {f"{g.nodes[nid].name}:{k}": self._views[g.entry_id(nid, k)].numpy()
                for k in range(g.nodes[nid].num_outputs)}

    def run_node_by_node(self, **inputs) -> dict:
        """Run the graph once, copying each node's outputs right after it runs."""
        with self._guard.call("run_node_by_node") as me:
            self._begin_run(me, inputs)
            g = self.graph
            outputs = {}
            for nid in g.arg_nodes:
                outputs.update(self._node_outputs(nid))
            execs = dict(self._node_execs)
            for nid in range(len(g.nodes)):
                if g.nodes[nid].op == "null":
                    continue
                if nid in execs:
                    execs[nid]()
                outputs.update(self._node_outputs(nid))
            self._guard.after_run(me)
        self._outputs = outputs
        return outputs

    @shared_parameters(TIMING_PARAMETERS)
    def run(self, number=10, repeat=1, min_repeat_ms=0, sort_by_time=True, **inputs) -> DebugReport:
        """Run the graph node by node, keeping every node's outputs (debug_get_output, dump_outputs),
        then time each kernel node on its own.

        Parameters
        ----------
        sort_by_time : bool, optional
            If True (the default), the report lists the slowest node first; if False, in node
            order.
        **inputs
            Inputs set by name first.

        Returns
        -------
        report : DebugReport
            One row per kernel node: its time per call, share of the total, shape and fused ops.
        """
        with self._guard.call("run"):
            self.run_node_by_node(**inputs)
            rows = self._time_nodes(number, repeat, min_repeat_ms)
            # timing re-ran single nodes over reused storage: restore every output with a clean run
            super().run()
        if self.dump_root:
            self._dump(self.dump_root)
        return DebugReport(rows, sort_by_time)

    def _time_nodes(self, number, repeat, min_repeat_ms) -> list:
        """One DebugReport row per kernel node: its measured microseconds per call."""
        g = self.graph
        timed = dict(self._node_execs)
        rows = []
        for nid, node in enumerate(g.nodes):
            if node.op == "null":
                continue
            call = timed.get(nid)
            measurements = [self._time(call, number, min_repeat_ms) for _ in range(max(int(repeat), 1))] \
                if call is not None else [0.0]
            shapes = [list(g.shape[g.entry_id(nid, k)]) for k in range(node.num_outputs)]
            rows.append({"name": node.name, "func_name": node.func_name,
                         "ops": node.attrs.get("relay_ops", node.func_name),
                         "time_us": float(np.mean(measurements)), "measurements": measurements,
                         "shape": shapes[0] if len(shapes) == 1 else shapes,
                         "num_inputs": len(node.inputs), "num_outputs": node.num_outputs})
        return rows

    @shared_parameters(PROFILE_PARAMETERS, PROFILE_RESULT)
    def profile(self, repeat: int = 1, warmup: int = 1, **inputs) -> ProfileReport:
        """Time every kernel node over whole runs of the graph: `warmup` untimed runs, then `repeat`
        timed ones.

        Parameters
        ----------
        **inputs
            Inputs set by name first, as in run().
        """
        described = [(nid, call, self._describe_node(nid)) for nid, call in self._node_execs]
        calls = []
        with self._guard.call("profile") as me:
            self._begin_run(me, inputs)
            for _ in range(max(int(warmup), 0)):
                self._execute()
            origin = time.perf_counter()
            for _ in range(max(int(repeat), 1)):
                for nid, call, info in described:
                    start = time.perf_counter()
                    call()
                    end = time.perf_counter()
                    calls.append(KernelCall(start_us=(start - origin) * 1e6, duration_us=(end - start) * 1e6,
                                            **info))
            wall_us = (time.perf_counter() - origin) * 1e6
            self._guard.after_run(me)
        return ProfileReport(calls, "graph", max(int(repeat), 1), wall_us)

    def _describe_node(self, nid: int) -> dict:
        """KernelCall fields that do not change between runs: names, ops, shapes, MACs."""
        g = self.graph
        node = g.nodes[nid]
        ops = [op for op in node.attrs.get("relay_ops", "").split(",") if op] or [node.func_name]
        macs = node.attrs.get("mac_count", "0")
        return {"name": node.name, "kernel": node.func_name, "ops": ops,
                "shapes": [list(g.shape[g.entry_id(nid, k)]) for k in range(node.num_outputs)],
                "macs": int(macs) if macs.isdigit() else 0}

    @staticmethod
    def _time(call, number, min_repeat_ms) -> float:
        """Microseconds per call of one node's kernel (runtime.benchmark's batch rule)."""
        return time_per_call(call, number, min_repeat_ms) * 1e6

    def debug_get_output(self, node_name: str, index: int = 0) -> np.ndarray:
        """One output of one node, as captured by the last node-by-node run (made now if there was
        none).

        Parameters
        ----------
        node_name : str
            The node's name in the graph JSON, e.g. "tvmgen_default_fused_nn_conv2d".
        index : int, optional
            Which output of the node. Defaults to 0.

        Returns
        -------
        value : numpy.ndarray
            The captured output.
        """
        if not self._outputs:
            self.run_node_by_node()
        return self._outputs[f"{node_name}:{index}"]

    def dump_outputs(self, path) -> str:
        """Write the outputs of every node of the last node-by-node run (made now if there was none)
        to one .npz file, under keys "<node name>:<output index>".

        Parameters
        ----------
        path : str or os.PathLike
            The file to write; ".npz" is added when it does not end so (as numpy.savez does).

        Returns
        -------
        path : str
            The path of the written file.
        """
        if not self._outputs:
            self.run_node_by_node()
        path = os.fspath(path)
        np.savez(path, **self._outputs)
        return path if path.endswith(".npz") else path + ".npz"

    def _dump(self, root) -> None:
        folder = os.path.join(root, f"_tvmdbg_device_{self.device.name.upper()}_{self.device.device_id}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "output_tensors.params"), "wb") as f:
            f.write(save_param_dict(self._outputs))
        g = self.graph
        nodes = []
        for nid, node in enumerate(g.nodes):
            eid = g.entry_id(nid, 0)
            nodes.append({"op": "param" if node.op == "null" else node.func_name, "name": node.name,
                          "inputs": [g.nodes[src].name for src, _ in node.inputs],
                          "attrs": {**node.attrs, "T": f"type: {g.dltype[eid]}"},
                          "shape": list(g.shape[eid])})
        with open(os.path.join(folder, "_tvmdbg_graph_dump.json"), "w") as f:
            json.dump({"nodes": nodes, "arg_nodes": g.arg_nodes, "heads": [list(h) + [0] for h in g.heads],
                       "node_row_ptr": g.node_row_ptr}, f, indent=1)


def create(graph_json_str, libmod, device, dump_root=None) -> GraphModuleDebug:
    """A debug GraphModule (tvm.contrib.debugger.debug_executor.create).

    Parameters
    ----------
    graph_json_str : str
        The graph JSON of a build.
    libmod : runtime.Module
        The compiled kernels the graph calls.
    device : Device or list of Device
        Where to run (the first of a list).
    dump_root : str, optional
        A folder to write each node's outputs to. Defaults to None.

    Returns
    -------
    module : GraphModuleDebug
        The module; its params are not set.
    """
    if isinstance(device, (list, tuple)):
        device = device[0]
    return GraphModuleDebug(graph_json_str, libmod, device, dump_root=dump_root)


def compare_with_interpreter(factory, inputs: dict, device=None, rtol=1e-5, atol=1e-5) -> list:
    """Check every kernel node of a build against the reference interpreter, each on the
    inputs that node actually received.

    Parameters
    ----------
    factory : GraphExecutorFactoryModule
        An in-memory build (it knows the primitive functions; a factory loaded from a file
        does not).
    inputs : dict of str to numpy.ndarray
        The model's inputs by name.
    device : Device or str, optional
        Where to run the build. Defaults to None (the CPU).
    rtol : float, optional
        The relative tolerance of the comparison. Defaults to 1e-5.
    atol : float, optional
        The absolute tolerance of the comparison. Defaults to 1e-5.

    Returns
    -------
    rows : list of dict
        One row per compared node, in node order: {"name", "func_name", "max_abs_err",
        "ok"}; the first row with ok=False is the first wrong kernel.
    """
    from ..interpreter.evaluator import Interpreter
    from ..executor import flatten_value
    prims = factory.primitive_functions
    gmod = factory.create(device if device is not None else "cpu", debug=True)
    captured = gmod.run_node_by_node(**inputs)
    g = gmod.graph
    interp = Interpreter(IRModule())
    rows = []
    for node in g.nodes:
        prim = prims.get(node.func_name)
        if node.op == "null" or prim is None:
            continue
        args = [captured[f"{g.nodes[src].name}:{idx}"] for src, idx in node.inputs]
        want = interp.evaluate(prim)(*_regroup(prim, args))
        want = [w.numpy() for w in flatten_value(want)]
        got = [captured[f"{node.name}:{k}"] for k in range(node.num_outputs)]
        err = max((float(np.max(np.abs(a.astype("float64") - b.astype("float64")))) if a.size else 0.0)
                  for a, b in zip(got, want))
        ok = all(a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
                 for a, b in zip(got, want))
        rows.append({"name": node.name, "func_name": node.func_name, "max_abs_err": err, "ok": ok})
    return rows


def _regroup(prim, flat: list) -> list:
    """Group flattened graph inputs back into the primitive function's (possibly tuple) params."""
    from ..runtime.container import tuple_object
    from .codegen import flatten_tensor_types
    it = iter(flat)
    args = []
    for p in prim.params:
        n = len(flatten_tensor_types(p.checked_type, p))
        fields = [next(it) for _ in range(n)]
        args.append(fields[0] if n == 1 and not hasattr(p.checked_type, "fields") else tuple_object(fields))
    return args
