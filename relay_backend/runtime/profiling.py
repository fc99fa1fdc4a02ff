"""Profiles of compiled models: one report type for the graph executor and the VM.

A `ProfileReport` is built from timed kernel calls (`KernelCall`: name, Relay ops inside, start
and duration in microseconds, output shapes, multiply-adds). It aggregates them into one row per
kernel (calls, total and mean time, % of the total, GFLOP/s where the kernel has a MAC count)
and exports them:

    report = gmod.profile(data=x)            # debug_executor.GraphModuleDebug.profile
    print(report)                            # the table, slowest first
    report.csv(); report.json()              # strings (save_csv / save_json write files)
    report.save_chrome_trace("trace.json")   # open in a browser's tracing tool (chrome://tracing
                                             # or Perfetto): one bar per kernel call

Times are wall-clock from time.perf_counter around each native call, so a row includes the
call's small Python overhead; it is what the model costs when run the same way.
"""
import csv
import io
import json
from dataclasses import asdict, dataclass, field

from ..docstrings import shared_parameters

# the parameters of the executors' profile methods, and what they return (shared_parameters
# completes their docstrings)
PROFILE_PARAMETERS = {
    "repeat": ("int", "How many timed runs the report covers (at least 1)."),
    "warmup": ("int", "How many untimed runs come first (lazy set-up, cold caches)."),
}
PROFILE_RESULT = ("report", "ProfileReport", "One row per kernel (the Relay ops fused into it, its output "
                  "shape, calls, time, share of the total, GFLOP/s for matrix products); printable, and "
                  "exportable as CSV, JSON and a Chrome trace.")
# where the save_* methods write
_SAVE_PARAMETERS = {"path": ("str or os.PathLike", "The file to write; an existing file is replaced.")}
TRACE_PID = 1                    # Chrome trace events need a process and thread id
TRACE_TID = 1


@dataclass
class KernelCall:
    """One timed call of one kernel, as a profiler records it.

    Parameters
    ----------
    name : str
        The node's name (graph executor) or the kernel's name (VM).
    kernel : str
        The compiled function's name.
    ops : list of str
        The Relay ops fused into the kernel, in post-order.
    start_us : float
        When the call started, in microseconds from the start of the profiled run.
    duration_us : float
        How long it took, in microseconds.
    shapes : list, optional
        The shapes of its outputs. Defaults to [].
    macs : int, optional
        The multiply-adds of one call (0 for kernels that are not matrix products). Defaults
        to 0.
    """

    name: str                    # node name (graph executor) or kernel name (VM)
    kernel: str                  # the compiled function's name
    ops: list                    # the Relay ops fused into it, post-order
    start_us: float              # from the start of the profiled run
    duration_us: float
    shapes: list = field(default_factory=list)     # output shapes
    macs: int = 0                # multiply-adds of one call (0: not a matrix product)


class ProfileReport:
    """Timed kernel calls of one or more runs of a model, aggregated per kernel; printable, and
    exportable as CSV, JSON or a Chrome trace.

    Parameters
    ----------
    calls : list of KernelCall
        Every timed call of every run.
    executor : str
        The executor that ran them ("graph" or "vm"), named in the report.
    runs : int, optional
        How many runs the calls come from (at least 1). Defaults to 1.
    wall_us : float, optional
        The measured wall time of the runs in microseconds; None (the default) uses the sum of
        the kernel times.
    """

    COLUMNS = ("Name", "Kernel", "Ops", "Calls", "Total(us)", "Mean(us)", "Percent", "GFLOP/s", "Shape")

    def __init__(self, calls, executor: str, runs: int = 1, wall_us: float = None):
        self.calls = list(calls)
        self.executor = executor
        self.runs = max(int(runs), 1)
        self.kernel_us = sum(c.duration_us for c in self.calls)
        self.wall_us = self.kernel_us if wall_us is None else float(wall_us)
        self.rows = self._aggregate()

    def _aggregate(self) -> list:
        rows = {}
        for call in self.calls:
            row = rows.get(call.name)
            if row is None:
                row = rows[call.name] = {"name": call.name, "kernel": call.kernel, "ops": list(call.ops),
                                         "calls": 0, "total_us": 0.0, "shape": call.shapes,
                                         "macs": call.macs}
            row["calls"] += 1
            row["total_us"] += call.duration_us
        total = self.kernel_us or 1e-12
        for row in rows.values():
            row["mean_us"] = row["total_us"] / row["calls"]
            row["percent"] = 100.0 * row["total_us"] / total
            row["gflops"] = (2.0 * row["macs"] / (row["mean_us"] * 1e3)) if row["macs"] and row["mean_us"] else None
        return sorted(rows.values(), key=lambda r: -r["total_us"])

    # -- text
    def _cells(self, row) -> list:
        shape = row["shape"][0] if len(row["shape"]) == 1 else row["shape"]
        return [row["name"], row["kernel"], ",".join(row["ops"]), str(row["calls"]),
                f"{row['total_us']:.2f}", f"{row['mean_us']:.2f}", f"{row['percent']:.2f}",
                "-" if row["gflops"] is None else f"{row['gflops']:.2f}", str(shape)]

    def table(self) -> str:
        """The report as an aligned text table, slowest kernel first, with a total line."""
        body = [list(self.COLUMNS)] + [self._cells(r) for r in self.rows]
        body.append(["Total", "-", "-", str(len(self.calls)), f"{self.kernel_us:.2f}",
                     f"{self.kernel_us / self.runs:.2f}", "100.00", "-", "-"])
        widths = [max(len(line[i]) for line in body) for i in range(len(self.COLUMNS))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in body]
        lines.insert(1, "  ".join("-" * w for w in widths))
        header = (f"{self.executor} profile: {self.runs} run(s), kernels {self.kernel_us / self.runs:.1f} us "
                  f"per run, wall {self.wall_us / self.runs:.1f} us per run")
        return header + "\n" + "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __len__(self) -> int:
        return len(self.rows)

    # -- exports
    def csv(self) -> str:
        """One CSV line per kernel row (the table's columns; Ops joined by ';')."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.COLUMNS)
        for row in self.rows:
            writer.writerow([row["name"], row["kernel"], ";".join(row["ops"]), row["calls"],
                             f"{row['total_us']:.3f}", f"{row['mean_us']:.3f}", f"{row['percent']:.3f}",
                             "" if row["gflops"] is None else f"{row['gflops']:.3f}", row["shape"]])
        return out.getvalue()

    def to_dict(self) -> dict:
        """{"executor", "runs", "kernel_us", "wall_us", "rows": [...], "calls": [...]}."""
        return {"executor": self.executor, "runs": self.runs, "kernel_us": self.kernel_us,
                "wall_us": self.wall_us, "rows": [dict(r) for r in self.rows],
                "calls": [asdict(c) for c in self.calls]}

    def json(self) -> str:
        """The report as indented JSON text (to_dict's contents).

        Returns
        -------
        text : str
            The JSON.
        """
        return json.dumps(self.to_dict(), indent=1)

    def chrome_trace(self) -> dict:
        """The calls as Chrome trace events ("X" complete events, microseconds)."""
        events = [{"name": c.name, "cat": "kernel", "ph": "X", "ts": round(c.start_us, 3),
                   "dur": round(c.duration_us, 3), "pid": TRACE_PID, "tid": TRACE_TID,
                   "args": {"kernel": c.kernel, "ops": ",".join(c.ops), "shapes": str(c.shapes),
                            "macs": c.macs}}
                  for c in self.calls]
        meta = [{"name": "process_name", "ph": "M", "pid": TRACE_PID, "tid": TRACE_TID,
                 "args": {"name": f"relay_backend {self.executor}"}}]
        return {"traceEvents": meta + events, "displayTimeUnit": "ms"}

    @shared_parameters(_SAVE_PARAMETERS)
    def save_csv(self, path) -> None:
        """Write the CSV text of csv() to a file."""
        with open(path, "w", newline="") as f:
            f.write(self.csv())

    @shared_parameters(_SAVE_PARAMETERS)
    def save_json(self, path) -> None:
        """Write the JSON text of json() to a file."""
        with open(path, "w") as f:
            f.write(self.json())

    @shared_parameters(_SAVE_PARAMETERS)
    def save_chrome_trace(self, path) -> None:
        """Write chrome_trace() to a JSON file that chrome://tracing and Perfetto open."""
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)


__all__ = ["KernelCall", "ProfileReport"]
