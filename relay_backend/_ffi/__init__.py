"""tvm._ffi-style alias: `relay_backend._ffi.register_func`, `get_global_func`, and the
`registry` module, for code written against TVM's FFI names (the registry is runtime/registry.py)."""
from ..runtime import registry
from ..runtime.registry import get_global_func, list_global_func_names, register_func, remove_global_func

__all__ = ["registry", "register_func", "get_global_func", "list_global_func_names", "remove_global_func"]
