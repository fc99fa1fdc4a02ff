"""Config spaces (autotvm/task/space.py, config_space.py): what each policy enumerates, how an
index maps to knobs, filters, fallback splits and the JSON form of a config."""
import itertools
import math

import pytest

from relay_backend.autotvm.task import ConfigEntity, ConfigSpace, FallbackConfigEntity, get_factors
from relay_backend.autotvm.task.space import SplitEntity
from relay_backend.errors import TuningError


def test_factors_and_pow2s():
    assert get_factors(12) == [1, 2, 3, 4, 6, 12]
    assert get_factors(1) == [1]
    assert get_factors(49) == [1, 7, 49]
    for n in range(1, 200):
        assert get_factors(n) == [d for d in range(1, n + 1) if n % d == 0]


@pytest.mark.parametrize("n, outputs", [(12, 2), (16, 3), (7, 2), (36, 3)])
def test_factor_splits_are_exactly_the_divisor_tuples(n, outputs):
    cfg = ConfigSpace()
    cfg.define_split("t", n, num_outputs=outputs)
    sizes = [tuple(e.size) for e in cfg.space_map["t"].entities]
    want = {(-1,) + inner for inner in itertools.product(get_factors(n), repeat=outputs - 1)
            if n % math.prod(inner) == 0}
    assert set(sizes) == want and len(sizes) == len(want)


def test_power2_and_verbose_splits_allow_tails_and_max_factor():
    cfg = ConfigSpace()
    cfg.define_split("p", 12, policy="power2", num_outputs=2)
    cfg.define_split("v", 12, policy="verbose", num_outputs=2, max_factor=6)
    cfg.define_split("f", 64, num_outputs=2, filter=lambda e: e.size[-1] >= 8)
    assert [e.size for e in cfg.space_map["p"].entities] == [[-1, 1], [-1, 2], [-1, 4], [-1, 8]]
    assert [e.size[-1] for e in cfg.space_map["v"].entities] == [1, 2, 3, 4, 6]
    assert [e.size[-1] for e in cfg.space_map["f"].entities] == [8, 16, 32, 64]


def test_index_mixes_knobs_first_defined_fastest():
    cfg = ConfigSpace()
    cfg.define_knob("a", [10, 20, 30])
    cfg.define_knob("b", ["x", "y"])
    assert len(cfg) == cfg.range_length == 6 and cfg.dims == [3, 2]
    seen = set()
    for index in range(len(cfg)):
        config = cfg.get(index)
        knob = cfg.point2knob(index)
        assert cfg.knob2point(knob) == index
        assert (config["a"].val, config["b"].val) == ([10, 20, 30][knob[0]], ["x", "y"][knob[1]])
        seen.add((config["a"].val, config["b"].val))
    assert len(seen) == 6
    assert cfg.get(4)["a"].val == 20 and cfg.get(4)["b"].val == "y"   # 4 = 1 + 3 * 1
    with pytest.raises(IndexError):
        cfg.get(6)


def test_reorder_and_annotate_policies():
    cfg = ConfigSpace()
    x, y, z = cfg.axis(4), cfg.axis(8), cfg.axis(2)
    cfg.define_reorder("all", [x, y, z], "all")
    cfg.define_reorder("mid", [x, y, z], "interval_all", interval=(1, 3))
    cfg.define_reorder("cand", [x, y, z], "candidate", candidate=[[z, x, y]])
    cfg.define_annotate("ann", [x, y], "try_unroll_vec")
    assert len(cfg.space_map["all"]) == 6
    assert [e.perm for e in cfg.space_map["mid"].entities] == [[0, 1, 2], [0, 2, 1]]
    assert [e.perm for e in cfg.space_map["cand"].entities] == [[2, 0, 1]]
    anns = [e.anns for e in cfg.space_map["ann"].entities]
    assert len(anns) == 8 and ["vec", "vec"] not in anns and ["unroll", "vec"] in anns


def test_multi_filter_restricts_combinations():
    cfg = ConfigSpace()
    cfg.define_split("x", 64, num_outputs=2, policy="candidate", candidate=[[16, 4], [8, 8], [4, 16]])
    cfg.define_split("y", 64, num_outputs=2, policy="candidate", candidate=[[16, 4], [8, 8], [4, 16]])
    cfg.multi_filter(filter=lambda e: e["x"].size[1] * e["y"].size[1] <= 32)
    valid = [i for i in range(cfg.range_length) if cfg.is_index_valid(i)]
    assert len(cfg) == len(valid) == 3
    for i in valid:
        c = cfg.get(i)
        assert c["x"].size[1] * c["y"].size[1] <= 32
    assert sorted(cfg.sample_ints(3)) == valid
    with pytest.raises(IndexError):
        cfg.get(next(i for i in range(cfg.range_length) if i not in valid))
    assert cfg.get_next_index(valid[0]) == valid[1]


def test_random_walk_changes_one_knob():
    cfg = ConfigSpace()
    cfg.define_knob("a", list(range(5)))
    cfg.define_knob("b", list(range(7)))
    for point in range(len(cfg)):
        new = cfg.random_walk(point)
        diff = [u != v for u, v in zip(cfg.point2knob(point), cfg.point2knob(new))]
        assert sum(diff) == 1


def test_config_json_round_trip():
    cfg = ConfigSpace()
    cfg.define_split("tile", 32, num_outputs=3)
    cfg.define_reorder("order", [cfg.axis(2), cfg.axis(3)], "all")
    cfg.define_annotate("ann", [cfg.axis(4)], "try_unroll")
    cfg.define_knob("unroll", [True, False])
    for index in (0, 7, len(cfg) - 1):
        config = cfg.get(index)
        back = ConfigEntity.from_json_dict(config.to_json_dict())
        assert back.index == index and repr(back) == repr(config)
        assert back.fingerprint() == config.fingerprint()
        assert list(back.get_flatten_feature()) == list(config.get_flatten_feature())
    with pytest.raises(TuningError, match="unknown knob kind"):
        ConfigEntity.from_json_dict({"index": 0, "code_hash": None, "entity": [["t", "zz", 1]]})


def test_fallback_keeps_the_templates_values_and_splits_within_limits():
    cfg = FallbackConfigEntity()
    cfg.define_split("tile", 128, num_outputs=3)
    cfg.fallback_split("tile", [-1, 8, 4])
    assert cfg["tile"].size == [4, 8, 4]
    cfg.define_split("odd", 49, num_outputs=3)
    cfg.fallback_split("odd", [-1, 8, 4])
    assert cfg["odd"].size == [7, 7, 1]
    cfg["tile"] = SplitEntity([-1, 16])
    cfg.define_split("tile", 128, num_outputs=3)            # a second definition keeps the choice
    assert cfg["tile"].size == [-1, 16] and cfg.is_fallback and cfg.fingerprint() == "fallback"


def test_bad_definitions_are_tuning_errors():
    cfg = ConfigSpace()
    with pytest.raises(TuningError, match="unknown policy"):
        cfg.define_split("t", 8, policy="nope", num_outputs=2)
    with pytest.raises(TuningError, match="num_outputs"):
        cfg.define_split("t", 8)
    with pytest.raises(TuningError, match="no knob"):
        cfg["missing"]
