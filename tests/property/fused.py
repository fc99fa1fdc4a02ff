"""The fused form of a random program that the serialization round-trip tests read back: FuseOps at
fuse_opt_level 2 under opt_level 3, then InferType, so primitive functions and their types appear."""
from relay_backend import transform


def fused_module(mod):
    """`mod` with its calls fused into typed primitive functions."""
    with transform.PassContext(opt_level=3):
        return transform.Sequential([transform.FuseOps(fuse_opt_level=2), transform.InferType()])(mod)
