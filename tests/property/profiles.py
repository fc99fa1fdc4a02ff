"""Hypothesis settings for the property tests: a fixed CI profile, or a soak profile (RB_SOAK=1).

CI: derandomized (the same examples every run), bounded example counts, no example database, so
the suite is deterministic and fast. Soak: random seeds, many examples (RB_SOAK_EXAMPLES overrides
the per-test count), for long local runs:  RB_SOAK=1 pytest tests/property
"""
import os

from hypothesis import HealthCheck, settings

SOAK = os.environ.get("RB_SOAK", "") not in ("", "0")

_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much])


def profile(ci_examples: int, soak_examples: int = 2000) -> settings:
    """Settings for one property: `ci_examples` derandomized examples, or a soak run."""
    if SOAK:
        soak_examples = int(os.environ.get("RB_SOAK_EXAMPLES", soak_examples))
        return settings(max_examples=soak_examples, derandomize=False, **_COMMON)
    return settings(max_examples=ci_examples, derandomize=True, **_COMMON)
