"""Level 7: built-in workloads and random-program generators for tests, the demo and benchmarks.

    from relay_backend.testing import mlp, resnet, seed_cnn
    mod, params = mlp.get_workload(batch_size=1)                 # tvm.relay.testing.mlp
    mod, params = resnet.get_workload(num_layers=18)             # tvm.relay.testing.resnet (v1)
    mod, params = resnet.get_block_workload()                    # one basic block, 64ch 56x56

Each workload returns (IRModule, params) with seeded random params and has a float64 numpy
forward pass (numpy_nn) independent of the op references. `program_gen.programs()` is the
hypothesis strategy of random well-typed programs; `tolerances` holds per-dtype tolerances;
`check_grad` compares analytic gradients with central differences (tvm.relay.testing).
"""
from . import mlp, numpy_nn, resnet, seed_cnn, tolerances
from .init import create_workload
from .tolerances import assert_allclose
from .gradient import check_grad

__all__ = ["mlp", "resnet", "seed_cnn", "numpy_nn", "tolerances", "create_workload", "assert_allclose",
           "check_grad"]
