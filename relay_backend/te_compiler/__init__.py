"""Level 5: the TECompiler (cache, implementation selection, lowering, naming, jit)."""
from .cache import CachedFunc, CCacheKey, CCacheValue
from .compiler import TECompiler, get, hand_over_early
from .lower import LoweredTE, lower_to_primfunc, lower_to_te
from .naming import candidate_name, mangle_module_name
from .select import get_valid_implementations, select_implementation
