"""Transform spaces: the tunable choices one knob of a schedule template offers (autotvm space).

A template declares knobs on a config (config_space.py): `cfg.define_split("tile_x", axis,
num_outputs=2)` adds a SplitSpace whose entities are the ways to split that axis;
`define_reorder` a ReorderSpace (permutations), `define_annotate` an AnnotateSpace (unroll /
vectorize / GPU-binding choices per axis), `define_knob` an OtherOptionSpace (any listed
values). Each space is a list of entities; a concrete config picks one entity per knob, and the
template applies it (`cfg["tile_x"].apply(s, op, axis)` splits as the entity says).

The naming follows TVM: an XxxSpace is the set of choices, an XxxEntity one choice.
"""
import itertools
import math

from ...errors import TuningError
from ...tir import expr as E


class InstantiationError(TuningError):
    """A config that cannot be instantiated (the template rejected it with cfg.raise_error, or
    a knob value is out of its space): recorded as an INSTANTIATION_ERROR, never built."""


def get_factors(n: int) -> list:
    """Every divisor of n, ascending (get_factors(12) -> [1, 2, 3, 4, 6, 12])."""
    if n < 1:
        return [1]
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def get_pow2s(n: int) -> list:
    """The powers of two <= n (get_pow2s(12) -> [1, 2, 4, 8])."""
    return [1 << k for k in range(max(n, 1).bit_length())]


def _extent_of(var) -> int:
    dom = getattr(var, "dom", None)
    if dom is None:
        return -1
    extent = dom.extent
    if not isinstance(extent, E.IntImm):
        raise TuningError(f"autotvm: axis {var.var.name!r} has a symbolic extent ({extent}); "
                          f"tunable knobs need static shapes")
    return int(extent.value)


class VirtualAxis:
    """An axis as a space sees it: a name and a length (from an IterVar's extent or an int)."""

    _counter = 0

    def __init__(self, var, name=None):
        if isinstance(var, VirtualAxis):
            self.name, self.length = name or var.name, var.length
        elif isinstance(var, int):
            if name is None:
                name = f"axis_{VirtualAxis._counter}"
                VirtualAxis._counter += 1
            self.name, self.length = name, var
        elif isinstance(var, E.IterVar):
            self.name, self.length = var.var.name, _extent_of(var)
        else:
            raise TuningError(f"autotvm: an axis is an int, a te IterVar or a VirtualAxis, got "
                              f"{type(var).__name__}")

    def __repr__(self) -> str:
        return f"vaxis({self.name})"


class Axis:
    """Output axis `index` of a transform space (what define_* returns to the template)."""

    __slots__ = ("space", "index")

    def __init__(self, space, index):
        self.space, self.index = space, index

    def __repr__(self) -> str:
        return f"Axis({self.index})"


class TransformSpace:
    """A knob's choices: `entities` (indexable, len()) and how many axes it outputs."""

    def __init__(self):
        self.ins = []
        self.num_output = 0
        self.entities = []

    def __len__(self) -> int:
        return len(self.entities)

    def __getitem__(self, index):
        return self.entities[index]

    @staticmethod
    def get_num_output(*args, **kwargs) -> int:
        return 0


# --- split ---------------------------------------------------------------------------------------
class SplitEntity:
    """Split an axis into len(size) axes of these extents, outermost first; size[0] may be -1
    ("whatever is left"): [-1, 8] splits by an inner factor 8."""

    def __init__(self, size):
        self.size = list(size)

    def apply(self, sch, op, axis) -> list:
        """Split `axis` of stage `op` in `sch`; returns the new axes, outermost first."""
        out = []
        for i in range(1, len(self.size)):
            factor = math.prod(self.size[i:])
            outer, axis = sch[op].split(axis, factor=factor)
            out.append(outer)
        return out + [axis]

    def __repr__(self) -> str:
        return str(self.size)


class SplitSpace(TransformSpace):
    """The splits of one axis into `num_outputs` factors.

    policy "factors" (divisors: no tail), "power2" (powers of two <= the length), "verbose"
    (both; may leave a tail, which lowering guards) or "candidate" (candidate=[[...], ...]);
    max_factor bounds every inner factor, filter(entity) -> bool keeps some, no_tail forces
    the product of the inner factors to divide the length.
    """

    POLICIES = ("factors", "power2", "verbose", "candidate")

    def __init__(self, axes, policy, **kwargs):
        super().__init__()
        if policy not in self.POLICIES:
            raise TuningError(f"define_split: unknown policy {policy!r}; use one of {list(self.POLICIES)}")
        self.policy = policy
        self.product = axes[0].length
        self.num_output = int(kwargs.get("num_outputs", 0))
        if self.num_output < 1:
            raise TuningError("define_split: num_outputs must be given and >= 1")
        if policy == "candidate":
            for size in kwargs["candidate"]:
                if len(size) != self.num_output:
                    raise TuningError(f"define_split: candidate {list(size)} has {len(size)} factors, "
                                      f"num_outputs is {self.num_output}")
                self.entities.append(SplitEntity(size))
        else:
            max_factor = kwargs.get("max_factor", 1 << 31)
            divisors = get_factors(self.product)
            pow2s = get_pow2s(self.product)
            pool = {"factors": divisors, "power2": pow2s, "verbose": sorted(set(divisors) | set(pow2s))}[policy]
            self.factors = [f for f in pool if f <= max_factor]
            no_tail = kwargs.get("no_tail", policy == "factors")
            self.entities = self._enumerate(no_tail)
        keep = kwargs.get("filter")
        if keep is not None:
            self.entities = [e for e in self.entities if keep(e)]
        if not self.entities:
            raise TuningError(f"define_split: no split of length {self.product} satisfies the policy "
                              f"{policy!r} and its filter")

    def _enumerate(self, no_tail: bool) -> list:
        """Inner factors chosen from self.factors; the innermost factor varies slowest, so the
        entity indices are TVM's (records name configs by index)."""
        out = []
        for inner in itertools.product(self.factors, repeat=self.num_output - 1):
            prod = math.prod(inner)
            if prod > self.product:
                continue
            if self.product % prod == 0 or (not no_tail and prod < self.product):
                out.append(SplitEntity([-1] + list(reversed(inner))))
        return out

    @staticmethod
    def get_num_output(axes, policy, **kwargs) -> int:
        return int(kwargs.get("num_outputs", 0))

    def __repr__(self) -> str:
        return (f"Split(policy={self.policy}, product={self.product}, num_outputs={self.num_output}) "
                f"len={len(self)}")


# --- reorder -------------------------------------------------------------------------------------
class ReorderEntity:
    """A permutation of axes: new order = [axes[i] for i in perm]."""

    def __init__(self, perm):
        self.perm = list(perm)

    def apply(self, sch, op, axes) -> list:
        order = [axes[i] for i in self.perm if i < len(axes)]
        sch[op].reorder(*order)
        return order

    def __repr__(self) -> str:
        return str(self.perm)


def _interleavings(chains) -> list:
    """Every merge of the chains that keeps each chain's order, taking from the longest
    remaining chain first on ties (the spatial order TVM's interleave policy keeps)."""
    out = []

    def walk(pos, acc):
        remaining = [len(c) - p for c, p in zip(chains, pos)]
        if not any(remaining):
            out.append(list(acc))
            return
        longest = max(range(len(chains)), key=lambda k: (remaining[k], -k))
        for k, chain in enumerate(chains):
            if remaining[k] and k == longest:
                pos[k] += 1
                walk(pos, acc + [chain[pos[k] - 1]])
                pos[k] -= 1
    walk([0] * len(chains), [])
    return out


class ReorderSpace(TransformSpace):
    """Orders of a list of axes: "identity", "all" (every permutation), "interval_all"
    (interval=(begin, end): permute that slice), "candidate" (candidate=[[axes...], ...]),
    "interleave" / "interleave_cuda" (spatial=[chains], reduce=[chains])."""

    def __init__(self, axes, policy, **kwargs):
        super().__init__()
        self.ins, self.policy, self.num_output = axes, policy, len(axes)
        n = len(axes)
        index = {id(a): k for k, a in enumerate(axes)}

        def positions(chain):
            return [index[id(a)] for a in chain]
        if policy == "identity":
            perms = [list(range(n))]
        elif policy == "all":
            perms = [list(p) for p in itertools.permutations(range(n))]
        elif policy == "interval_all":
            begin, end = kwargs["interval"]
            perms = [list(range(begin)) + list(p) + list(range(end, n))
                     for p in itertools.permutations(range(begin, end))]
        elif policy == "candidate":
            perms = [positions(c) for c in kwargs["candidate"]]
        elif policy in ("interleave", "interleave_cuda"):
            spatial = [positions(c) for c in kwargs["spatial"]]
            reduce = [positions(c) for c in kwargs["reduce"]]
            outer = _interleavings([c[:-1] for c in spatial])
            if policy == "interleave":
                inner = _interleavings([c[-1:] for c in spatial] + reduce)
                perms = [o + i for o in outer for i in inner]
            else:
                tail = [c[-1] for c in spatial]
                perms = [o + r + tail for o in outer for r in _interleavings(reduce)]
        else:
            raise TuningError(f"define_reorder: unknown policy {policy!r}; use identity, all, "
                              f"interval_all, candidate, interleave or interleave_cuda")
        self.entities = [ReorderEntity(p) for p in perms]

    @staticmethod
    def get_num_output(axes, policy, **kwargs) -> int:
        return len(axes)

    def __repr__(self) -> str:
        return f"Reorder(policy={self.policy}) len={len(self)}"


# --- annotate ------------------------------------------------------------------------------------
GPU_THREADS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z",
               "vthread")
ANNOTATIONS = ("none", "vec", "unroll", *GPU_THREADS, "fuse")


class AnnotateEntity:
    """One annotation per axis: "none", "vec", "unroll", a GPU thread tag or "fuse" (with the
    next axis); for the "locate_cache" policy, the axis index each cache stage attaches at."""

    def __init__(self, anns):
        self.anns = list(anns)

    def apply(self, sch, op, axes, axis_lens=None, max_unroll=None, vec_size=None, cfg=None,
              source=None) -> list:
        """Annotate `axes` of stage `op`; with max_unroll / vec_size, an unroll or vector
        length out of range is reported through cfg.raise_error (an invalid config)."""
        from ... import te
        axes = list(axes)
        if source is not None:          # locate_cache: attach each source stage at its axis
            for stages, at in zip(source, self.anns):
                for t in stages:
                    sch[t].compute_at(sch[op], axes[at])
            return axes
        for i, ann in enumerate(self.anns):
            if ann == "unroll":
                if max_unroll and axis_lens and axis_lens[i] > max_unroll and cfg is not None:
                    cfg.raise_error("Too large factor for unrolling")
                sch[op].unroll(axes[i])
            elif ann == "vec":
                if vec_size and axis_lens and axis_lens[i] not in vec_size and cfg is not None:
                    cfg.raise_error("Wrong size of lanes in vectorization")
                sch[op].vectorize(axes[i])
            elif ann in GPU_THREADS:
                sch[op].bind(axes[i], te.thread_axis(ann))
            elif ann == "fuse":
                if i + 1 >= len(axes):
                    raise TuningError("annotate: 'fuse' needs a next axis to fuse with")
                axes[i + 1] = sch[op].fuse(axes[i], axes[i + 1])
            elif ann != "none":
                raise TuningError(f"annotate: unknown annotation {ann!r}; use one of {list(ANNOTATIONS)}")
        return axes

    def __repr__(self) -> str:
        return str(self.anns)


_GPU_LAYOUTS = {
    "bind_gpu": ((6, ["blockIdx.z", "blockIdx.y", "blockIdx.x", "threadIdx.z", "threadIdx.y", "threadIdx.x"]),
                 (4, ["blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"]),
                 (2, ["blockIdx.x", "threadIdx.x"])),
    "bind_gpu_virtual": ((9, ["blockIdx.z", "blockIdx.y", "blockIdx.x", "vthread", "vthread", "vthread",
                              "threadIdx.z", "threadIdx.y", "threadIdx.x"]),
                         (6, ["blockIdx.y", "blockIdx.x", "vthread", "vthread", "threadIdx.y", "threadIdx.x"]),
                         (3, ["blockIdx.x", "vthread", "threadIdx.x"])),
}


class AnnotateSpace(TransformSpace):
    """Annotations of a list of axes. Policies: "bind_gpu" / "bind_gpu_virtual" (one entity:
    the innermost axes bound to blocks and threads, the rest fused into them), "locate_cache"
    (num_anchor=k: every choice of k axes), or "_"-joined per-axis choices such as
    "try_unroll", "try_vec", "try_unroll_vec", "unroll", "vec" ("try" adds "none"); at most
    one axis is vectorized."""

    def __init__(self, axes, policy, **kwargs):
        super().__init__()
        self.ins, self.policy, self.num_output = axes, policy, len(axes)
        n = len(axes)
        if policy in _GPU_LAYOUTS:
            for need, tags in _GPU_LAYOUTS[policy]:
                if n >= need:
                    self.entities = [AnnotateEntity(["fuse"] * (n - need) + tags)]
                    break
            else:
                raise TuningError(f"define_annotate: {policy} needs at least "
                                  f"{_GPU_LAYOUTS[policy][-1][0]} axes, got {n}")
        elif policy == "locate_cache":
            self.entities = [AnnotateEntity(c) for c in itertools.combinations(range(n), kwargs["num_anchor"])]
        else:
            choices = policy.replace("try", "none").split("_")
            for c in choices:
                if c not in ("none", "unroll", "vec"):
                    raise TuningError(f"define_annotate: unknown policy {policy!r}")
            for combo in itertools.product(choices, repeat=n):   # the first axis varies slowest
                if combo.count("vec") <= 1:
                    self.entities.append(AnnotateEntity(combo))

    @staticmethod
    def get_num_output(axes, policy, **kwargs) -> int:
        return len(axes)

    def __repr__(self) -> str:
        return f"Annotate(policy={self.policy}) len={len(self)}"


# --- other options -------------------------------------------------------------------------------
class OtherOptionEntity:
    """One value of a define_knob knob (cfg["unroll_kw"].val)."""

    def __init__(self, val):
        self.val = val

    def __repr__(self) -> str:
        return str(self.val)


class OtherOptionSpace(TransformSpace):
    """A knob with a list of candidate values."""

    def __init__(self, axes, policy, **kwargs):
        super().__init__()
        candidate = list(kwargs["candidate"])
        if not candidate:
            raise TuningError("define_knob: give at least one candidate value")
        self.entities = [OtherOptionEntity(v) for v in candidate]

    def __repr__(self) -> str:
        return f"OtherOption({self.entities}) len={len(self)}"
