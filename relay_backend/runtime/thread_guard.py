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

run() is on the hot path, so a call costs a lock and a few dict checks; threads are told apart
by `threading.get_ident()`, and a mark left for a thread also holds a weak reference to it, so a
later thread that reuses a finished thread's ident never inherits its marks.
"""
import threading
import weakref

from ..errors import ExecutionError

FIX = ("give each thread its own module (factory['default'](device)), serialize whole "
       "set_input/run/get_output cycles with a lock, or use create_executor(...).evaluate(), "
       "whose function is safe to call from many threads")


def _this_thread():
    """(ident, weak reference, name) of the calling thread, for marks and messages."""
    thread = threading.current_thread()
    return thread.ident, weakref.ref(thread), thread.name


def _prune(marks: dict) -> dict:
    """`marks` without the ones left for threads that have finished (threads that never come
    back, e.g. one per request, must not grow the dict forever)."""
    return {ident: mark for ident, mark in marks.items() if mark[0]() is not None}


def _take_mark(marks: dict, ident: int):
    """Pop and return the value of the mark left for the calling thread, or None (a mark left
    for a finished thread whose ident was reused is dropped)."""
    mark = marks.pop(ident, None)
    if mark is None:
        return None
    owner, value = mark
    return value if owner() is threading.current_thread() else None


class _Call:
    """The context manager of one method name: `with guard.call("run") as me:` holds the
    module for that call and gives the calling thread's ident (a class, not a generator:
    run() is on the hot path)."""

    __slots__ = ("guard", "method")

    def __init__(self, guard, method: str):
        self.guard, self.method = guard, method

    def __enter__(self) -> int:
        guard, me = self.guard, threading.get_ident()
        if guard._holder == me:                    # re-entered (run(**inputs) calls set_input)
            guard._depth += 1
            return me
        if not guard._lock.acquire(blocking=False):
            holder, method = guard._holder, guard._holder_method
            name = next((t.name for t in threading.enumerate() if t.ident == holder), "another thread")
            raise ExecutionError(f"{guard.owner}.{self.method}() was called from thread "
                                 f"{threading.current_thread().name!r} while thread {name!r} is "
                                 f"inside {method}(): a {guard.owner} serves one thread at a time; "
                                 f"{FIX}")
        guard._holder, guard._depth, guard._holder_method = me, 1, self.method
        return me

    def __exit__(self, *exc_info):
        guard = self.guard
        guard._depth -= 1
        if guard._depth == 0:
            guard._holder = None
            guard._lock.release()
        return False


class ThreadUseGuard:
    """Tracks which thread set each input and whose run the outputs belong to."""

    def __init__(self, owner: str):
        self.owner = owner                         # "GraphModule" in messages
        self._lock = threading.Lock()
        self._holder, self._holder_method, self._depth = None, "", 0   # ident inside a call
        self._calls = {}                           # method -> _Call
        self._pending = {}                         # input index -> (ident, weakref, name) of its setter
        self._overwritten = {}                     # ident -> (weakref, {input name: by thread name})
        self._outputs_of = None                    # (ident, weakref, name) of the last run's thread
        self._stale = {}                           # ident -> (weakref, name of the thread that re-ran)
        self._prune_at = 16                        # drop marks of finished threads past this size

    def call(self, method: str) -> _Call:
        """Hold the module for one public call; ExecutionError if another thread holds it."""
        ctx = self._calls.get(method)
        if ctx is None:
            ctx = self._calls[method] = _Call(self, method)
        return ctx

    def input_set(self, me: int, index: int, name: str) -> None:
        """Record that thread `me` set input `index` (inside `call`)."""
        previous = self._pending.get(index)
        if previous is not None and previous[0] == me:
            return
        this = _this_thread()
        if previous is not None and previous[1]() is not None:
            entry = self._overwritten.get(previous[0])
            if entry is None or entry[0]() is not previous[1]():
                if len(self._overwritten) >= self._prune_at:
                    self._overwritten = _prune(self._overwritten)
                    self._prune_at = max(16, 2 * len(self._overwritten))
                entry = self._overwritten[previous[0]] = (previous[1], {})
            entry[1][name] = this[2]
        mine = self._overwritten.get(me)
        if mine:
            mine[1].pop(name, None)
        self._pending[index] = this

    def before_run(self, me: int) -> None:
        """ExecutionError if an input `me` set was overwritten by another thread since."""
        lost = _take_mark(self._overwritten, me) if self._overwritten else None
        if lost:
            self._pending = {i: t for i, t in self._pending.items() if t[0] != me}
            what = ", ".join(f"input {name!r} (overwritten by thread {by!r})" for name, by in lost.items())
            raise ExecutionError(f"{self.owner}.run() in thread {threading.current_thread().name!r}: "
                                 f"{what} before this thread ran, so the run would use another "
                                 f"thread's data; set the input again, or {FIX}")

    def after_run(self, me: int) -> None:
        """Record that thread `me` produced the current outputs."""
        if self._pending:
            self._pending.clear()
        if self._stale:
            self._stale.pop(me, None)
        previous = self._outputs_of
        if previous is None or previous[0] != me:
            this = _this_thread()
            if previous is not None and previous[1]() is not None:
                if len(self._stale) >= self._prune_at:
                    self._stale = _prune(self._stale)
                    self._prune_at = max(16, 2 * len(self._stale))
                self._stale[previous[0]] = (previous[1], this[2])
            self._outputs_of = this

    def before_output(self, me: int) -> None:
        """ExecutionError if the outputs of `me`'s last run were overwritten by another thread's."""
        by = _take_mark(self._stale, me) if self._stale else None
        if by is not None:
            raise ExecutionError(f"{self.owner}.get_output() in thread "
                                 f"{threading.current_thread().name!r}: the outputs of this "
                                 f"thread's last run were overwritten by a run in thread {by!r}; "
                                 f"run again, or {FIX}")


__all__ = ["ThreadUseGuard"]
