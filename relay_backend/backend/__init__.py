"""tvm.relay.backend-style alias namespace: `relay_backend.backend.te_compiler.get()`."""
from . import te_compiler  # noqa: F401
