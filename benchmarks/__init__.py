"""Benchmarks: `python -m benchmarks` runs every suite and prints medians and ratios."""
