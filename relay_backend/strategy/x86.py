"""x86 implementations: tiled, vectorized, parallel schedules for dense, batch_matmul, conv2d and
pooling, registered with plevels above the generic 10. Removing this file changes speed only.

Importing registers them (strategy/__init__.py imports this module): x86_dense.py (nn.dense
packed + batch-1, nn.batch_matmul), x86_conv.py (nn.conv2d NCHW), x86_conv_nchwc.py (the
channel-blocked convolutions), x86_dense_pack.py (dense on a pre-packed weight), x86_pool.py
(pools), x86_alter_layout.py (AlterOpLayout's x86 rewrites), x86_conv_layouts.py (conv2d in
NHWC and the other non-NCHW layouts, every groups value), x86_conv_int16.py (8/16-bit integer
conv2d into int32, as vpmaddwd pair products), x86_layout_transform.py, x86_concat.py
(concatenate and its fused epilogue), x86_global_pool.py (NCHW global pools, columns first),
with the row schedule of grouped convolutions and pools in x86_rows.py; the shared tile/epilogue
helpers and the tuning-knob helpers are in x86_common.py. The conv2d, NCHWc, dense, dense_pack,
batch_matmul and pool implementations are autotvm templates (relay_backend.autotvm) whose
default config is the hand-picked schedule.
"""
from . import x86_alter_layout, x86_conv, x86_conv_nchwc, x86_dense, x86_dense_pack, x86_pool  # noqa: F401,E501
from . import x86_conv_nd, x86_conv_transpose  # noqa: F401,E402  (conv1d/3d, the transposed convolutions)
from . import x86_conv_layouts  # noqa: F401,E402  (conv2d in NHWC and the other non-NCHW layouts)
from . import x86_conv_int16  # noqa: F401,E402  (int8/int16 conv2d into int32: vpmaddwd pairs)
from . import x86_layout_transform  # noqa: F401,E402  (NCHW <-> NCHWc transforms, rows serial)
from . import x86_winograd  # noqa: F401,E402  (the Winograd convolution)
from . import x86_concat  # noqa: F401,E402  (concatenate: one branch-free loop nest per input)
from . import x86_global_pool  # noqa: F401,E402  (NCHW global pools: vector column sums first)
