"""ThreadUseGuard: a module with one set of buffers raises when threads share it unsafely.

A GraphModule or AotModule owns ONE set of input and output buffers: `set_input`, `run` and
`get_output` are steps of one caller's cycle. Two threads driving one module would read each
other's inputs and outputs, so the guard turns every way that can happen into an
ExecutionError in the thread that would have got a wrong answer:

* a call while another thread is inside a call of the same module (e.g. set_input during a
  run, whose native code runs without the GIL) is refused at once;
* an input set by thread A and overwritten by thread B before A ran: A's next `run` raises
  (B's value is the one in the buffer, so B runs correctly);
* outputs of A's run overwritten by B's run: A's next `get_output` raises (until A runs again).

A thread that only reads (a worker ran, the caller reads the outputs) or only runs (inputs set
by another thread, nothing overwritten) is not refused. Serializing whole cycles with your own
lock never trips it. The guard cannot see arrays that escaped a call: `get_output(i)` without
`out` returns the module's own buffer, which the next run (from any thread) overwrites.
"""
import contextlib
import threading
import weakref

from ..errors import ExecutionError

FIX = ("give each thread its own module (factory['default'](device)), serialize whole "
       "set_input/run/get_output cycles with a lock, or use create_executor(...).evaluate(), "
       "whose function is safe to call from many threads")


class ThreadUseGuard:
    """Tracks which thread set each input and whose run the outputs belong to."""

    def __init__(self, owner: str):
        self.owner = owner                         # "GraphModule" in messages
        self._lock = threading.Lock()
        self._holder = None                        # ident of the thread inside a call
        self._holder_call = ("", "")               # (thread name, method) of that call
        self._pending = {}                         # input index -> thread that set it, not run yet
        self._overwritten = weakref.WeakKeyDictionary()   # thread -> {input name: by thread}
        self._outputs_of = None                    # weakref to the thread whose run made the outputs
        self._stale = weakref.WeakKeyDictionary()  # thread -> name of the thread that re-ran

    @contextlib.contextmanager
    def call(self, method: str):
        """Hold the module for one public call; ExecutionError if another thread holds it."""
        me = threading.current_thread()
        if self._holder == me.ident:               # re-entered (run(**inputs) calls set_input)
            yield me
            return
        if not self._lock.acquire(blocking=False):
            name, inside = self._holder_call
            raise ExecutionError(f"{self.owner}.{method}() was called from thread {me.name!r} while "
                                 f"thread {name!r} is inside {inside}(): a {self.owner} serves one "
                                 f"thread at a time; {FIX}")
        self._holder, self._holder_call = me.ident, (me.name, method)
        try:
            yield me
        finally:
            self._holder, self._holder_call = None, ("", "")
            self._lock.release()

    def input_set(self, me, index: int, name: str) -> None:
        """Record that thread `me` set input `index` (inside `call`)."""
        previous = self._pending.get(index)
        if previous is not None and previous is not me:
            self._overwritten.setdefault(previous, {})[name] = me.name
        mine = self._overwritten.get(me)
        if mine:
            mine.pop(name, None)
        self._pending[index] = me

    def before_run(self, me) -> None:
        """ExecutionError if an input `me` set was overwritten by another thread since."""
        lost = self._overwritten.pop(me, None)
        if lost:
            self._pending = {i: t for i, t in self._pending.items() if t is not me}
            what = ", ".join(f"input {name!r} (overwritten by thread {by!r})" for name, by in lost.items())
            raise ExecutionError(f"{self.owner}.run() in thread {me.name!r}: {what} before this thread "
                                 f"ran, so the run would use another thread's data; set the input "
                                 f"again, or {FIX}")

    def after_run(self, me) -> None:
        """Record that thread `me` produced the current outputs."""
        self._pending.clear()
        self._stale.pop(me, None)
        previous = self._outputs_of() if self._outputs_of is not None else None
        if previous is not None and previous is not me:
            self._stale[previous] = me.name
        self._outputs_of = weakref.ref(me)

    def before_output(self, me) -> None:
        """ExecutionError if the outputs of `me`'s last run were overwritten by another thread's."""
        by = self._stale.pop(me, None)
        if by is not None:
            raise ExecutionError(f"{self.owner}.get_output() in thread {me.name!r}: the outputs of this "
                                 f"thread's last run were overwritten by a run in thread {by!r}; run "
                                 f"again, or {FIX}")


__all__ = ["ThreadUseGuard"]
