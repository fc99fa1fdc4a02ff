"""CUDA implementations: the generic GPU schedule for every op (cuda_generic.py, under the "gpu"
key) and faster ones with higher plevels under the "cuda" key: tiled shared-memory dense /
matmul / batch_matmul (cuda_dense.py), output-channel-blocked conv2d (cuda_conv.py), one block
per row softmax / log_softmax (cuda_softmax.py). Pools and reductions use the generic schedule
(a thread per output, or cross-thread reductions for few long ones). Importing registers them.
"""
from . import cuda_conv, cuda_dense, cuda_generic, cuda_softmax  # noqa: F401  (importing registers them)
