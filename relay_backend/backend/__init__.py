"""tvm.relay.backend-style namespace: `relay_backend.backend.te_compiler.get()`, and the
Executor / Runtime configurations that `relay_backend.build(..., executor=, runtime=)` takes."""
from . import te_compiler  # noqa: F401
from .config_registry import Executor, Runtime

__all__ = ["te_compiler", "Executor", "Runtime"]
