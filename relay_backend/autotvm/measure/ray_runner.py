"""RayBuilder and RayRunner: the measurement jobs (jobs.py) fanned out over a Ray cluster.

    ray.init(address="auto")                   # or let the builder/runner start a local one
    option = autotvm.measure_option(builder=autotvm.RayBuilder(), runner=autotvm.RayRunner())

Builds run as Ray tasks (num_cpus_per_build CPUs each) and return the library bytes, so a run
may happen on another node than its build; runs take num_cpus_per_run CPUs each (give a
node's CPU count to measure alone on a node), `n_parallel` at a time (default: as many as the
cluster's CPUs allow). A task past its timeout is cancelled (BUILD_TIMEOUT / RUN_TIMEOUT), a
worker that dies is recorded as the candidate's error (COMPILE_HOST / RUNTIME_DEVICE), and
runs are checked against the default config's outputs, as with the local runner. Ray is an
optional dependency: pip install relay_backend[ray].
"""
import os
import time

from ...errors import TuningError
from .jobs import build_job, config_payload, reference_job, run_job, task_payload
from .local import collect_run
from .measure import Builder, MeasureErrorNo, MeasureResult, Runner, error_result, from_build


def _ray():
    try:
        import ray
    except ImportError:
        raise TuningError("RayBuilder / RayRunner need ray: pip install relay_backend[ray]") from None
    if not ray.is_initialized():
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        ray.init(runtime_env={"env_vars": {"PYTHONPATH": package_root}}, include_dashboard=False,
                 log_to_driver=False)
    return ray


def _cluster_slots(ray, cpus_each) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1) // max(cpus_each, 1e-9)))


def _wave(ray, refs, timeout):
    """Wait for `refs` (started together) at most `timeout` seconds; cancel the rest. Returns
    {ref: "ok" | "timeout"}."""
    done, pending = ray.wait(list(refs), num_returns=len(refs), timeout=timeout)
    for ref in pending:
        ray.cancel(ref, force=True)
    return {**{r: "ok" for r in done}, **{r: "timeout" for r in pending}}


class RayBuilder(Builder):
    """Build configs as Ray tasks (see the module doc)."""

    def __init__(self, timeout=10, n_parallel=None, build_kwargs=None, num_cpus_per_build=1):
        super().__init__(timeout, n_parallel or 1, build_kwargs)
        self.ray = _ray()
        self.n_parallel = n_parallel or _cluster_slots(self.ray, num_cpus_per_build)
        self._build = self.ray.remote(num_cpus=num_cpus_per_build, max_retries=0)(build_job)

    def build(self, measure_inputs) -> list:
        ray, results = self.ray, []
        for start in range(0, len(measure_inputs), self.n_parallel):
            batch = measure_inputs[start:start + self.n_parallel]
            refs = [self._build.remote(task_payload(inp.task), config_payload(inp.config), None, True) for inp in batch]
            status = _wave(ray, refs, self.timeout)
            for ref in refs:
                if status[ref] == "timeout":
                    results.append(error_result(MeasureErrorNo.BUILD_TIMEOUT, "",
                                                f"the build took more than {self.timeout} s", self.timeout))
                    continue
                try:
                    results.append(from_build(ray.get(ref)))
                except ray.exceptions.RayError as err:
                    results.append(error_result(MeasureErrorNo.COMPILE_HOST, "", f"the build worker failed: {err}", 0.0))
        return results


class RayRunner(Runner):
    """Time built configs as Ray tasks (see the module doc)."""

    def __init__(self, timeout=10, number=4, repeat=3, min_repeat_ms=0, cooldown_interval=0.1,
                 check_correctness=True, n_parallel=None, num_cpus_per_run=1):
        super().__init__(timeout, n_parallel or 1)
        self.ray = _ray()
        self.n_parallel = n_parallel or _cluster_slots(self.ray, num_cpus_per_run)
        self.number, self.repeat, self.min_repeat_ms = number, repeat, min_repeat_ms
        self.cooldown_interval, self.check_correctness = cooldown_interval, check_correctness
        self._run = self.ray.remote(num_cpus=num_cpus_per_run, max_retries=0)(run_job)
        self._reference_task = self.ray.remote(num_cpus=num_cpus_per_run, max_retries=0)(reference_job)
        self._reference = None

    def set_task(self, task):
        self.task = task
        self._reference = None

    def reference(self):
        """A Ray object holding the task's default outputs (made once per task)."""
        if self.check_correctness and self._reference is None:
            ref = self._reference_task.remote(task_payload(self.task), None, 0, True)
            try:
                self._reference = self.ray.put(self.ray.get(ref, timeout=max(60.0, 6 * self.timeout)))
            except Exception as err:  # noqa: BLE001
                self.ray.cancel(ref, force=True)
                raise TuningError(f"the default config of task {self.task.name} could not be built and run "
                                  f"to check candidates against ({type(err).__name__}: {err})") from None
        return self._reference

    def run(self, measure_inputs, build_results) -> list:
        ray, reference = self.ray, self.reference()
        results = [b if isinstance(b, MeasureResult) else None for b in build_results]
        todo = [k for k, r in enumerate(results) if r is None]
        for start in range(0, len(todo), self.n_parallel):
            wave = todo[start:start + self.n_parallel]
            refs = {k: self._run.remote(build_results[k], reference, self.number, self.repeat, self.min_repeat_ms,
                                        self.cooldown_interval, None) for k in wave}
            began = time.time()
            status = _wave(ray, refs.values(), self.timeout)
            for k, ref in refs.items():
                build = build_results[k]
                if status[ref] == "timeout":
                    results[k] = error_result(MeasureErrorNo.RUN_TIMEOUT, "", f"the run took more than {self.timeout} s",
                                              time.time() - began + build.time_cost)
                    continue
                try:
                    results[k] = collect_run(lambda ref=ref: ray.get(ref), self.timeout, build)
                except ray.exceptions.RayError as err:
                    results[k] = error_result(MeasureErrorNo.RUNTIME_DEVICE, "",
                                              f"the candidate crashed its worker: {type(err).__name__}", build.time_cost)
        return results
