"""Level 4: op strategies. Each op has a generic implementation (its compute + the generic
schedule); target files add faster ones with a higher plevel."""
from .base import (OpImplementation, OpSpecialization, OpStrategy, KNOWN_KEYS, op_strategy,
                   register_strategy, target_keys, target_kind, unregister_strategy)
from .generic import inline_injective, schedule_default, schedule_spatial
from . import x86, cuda  # noqa: F401  (register the x86 and CUDA implementations)
