"""Alias of relay_backend.te_compiler under TVM's name (relay.backend.te_compiler)."""
from ..te_compiler import (CachedFunc, CCacheKey, CCacheValue, TECompiler, get,  # noqa: F401
                           get_valid_implementations, lower_to_primfunc, select_implementation)
