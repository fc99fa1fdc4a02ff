"""Threads: every create_executor(...).evaluate() closure and the VM are safe to call from many
threads at once; a GraphModule or AotModule shared between threads raises instead of returning
another thread's results. Each result is checked against numpy."""
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import ExecutionError
from relay_backend.runtime.thread_guard import ThreadUseGuard

pytestmark = pytest.mark.compile
N = 256
THREADS, ITERATIONS = 4, 40


def _model():
    x = relay.var("x", shape=(N,))
    return relay.IRModule.from_expr(relay.Function([x], relay.add(relay.multiply(relay.exp(x), relay.const(2.0)), x)))


def _expected(x):
    return np.exp(x) * 2 + x


def _hammer(work):
    """Run `work(x) -> numpy result` from THREADS threads at once, ITERATIONS times each, on
    distinct inputs. Returns (wrong results, ExecutionErrors); any other exception is re-raised."""
    wrong, refused, unexpected = [], [], []
    barrier = threading.Barrier(THREADS)

    def body(seed):
        rng = np.random.default_rng(seed)
        barrier.wait()
        for _ in range(ITERATIONS):
            x = rng.standard_normal(N).astype("float32")
            try:
                out = work(x)
            except ExecutionError as err:
                refused.append(str(err))
                continue
            except Exception as err:  # noqa: BLE001 - reported to the main thread below
                unexpected.append(err)
                return
            if not np.allclose(out, _expected(x), rtol=1e-5, atol=1e-5):
                wrong.append(float(np.max(np.abs(out - _expected(x)))))

    threads = [threading.Thread(target=body, args=(seed,)) for seed in range(THREADS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)          # switch threads often: interleavings become likely
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    if unexpected:
        raise unexpected[0]
    return wrong, refused


@pytest.mark.parametrize("kind", ["debug", "graph", "vm", "aot"])
def test_evaluate_closure_is_thread_safe(kind):
    run = relay.create_executor(kind, mod=_model()).evaluate()
    wrong, refused = _hammer(lambda x: run(x).numpy())
    assert wrong == [] and refused == []


def test_debug_executor_deep_recursion_beside_other_threads():
    """The interpreter raises the recursion limit while it runs; a short call in another thread
    must not put it back while a deep recursion is still running."""
    from relay_backend.ir import Call, Function, If, Let, TensorType, Var, const, var
    from relay_backend.op import tensor as T
    count = Var("count")
    n = var("n", shape=(), dtype="int32")
    fn = Function([n], If(T.equal(n, const(0)), const(0),
                          T.add(const(1), Call(count, [T.subtract(n, const(1))]))), TensorType((), "int32"))
    deep = relay.create_executor("debug").evaluate(Function([n], Let(count, fn, Call(count, [n]))))
    small = relay.create_executor("debug", mod=_model()).evaluate()
    stop = threading.Event()

    def churn():
        x = np.ones(N, "float32")
        while not stop.is_set():
            small(x)

    churners = [threading.Thread(target=churn) for _ in range(2)]
    for t in churners:
        t.start()
    try:
        for _ in range(3):
            assert int(deep(np.int32(600)).numpy()) == 600
    finally:
        stop.set()
        for t in churners:
            t.join()


def test_virtual_machine_shared_between_threads():
    from relay_backend import vm as relay_vm
    machine = relay_vm.VirtualMachine(relay_vm.compile(_model(), target="llvm"), relay.cpu(0))
    wrong, refused = _hammer(lambda x: machine.run(x).numpy())
    assert wrong == [] and refused == []

    def stateful(x):       # set_input / invoke_stateful / get_outputs keep per-thread state
        machine.set_input("main", x)
        machine.invoke_stateful("main")
        return machine.get_outputs()[0].numpy()
    wrong, refused = _hammer(stateful)
    assert wrong == [] and refused == []
    # the interleaving that hammering rarely hits: each thread still sees its own input and output
    first, second = np.full(N, 1.0, "float32"), np.full(N, 2.0, "float32")
    with ThreadPoolExecutor(1) as thread_a, ThreadPoolExecutor(1) as thread_b:
        thread_a.submit(machine.set_input, "main", first).result()
        thread_b.submit(machine.set_input, "main", second).result()
        thread_a.submit(machine.invoke_stateful, "main").result()
        thread_b.submit(machine.invoke_stateful, "main").result()
        out_a = thread_a.submit(lambda: machine.get_outputs()[0].numpy()).result()
        out_b = thread_b.submit(lambda: machine.get_outputs()[0].numpy()).result()
    np.testing.assert_allclose(out_a, _expected(first), rtol=1e-5)
    np.testing.assert_allclose(out_b, _expected(second), rtol=1e-5)


@pytest.fixture(scope="module", params=["graph", "aot"])
def factory(request):
    return relay.build(_model(), executor=request.param)


def test_shared_module_never_returns_another_threads_result(factory):
    module = factory["default"](relay.cpu(0))

    def cycle(x):
        out = relay.nd.empty((N,))
        module.set_input("x", x)
        module.run()
        return module.get_output(0, out).numpy()
    wrong, refused = _hammer(cycle)
    assert wrong == []
    assert all("thread" in msg and "factory['default'](device)" in msg for msg in refused), refused[:3]


def test_overwritten_input_raises_in_the_thread_that_set_it(factory):
    module = factory["default"](relay.cpu(0))
    first, second = np.full(N, 1.0, "float32"), np.full(N, 2.0, "float32")
    with ThreadPoolExecutor(1) as thread_a, ThreadPoolExecutor(1) as thread_b:
        thread_a.submit(module.set_input, "x", first).result()
        thread_b.submit(module.set_input, "x", second).result()
        with pytest.raises(ExecutionError, match=r"input 'x'.*overwritten.*thread"):
            thread_a.submit(module.run).result()
        thread_b.submit(module.run).result()
        out = thread_b.submit(lambda: module.get_output(0).numpy()).result()
        np.testing.assert_allclose(out, _expected(second), rtol=1e-5)
        # after its error, thread a starts over and gets its own result
        thread_a.submit(module.set_input, "x", first).result()
        thread_a.submit(module.run).result()
        out = thread_a.submit(lambda: module.get_output(0).numpy()).result()
        np.testing.assert_allclose(out, _expected(first), rtol=1e-5)


def test_outputs_overwritten_by_another_threads_run_raise(factory):
    module = factory["default"](relay.cpu(0))
    first, second = np.full(N, 1.0, "float32"), np.full(N, 2.0, "float32")
    with ThreadPoolExecutor(1) as thread_a, ThreadPoolExecutor(1) as thread_b:
        thread_a.submit(module.run, x=first).result()
        thread_b.submit(module.run, x=second).result()
        with pytest.raises(ExecutionError, match=r"outputs.*overwritten by a run in thread"):
            thread_a.submit(module.get_output, 0).result()
        out = thread_b.submit(lambda: module.get_output(0).numpy()).result()
        np.testing.assert_allclose(out, _expected(second), rtol=1e-5)
    # a thread that never ran may read the outputs (a worker ran, the caller reads)
    np.testing.assert_allclose(module.get_output(0).numpy(), _expected(second), rtol=1e-5)


def test_concurrent_call_is_refused_while_another_thread_is_inside():
    guard = ThreadUseGuard("GraphModule")
    inside, release = threading.Event(), threading.Event()

    def long_run():
        with guard.call("run"):
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=long_run, name="runner")
    worker.start()
    try:
        assert inside.wait(10)
        with pytest.raises(ExecutionError, match=r"GraphModule\.set_input\(\).*'runner' is inside run\(\)"):
            with guard.call("set_input"):
                pass
    finally:
        release.set()
        worker.join()
    with guard.call("set_input"):           # free again once the run is over
        with guard.call("run"):             # and re-entrant within one thread
            pass
