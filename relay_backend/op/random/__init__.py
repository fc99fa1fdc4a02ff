"""relay.random: counter-based pseudorandom numbers (Threefry), deterministic for a given state
on every executor (threefry.py the generator, kernel.py the ops' pieces, ops.py the declarations)."""
from . import ops  # noqa: F401  (importing registers the ops)
from .ops import multinomial, normal, threefry_generate, threefry_key, threefry_split, uniform

__all__ = ["threefry_key", "threefry_generate", "threefry_split", "uniform", "normal", "multinomial"]
