"""Process-wide tuning state: GLOBAL_SCOPE (in_tuning, silent) and build scopes.

A build scope is one compilation of a model (the graph / AOT codegen walk, the VM compiler's
lowering). Inside it, Relay's warning for operators without tuning records is logged at most
once (logger relay_backend.autotvm, TVM's "autotvm", as relay.backend.te_compiler does), with
each untuned workload at DEBUG level; and, when the user set no dispatch context of their own,
the shipped records for this CPU (tophub.py) apply, as tvm.relay.build applies TopHub. Outside any build (a direct
TECompiler.lower), the warning is logged once per process.
"""
import contextlib
import threading

from ..diagnostics import get_logger

logger = get_logger("autotvm")     # relay_backend.autotvm (TVM: "autotvm")

UNTUNED_WARNING = ("One or more operators have not been tuned. Please tune your model for better "
                   "performance. Use DEBUG logging level to see more details.")


class AutotvmGlobalScope:
    """`in_tuning`: a tuner is measuring; `silent`: no untuned-operator warnings."""

    current = None

    def __init__(self):
        self._old = AutotvmGlobalScope.current
        AutotvmGlobalScope.current = self
        self.in_tuning = False
        self.silent = False

    def deep_copy(self, scope):
        """Take another scope's flags.

        Parameters
        ----------
        scope : AutotvmGlobalScope
            The scope whose in_tuning / silent flags are copied.
        """
        self.in_tuning, self.silent = scope.in_tuning, scope.silent


GLOBAL_SCOPE = AutotvmGlobalScope()


def reset_global_scope(global_scope):
    """Make `global_scope` the current one (measurement workers copy the parent's)."""
    global GLOBAL_SCOPE
    GLOBAL_SCOPE = global_scope
    AutotvmGlobalScope.current = global_scope


class BuildScope:
    """What one build has warned about."""

    def __init__(self):
        self.warned = False
        self.untuned = set()       # (target text, workload) without a record


_SCOPES = threading.local()
_PROCESS_SCOPE = BuildScope()


def current_build_scope() -> BuildScope:
    """The innermost build scope of this thread (the process's own outside any build)."""
    stack = getattr(_SCOPES, "stack", None)
    return stack[-1] if stack else _PROCESS_SCOPE


@contextlib.contextmanager
def build_scope(target):
    """One build of a model for `target` (nested calls join the outermost build)."""
    stack = getattr(_SCOPES, "stack", None)
    if stack is None:
        stack = _SCOPES.stack = []
    if stack:
        yield stack[-1]
        return
    from .tophub import context as tophub_context
    scope = BuildScope()
    stack.append(scope)
    try:
        with tophub_context(target):
            yield scope
    finally:
        stack.pop()


@contextlib.contextmanager
def recording(local, name: str):
    """A list collecting what is reported to the thread-local stack `local.<name>` while the
    block runs (reporters append to every list on that stack)."""
    stack = getattr(local, name, None)
    if stack is None:
        stack = []
        setattr(local, name, stack)
    log = []
    stack.append(log)
    try:
        yield log
    finally:
        stack.remove(log)


def recording_untuned():
    """Collect the (target, workload) of every note_untuned made inside the block (the kernel
    cache keeps them with a kernel, to warn again when a later build reuses it)."""
    return recording(_SCOPES, "notes")


def note_untuned(target, workload) -> None:
    """An implementation with a tuning template ran with its default config: warn (once per
    build) and say which workload at DEBUG level."""
    for notes in getattr(_SCOPES, "notes", ()):
        notes.append((target, workload))
    if GLOBAL_SCOPE.silent:
        return
    scope = current_build_scope()
    scope.untuned.add((str(target), workload))
    if not scope.warned:
        scope.warned = True
        logger.warning(UNTUNED_WARNING)
    logger.debug("Cannot find tuning records for:\n    target=%s\n    key=%s\nThe default schedule is "
                 "used, which may be slower than a tuned one.", target, workload)
