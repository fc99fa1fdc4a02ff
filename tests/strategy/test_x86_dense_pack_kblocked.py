"""dense_pack_prepacked.x86's K-blocked nest (tile_k < K, strategy/x86_dense_pack.py) on a dense
large enough to run in parallel: the lowered kernel has ONE parallel loop, the outer tile axis,
with the K panels inside it (a region per panel cost a fork/join each), and every K-blocked
config of both tile orders, with odd extents (rows not a multiple of the row tile: padded row
panel; several column blocks), matches numpy (float64 reference, rtol/atol 1e-4) when run on
2 threads, so the parallel split across the panels keeps each output tile on one thread; the
unblocked configs (the default) with tile counts that split unevenly match too."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import autotvm, te
from relay_backend.codegen import build
from relay_backend.ir.types import TensorType
from relay_backend.op.registry import get as get_op
from relay_backend.runtime import nd, thread_count
from relay_backend.strategy.generic import PARALLEL_MIN_WORK
from relay_backend.strategy.x86_blocks import default_block
from relay_backend.tir import stmt as tir_stmt
from relay_backend.tir.functor import walk

pytestmark = pytest.mark.compile

ROWS, K, UNITS = 36, 384, 96          # 36 * 384 * 96 = 1.3M multiply-adds: above the threshold


def _task():
    block = default_block(UNITS)
    x = relay.var("x", shape=(1, 1))
    attrs = relay.nn.contrib_dense_pack(x, x, f"NC{block}n").attrs
    shapes = [(ROWS, K), (UNITS // block, K, block)]
    op = get_op("nn.contrib_dense_pack")
    out_type = op.rel([TensorType(s, "float32") for s in shapes], attrs)
    inputs = [te.placeholder(s, "float32", name=f"in{k}") for k, s in enumerate(shapes)]
    return autotvm.task.create("dense_pack_prepacked.x86", (attrs, inputs, out_type), "llvm"), op, attrs, shapes


def _parallel_loops(func) -> list:
    return [n for n in walk(func.body) if isinstance(n, tir_stmt.For) and n.kind == "parallel"]


def _run_on_two_threads(task, op, attrs, shapes, configs, seed: int):
    """(config, lowered kernel) of each config, after checking its output on 2 threads against
    numpy's relu(dense) in float64 (rtol/atol 1e-4)."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    want = np.maximum(op.ref(*[a.astype("float64") for a in arrays], attrs), 0)
    previous = thread_count.num_threads()
    thread_count.set_num_threads(2)
    checked = []
    try:
        for config in configs:
            sch, args = task.instantiate(config)
            func = te.lower(sch, args, "kernel")
            out = nd.empty([int(d.value) for d in args[-1].shape], "float32")
            build(func)["kernel"](*[nd.array(a) for a in arrays], out)
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-4, err_msg=str(config))
            checked.append((config, func))
    finally:
        thread_count.set_num_threads(previous)
    return checked


def test_the_shape_runs_in_parallel():
    assert ROWS * K * UNITS >= PARALLEL_MIN_WORK


def test_k_blocked_configs_have_one_parallel_loop_around_the_panels_and_match_numpy():
    task, op, attrs, shapes = _task()
    block = int(shapes[1][2])
    space = task.config_space
    configs = [space.get(i) for i in space.valid_indices()
               if space.get(i)["tile_k"].size[-1] < K and space.get(i)["block_n"].size[-1] == block]
    # a few per tile order: the smallest and largest panels, with and without padded rows
    chosen = {}
    for c in configs:
        key = (c["col_outer"].val, c["tile_k"].size[-1] in (8, 128), ROWS % c["tile_y"].size[-1] == 0)
        chosen.setdefault(key, c)
    assert {k[0] for k in chosen} == {False, True} and len(chosen) >= 4
    for config, func in _run_on_two_threads(task, op, attrs, shapes, chosen.values(), seed=3):
        loops = _parallel_loops(func)
        assert len(loops) == 1, f"{config}: {len(loops)} parallel loops"
        inner = str(loops[0].body)
        assert "k.outer" in inner and "k.inner" in inner, config


def test_unblocked_configs_split_odd_tile_counts_across_two_threads():
    """Without K-blocking (tile_k = K, the default) the parallel loop runs the tiles themselves:
    tile counts that do not divide evenly between the threads' static blocks and the shared
    chunks (e.g. 36 / 12 rows x 6 / 1 column blocks = 18 tiles, 36 x 3 = 108) still compute
    every output once."""
    task, op, attrs, shapes = _task()
    block = int(shapes[1][2])
    space = task.config_space
    configs = [space.get(i) for i in space.valid_indices()
               if space.get(i)["tile_k"].size[-1] == K and space.get(i)["block_n"].size[-1] == block
               and space.get(i)["tile_y"].size[-1] in (1, 12) and space.get(i)["tile_x"].size[-1] in (1, 2)]
    assert len(configs) >= 4
    for config, func in _run_on_two_threads(task, op, attrs, shapes, configs, seed=4):
        assert len(_parallel_loops(func)) == 1, config
