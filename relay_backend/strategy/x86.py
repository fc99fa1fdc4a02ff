"""x86 implementations: tiled, vectorized, parallel schedules for dense, batch_matmul, conv2d and
pooling, registered with plevels above the generic 10. Removing this file changes speed only.

Importing registers them (strategy/__init__.py imports this module): x86_dense.py (nn.dense
packed + batch-1, nn.batch_matmul), x86_conv.py (nn.conv2d NCHW), x86_pool.py (pools), with the
row schedule of grouped convolutions and pools in x86_rows.py; the shared tile/epilogue helpers
and the tuning-knob helpers are in x86_common.py. Every implementation here is an autotvm
template (relay_backend.autotvm) whose default config is the hand-picked schedule.
"""
from . import x86_conv, x86_dense, x86_pool  # noqa: F401  (importing registers them)
