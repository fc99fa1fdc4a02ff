"""ConfigSpace (every combination of a template's knobs), ConfigEntity (one combination) and
FallbackConfigEntity (the template's own default), as in TVM's autotvm.

A template runs three ways, depending on the config the dispatch context hands it:

    ConfigSpace          define_* calls *collect* knobs: the space is the product of their
                         choices; cfg[name] is each knob's first entity
    ConfigEntity         one point of the space (index); define_* only return axes placeholders,
                         cfg[name] is the chosen entity
    FallbackConfigEntity no record for this workload: knobs are collected as for a space and the
                         template overrides them with its hand-picked values (cfg[name] = ...)

A point's index mixes the knobs' choices with the first-defined knob varying fastest:
index = k0 + len0 * (k1 + len1 * (k2 + ...)), so an index in a log names the same config as in
TVM. `multi_filter` restricts combinations; len() then counts only the valid ones.
"""
import json
import random
import zlib

import numpy as np

from ...errors import TuningError
from ...tir import expr as E
from .space import (ANNOTATIONS, AnnotateEntity, AnnotateSpace, Axis, OtherOptionEntity,
                    OtherOptionSpace, ReorderEntity, ReorderSpace, SplitEntity, SplitSpace,
                    VirtualAxis, get_factors)


class ConfigSpace:
    """The knobs of a template and the space of their combinations."""

    def __init__(self):
        self.space_map = {}            # knob name -> TransformSpace (definition order)
        self._entity_map = {}          # knob name -> entity
        self._collect = True
        self.errors = []
        self.code_hash = None
        self.flop = 0
        self.cost = None
        self.is_fallback = False
        self._shared_filter = None
        self._valid = None             # tuple of bools per index once a multi_filter is set
        self._dims = None

    # -- declaring knobs ----------------------------------------------------------------------
    @staticmethod
    def axis(var):
        """A VirtualAxis for an int length or a te IterVar."""
        return VirtualAxis(var)

    reduce_axis = axis

    def define_split(self, name, axis, policy="factors", **kwargs):
        """Knob `name`: the ways to split `axis` into num_outputs factors (see SplitSpace)."""
        return self._add(SplitSpace, name, [axis], policy, **kwargs)

    def define_reorder(self, name, axes, policy, **kwargs):
        """Knob `name`: orders of `axes` (see ReorderSpace)."""
        return self._add(ReorderSpace, name, axes, policy, **kwargs)

    def define_annotate(self, name, axes, policy, **kwargs):
        """Knob `name`: annotations of `axes` (see AnnotateSpace)."""
        return self._add(AnnotateSpace, name, axes, policy, **kwargs)

    def define_knob(self, name, candidate):
        """Knob `name`: one of the `candidate` values (cfg[name].val)."""
        return self._add(OtherOptionSpace, name, [], None, candidate=candidate)

    def _add(self, space_class, name, axes, policy, **kwargs):
        if self._collect and not (self.is_fallback and name in self._entity_map):
            axes = [a if isinstance(a, (VirtualAxis, Axis)) else VirtualAxis(a) for a in axes]
            space = space_class(axes, policy, **kwargs)
            self.space_map[name] = space
            self._entity_map[name] = space[0]
            self._clear_cache()
            return [Axis(space, k) for k in range(space.num_output)]
        return [Axis(None, k) for k in range(space_class.get_num_output(axes, policy, **kwargs))]

    def multi_filter(self, filter):  # noqa: A002  (TVM's keyword)
        """Keep only the combinations for which filter({knob name: entity}) is true."""
        if self._collect:
            self._shared_filter = filter
            self._clear_cache()

    def restrict(self, keep):
        """Keep only the combinations that the template's filter and keep({knob name: entity})
        both accept (a filter added after the template ran, e.g. by the measurement)."""
        old = self._shared_filter
        self._shared_filter = keep if old is None else (lambda entities: old(entities) and keep(entities))
        self._clear_cache()

    def add_flop(self, flop):
        """Count `flop` floating-point operations for this task (GFLOPS reporting)."""
        if isinstance(flop, (E.IntImm, E.FloatImm)):
            flop = flop.value
        self.flop += float(flop)

    def raise_error(self, msg):
        """Mark this config invalid (it is recorded as an instantiation error, never built)."""
        self.errors.append(msg)

    def valid(self) -> bool:
        return not self.errors

    # -- the space as a sequence of configs ----------------------------------------------------
    def _clear_cache(self):
        self._valid = None
        self._dims = None

    @property
    def dims(self) -> list:
        """The number of choices of each knob, in definition order."""
        if self._dims is None:
            self._dims = [len(s) for s in self.space_map.values()]
        return self._dims

    @property
    def range_length(self) -> int:
        """How many indices the space spans (valid or not)."""
        return int(np.prod(self.dims, dtype=object)) if self.dims else 1

    def _validity(self) -> tuple:
        if self._valid is None:
            self._valid = tuple(bool(self._shared_filter(self._entities_at(i))) for i in range(self.range_length))
        return self._valid

    def is_index_valid(self, index: int) -> bool:
        if not 0 <= index < self.range_length:
            return False
        return self._shared_filter is None or self._validity()[index]

    def valid_indices(self) -> list:
        """The indices get() accepts (those a multi_filter keeps), in order."""
        return [i for i in range(self.range_length) if self.is_index_valid(i)]

    def __len__(self) -> int:
        if self._shared_filter is None:
            return self.range_length
        return sum(self._validity())

    def subrange_length(self, start: int, end: int) -> int:
        """Valid indices in [start, end)."""
        if self._shared_filter is None:
            return end - start
        return sum(self._validity()[start:end])

    def point2knob(self, point: int) -> list:
        """Index -> the choice of each knob."""
        knob = []
        for dim in self.dims:
            knob.append(point % dim)
            point //= dim
        return knob

    def knob2point(self, knob) -> int:
        """The choice of each knob -> index."""
        point, stride = 0, 1
        for k, dim in zip(knob, self.dims):
            point += int(k) * stride
            stride *= dim
        return point

    def _entities_at(self, index: int) -> dict:
        return {name: space[k] for (name, space), k in zip(self.space_map.items(), self.point2knob(index))}

    def get(self, index: int) -> "ConfigEntity":
        """The config at `index` (IndexError when out of range or filtered out)."""
        if not 0 <= index < self.range_length:
            raise IndexError(f"config index {index} is out of range: the space has {self.range_length} indices")
        if not self.is_index_valid(index):
            raise IndexError(f"config index {index} is excluded by the space's multi_filter")
        return ConfigEntity(index, self.code_hash, self._entities_at(index), [])

    def get_rand_index(self, start=None, end=None, to_exclude=None) -> int:
        """A random valid index in [start, end) not in `to_exclude`."""
        start = start or 0
        end = end or self.range_length
        exclude = to_exclude if isinstance(to_exclude, (set, frozenset, dict)) else set(to_exclude or ())
        if self.subrange_length(start, end) <= len([x for x in exclude if start <= x < end]):
            raise TuningError("get_rand_index: every valid index of the range is excluded")
        while True:
            index = random.randrange(start, end)
            if index not in exclude and self.is_index_valid(index):
                return index

    def get_next_index(self, index: int, n: int = 1, start=None, end=None):
        """The n-th valid index after `index` (before it when n < 0), or None past the range."""
        if n == 0:
            raise TuningError("get_next_index: n must not be 0")
        start = start or 0
        end = end or self.range_length
        step, left = (1 if n > 0 else -1), abs(n)
        while left:
            index += step
            if not start <= index < end:
                return None
            if self.is_index_valid(index):
                left -= 1
        return index

    def sample_ints(self, m: int) -> np.ndarray:
        """m distinct valid indices, uniformly at random."""
        if m > len(self):
            raise TuningError(f"sample_ints: asked for {m} configs of a space of {len(self)}")
        seen = set()
        while len(seen) < m:
            index = random.randrange(self.range_length)
            if self.is_index_valid(index):
                seen.add(index)
        return np.fromiter(seen, dtype=np.int64, count=len(seen))

    def random_walk(self, point: int) -> int:
        """A valid neighbour of `point`: one knob changed to another choice."""
        knob = self.point2knob(point)
        if all(d == 1 for d in self.dims):
            return point
        while True:
            new = list(knob)
            i = random.randrange(len(new))
            new[i] = random.randrange(self.dims[i])
            candidate = self.knob2point(new)
            if new != knob and self.is_index_valid(candidate):
                return candidate

    # -- knobs by name --------------------------------------------------------------------------
    def __getitem__(self, name):
        """The entity of knob `name` (not a config: use get(index) for that)."""
        try:
            return self._entity_map[name]
        except KeyError:
            raise TuningError(f"config has no knob {name!r}; it has {list(self._entity_map)}") from None

    def __iter__(self):
        return iter(self._entity_map)

    def __contains__(self, name) -> bool:
        return name in self._entity_map

    def __repr__(self) -> str:
        lines = [f"ConfigSpace (len={len(self)}, range_length={self.range_length}, space_map="]
        lines += [f"  {i:2d} {name}: {space}" for i, (name, space) in enumerate(self.space_map.items())]
        return "\n".join(lines) + "\n)"


_KIND = ((SplitEntity, "sp", "size"), (ReorderEntity, "re", "perm"), (AnnotateEntity, "an", "anns"),
         (OtherOptionEntity, "ot", "val"))


class ConfigEntity(ConfigSpace):
    """One config: an index in its space and the chosen entity of each knob."""

    def __init__(self, index, code_hash, entity_map, constraints):
        super().__init__()
        self.index = index
        self._collect = False
        self._entity_map = dict(entity_map)
        self._constraints = constraints
        self.code_hash = code_hash

    def get_flatten_feature(self) -> np.ndarray:
        """The knobs as numbers: split sizes, permutations, one-hot annotations, option values."""
        feature = []
        for entity in self._entity_map.values():
            if isinstance(entity, SplitEntity):
                feature.extend(entity.size)
            elif isinstance(entity, ReorderEntity):
                feature.extend(entity.perm)
            elif isinstance(entity, AnnotateEntity):
                for ann in entity.anns:
                    onehot = [0] * len(ANNOTATIONS)
                    if ann in ANNOTATIONS:
                        onehot[ANNOTATIONS.index(ann)] = 1
                    feature.extend(onehot)
            elif isinstance(entity, OtherOptionEntity):
                feature.append(_as_number(entity.val))
        return np.array(feature, dtype=np.float32)

    def get_other_option(self) -> dict:
        """{knob name: value} of the define_knob knobs."""
        return {name: e.val for name, e in self._entity_map.items() if isinstance(e, OtherOptionEntity)}

    def to_json_dict(self) -> dict:
        """{"index", "code_hash", "entity": [[name, kind, value], ...]} (TVM's log form)."""
        entity = []
        for name, e in self._entity_map.items():
            for klass, kind, attr in _KIND:
                if isinstance(e, klass):
                    value = getattr(e, attr)
                    entity.append([name, kind, list(value) if isinstance(value, (list, tuple)) else value])
                    break
            else:
                raise TuningError(f"config knob {name!r} holds a {type(e).__name__}, not an entity")
        return {"index": int(self.index), "code_hash": self.code_hash, "entity": entity}

    @staticmethod
    def from_json_dict(json_dict) -> "ConfigEntity":
        """The ConfigEntity of to_json_dict's output; TuningError on a malformed one."""
        try:
            index, code_hash, items = json_dict["index"], json_dict["code_hash"], json_dict["entity"]
            entities = {}
            for name, kind, value in items:
                klass = next((k for k, tag, _ in _KIND if tag == kind), None)
                if klass is None:
                    raise TuningError(f"unknown knob kind {kind!r} (expected sp, re, an or ot)")
                entities[str(name)] = klass(value)
        except (KeyError, TypeError, ValueError) as err:
            raise TuningError(f"malformed config {str(json_dict)[:120]}: {type(err).__name__}: {err}") from None
        if not isinstance(index, int):
            raise TuningError(f"malformed config: index {index!r} is not an int")
        return ConfigEntity(index, code_hash, entities, [])

    def fingerprint(self) -> str:
        """A stable text naming this config (the kernel cache keys on it)."""
        return json.dumps(self.to_json_dict()["entity"], sort_keys=True)

    def __repr__(self) -> str:
        return f"{list(self._entity_map.items())},{self.code_hash},{self.index}"


def _as_number(value) -> float:
    if isinstance(value, (bool, int, float, np.number)):
        return float(value)
    return float(zlib.crc32(str(value).encode()) % 1000)   # a string knob: a stable code per value


class FallbackConfigEntity(ConfigSpace):
    """The config used when no record matches: the template fills its knobs with its own
    defaults (cfg[name] = entity, or fallback_split)."""

    def __init__(self):
        super().__init__()
        self.is_fallback = True

    def __setitem__(self, name, entity):
        self._entity_map[name] = entity

    def fallback_split(self, name, constraints):
        """Choose split factors of knob `name` no larger than `constraints` (innermost first
        filled; -1 means unbounded): define_split(n=128, num_outputs=3) then
        fallback_split(name, [-1, 8, 4]) gives [4, 8, 4]."""
        space = self.space_map.get(name)
        if not isinstance(space, SplitSpace) or len(constraints) != space.num_output:
            raise TuningError(f"fallback_split: {name!r} is not a split knob with {len(constraints)} outputs")
        limits = [float("inf") if c == -1 else c for c in constraints]
        size, left = [1] * space.num_output, space.product
        for i in reversed(range(space.num_output)):
            fitting = [f for f in get_factors(left) if f <= limits[i]]
            if not fitting:
                raise TuningError(f"fallback_split: no factor of {left} fits {constraints[i]} for {name!r}")
            size[i] = fitting[-1]
            left //= size[i]
        self._entity_map[name] = SplitEntity(size)

    def fingerprint(self) -> str:
        return "fallback"

    def __repr__(self) -> str:
        return f"{list(self._entity_map.items())},{self.code_hash}"
