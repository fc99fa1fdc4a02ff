"""x86 implementations: tiled, vectorized, parallel schedules for dense, batch_matmul, conv2d and
pooling, registered with plevels above the generic 10. Removing this file changes speed only."""
