"""Schedules: how each operation's loops are arranged, without changing what is computed.

`create_schedule(outs)` makes one Stage per operation reachable from the outputs (inputs
first). A Stage records its leaf iteration axes and the split/fuse relations that derived
them, per-axis annotations (parallel, vectorized, unrolled, GPU thread binding) and where it
is computed (at the root, inlined into consumers, or inside a consumer's loop). Extents of
derived axes are computed at lowering time, from the (possibly inferred) root domains.
"""
from ..errors import CompileError
from ..tir import expr as E
from ..tir.functor import rewrite, substitute
from ..tir.partition_branches import PARTITION
from ..tir.unroll import NO_UNROLL, UNROLL_EXPLICIT
from .tensor import ComputeOp, PlaceholderOp, Tensor


class Split:
    """parent = outer * factor + inner (factor, or nparts = the outer extent)."""
    __slots__ = ("parent", "outer", "inner", "factor", "nparts")

    def __init__(self, parent, outer, inner, factor, nparts):
        self.parent, self.outer, self.inner = parent, outer, inner
        self.factor, self.nparts = factor, nparts


class Fuse:
    """fused = outer * extent(inner) + inner."""
    __slots__ = ("outer", "inner", "fused")

    def __init__(self, outer, inner, fused):
        self.outer, self.inner, self.fused = outer, inner, fused


def _derived(name, iter_type):
    return E.IterVar(None, E.Var(name, "int32"), iter_type)


class Stage:
    """The schedule of one operation (access as schedule[tensor])."""

    def __init__(self, op, schedule):
        self.op = op
        self.schedule = schedule
        self.scope = "global"
        self.attach_type = "root"     # "root" | "inline" | "scope"
        self.attach_stage = None
        self.attach_ivar = None
        self.reset_axes()

    def reset_axes(self):
        op = self.op
        self.all_iter_vars = list(getattr(op, "axis", [])) + list(getattr(op, "reduce_axis", []))
        self.leaf_iter_vars = list(self.all_iter_vars)
        self.relations = []
        self.iter_attrs = {}          # id(ivar) -> {"kind": ..., "thread": tag, annotation: value} (_mark)

    def __repr__(self):
        return f"stage({self.op.name}, {self.attach_type})"

    # -- helpers ----------------------------------------------------------------------------
    def _leaf_index(self, ivar, what):
        for k, iv in enumerate(self.leaf_iter_vars):
            if iv is ivar:
                return k
        names = [iv.var.name for iv in self.leaf_iter_vars]
        raise CompileError(f"{what} on stage {self.op.name}: axis "
                           f"{getattr(getattr(ivar, 'var', None), 'name', ivar)!r} is not a "
                           f"current leaf axis ({names}); it was split/fused already or "
                           "belongs to another stage")

    def _check_compute(self, what):
        if not isinstance(self.op, ComputeOp):
            raise CompileError(f"{what}: stage {self.op.name} is a placeholder (an input); only "
                               "compute stages can be scheduled")

    # -- loop transformations -----------------------------------------------------------------
    def split(self, parent, factor=None, nparts=None):
        """Split axis `parent` into (outer, inner); inner has extent `factor` (or outer has
        extent `nparts`). Non-dividing factors are guarded, so results stay correct."""
        self._check_compute("split")
        if (factor is None) == (nparts is None):
            raise CompileError(f"split on {self.op.name}: give exactly one of factor= or nparts=")
        amount = factor if factor is not None else nparts
        if isinstance(amount, int) and amount <= 0:
            raise CompileError(f"split on {self.op.name}: factor/nparts must be positive, "
                               f"got {amount}")
        k = self._leaf_index(parent, "split")
        outer = _derived(f"{parent.var.name}.outer", parent.iter_type)
        inner = _derived(f"{parent.var.name}.inner", parent.iter_type)
        self.relations.append(Split(parent, outer, inner,
                                    E.convert(factor) if factor is not None else None,
                                    E.convert(nparts) if nparts is not None else None))
        self.leaf_iter_vars[k:k + 1] = [outer, inner]
        return outer, inner

    def fuse(self, *axes):
        """Fuse consecutive leaf axes (outermost first) into one axis."""
        self._check_compute("fuse")
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        if not axes:
            raise CompileError(f"fuse on {self.op.name}: give at least one axis")
        fused = axes[0]
        for nxt in axes[1:]:
            ko = self._leaf_index(fused, "fuse")
            ki = self._leaf_index(nxt, "fuse")
            if ki != ko + 1:
                raise CompileError(f"fuse on {self.op.name}: axes {fused.var.name} and "
                                   f"{nxt.var.name} are not adjacent, outer first; reorder first")
            if fused.iter_type != nxt.iter_type:
                raise CompileError(f"fuse on {self.op.name}: cannot fuse a data axis with a "
                                   "reduction axis")
            new = _derived(f"{fused.var.name}.{nxt.var.name}.fused", fused.iter_type)
            self.relations.append(Fuse(fused, nxt, new))
            self.leaf_iter_vars[ko:ki + 1] = [new]
            fused = new
        return fused

    def reorder(self, *axes):
        """Put these leaf axes in this order (in the positions they occupy together)."""
        self._check_compute("reorder")
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        positions = sorted(self._leaf_index(a, "reorder") for a in axes)
        if len(set(id(a) for a in axes)) != len(axes):
            raise CompileError(f"reorder on {self.op.name}: an axis is repeated")
        for pos, ax in zip(positions, axes):
            self.leaf_iter_vars[pos] = ax

    def tile(self, x_parent, y_parent, x_factor, y_factor):
        """Split x and y and order the result (x.outer, y.outer, x.inner, y.inner)."""
        xo, xi = self.split(x_parent, x_factor)
        yo, yi = self.split(y_parent, y_factor)
        self.reorder(xo, yo, xi, yi)
        return xo, yo, xi, yi

    def _mark(self, ivar, what, key, value):
        """Record loop attribute `key` = `value` on leaf axis `ivar` of this compute stage (`what`
        names the schedule call in errors). te.lower makes "kind" the loop's kind, "thread" its
        thread binding, and every other attribute a For annotation."""
        self._check_compute(what)
        self._leaf_index(ivar, what)
        self.iter_attrs.setdefault(id(ivar), {})[key] = value

    def _annotate(self, ivar, kind, what):
        self._mark(ivar, what, "kind", kind)

    def vectorize(self, ivar, width: int = None):
        """Mark `ivar` for LLVM's loop vectorizer; `width` (lanes) overrides its cost model's
        choice (llvm.loop.vectorize.width), e.g. 16 int32 lanes over int16 loads so that a
        reduction of 16-bit products reaches the 16-lane vpmaddwd form."""
        self._annotate(ivar, "vectorized", "vectorize")
        if width is not None:
            if not isinstance(width, int) or width < 2 or width & (width - 1):
                raise CompileError(f"vectorize on {self.op.name}: width must be a power of two "
                                   f">= 2, got {width!r}")
            self.iter_attrs[id(ivar)]["vector_width"] = width

    def _check_data_axis(self, ivar, what):
        """Reject running a reduction axis concurrently: its iterations all update the same
        output element, so parallel/bound loops would race and give a wrong sum."""
        if ivar.iter_type == "reduce":
            raise CompileError(f"{what} on stage {self.op.name}: axis {ivar.var.name!r} is a "
                               "reduction axis; its iterations accumulate into the same output "
                               "element and would race; parallelize a data axis instead")

    def parallel(self, ivar):
        self._check_compute("parallel")
        self._leaf_index(ivar, "parallel")
        self._check_data_axis(ivar, "parallel")
        self._annotate(ivar, "parallel", "parallel")

    def unroll(self, ivar, explicit: bool = True):
        """Unroll `ivar`'s loop. explicit=True (TVM's default, `unroll_explicit`): tir/unroll.py
        writes one copy of the body per iteration before code generation. explicit=False: the
        loop stays one loop carrying llvm.loop.unroll.full and LLVM's unroller makes the copies,
        which is cheaper to build for a long unrolled reduction whose body does not branch on
        the loop variable (each copy otherwise costs the code generator its own statements)."""
        self._annotate(ivar, "unrolled", "unroll")
        if not explicit:
            self.iter_attrs[id(ivar)][UNROLL_EXPLICIT] = False

    def no_unroll(self, ivar):
        """Keep `ivar`'s serial loop a loop in the machine code: it carries
        llvm.loop.unroll.disable, so LLVM's unrollers (full, partial, runtime) leave it alone.
        For loops whose unrolled copies cost the compiler more than they buy at run time, e.g.
        the short row loops of a memory-bound concatenation (strategy/x86_concat.py)."""
        self._mark(ivar, "no_unroll", NO_UNROLL, True)

    def partition(self, ivar):
        """Split the serial loop of `ivar` where its variable changes which buffer a Select
        reads (tir/partition_branches.py): one plain loop per piece, e.g. one per input of a
        concatenation when `ivar` is its concatenation axis."""
        self._mark(ivar, "partition", PARTITION, True)

    def bind(self, ivar, thread_ivar):
        """Execute axis `ivar` by the GPU thread index of `thread_ivar` (te.thread_axis).

        A reduction axis may be bound to a threadIdx dimension: each thread then accumulates a
        partial result and lowering combines the partials across those threads
        (tir.ThreadAllReduce), as TVM's cross-thread reduction does."""
        self._check_compute("bind")
        self._leaf_index(ivar, "bind")
        if not isinstance(thread_ivar, E.IterVar) or not thread_ivar.thread_tag:
            raise CompileError(f"bind on {self.op.name}: expects a te.thread_axis, "
                               f"got {thread_ivar!r}")
        if not (ivar.iter_type == "reduce" and thread_ivar.thread_tag.startswith("threadIdx.")):
            self._check_data_axis(ivar, "bind")
        self.iter_attrs.setdefault(id(ivar), {})["thread"] = thread_ivar.thread_tag

    # -- placement ------------------------------------------------------------------------------
    def compute_inline(self):
        """Substitute this stage's expression into its consumers (no loops, no buffer)."""
        self._check_compute("compute_inline")
        if self.op.is_reduction or self.op.num_outputs != 1:
            raise CompileError(f"compute_inline: {self.op.name} is a reduction or has several "
                               "outputs; only injective single-output computes can be inlined")
        if self.op in self.schedule.outputs:
            raise CompileError(f"compute_inline: {self.op.name} is an output of the schedule")
        self.attach_type = "inline"

    def compute_at(self, parent, ivar):
        """Compute this stage inside `parent`'s loop `ivar`, only the region that the
        iteration of that loop reads."""
        self._check_compute("compute_at")
        if not isinstance(parent, Stage):
            raise CompileError("compute_at: the first argument is the consumer's stage, s[T]")
        parent._leaf_index(ivar, "compute_at")
        if self.op in self.schedule.outputs:
            raise CompileError(f"compute_at: {self.op.name} is an output of the schedule")
        self.attach_type = "scope"
        self.attach_stage = parent
        self.attach_ivar = ivar

    def compute_root(self):
        self.attach_type = "root"
        self.attach_stage = self.attach_ivar = None

    def set_scope(self, scope):
        self.scope = scope


class Schedule:
    """Stages of every operation reachable from `outputs`, producers before consumers."""

    def __init__(self, outputs):
        self.outputs = [t.op for t in outputs]
        self.stages = []
        self.stage_map = {}
        for op in _topo_ops(self.outputs):
            self._add(op)

    def _add(self, op, before=None):
        st = Stage(op, self)
        if before is None:
            self.stages.append(st)
        else:
            self.stages.insert(self.stages.index(before), st)
        self.stage_map[op] = st
        return st

    def __getitem__(self, key):
        op = key.op if isinstance(key, Tensor) else key
        if op not in self.stage_map:
            raise CompileError(f"schedule has no stage for {getattr(op, 'name', op)}; is it "
                               "reachable from the outputs given to create_schedule?")
        return self.stage_map[op]

    def cache_read(self, tensor, scope, readers):
        """Copy `tensor` into a new stage of storage `scope` (e.g. "shared") that `readers`
        (ops or tensors) read instead of `tensor`; returns the cache tensor. Attach it with
        compute_at: a "shared" cache covers what every thread of the block reads."""
        readers = [r.op if isinstance(r, Tensor) else r for r in readers]
        for op in readers:
            if not isinstance(op, ComputeOp) or op not in self.stage_map:
                raise CompileError(f"cache_read of {tensor.name}: reader "
                                   f"{getattr(op, 'name', op)} is not a compute stage of this schedule")
        axis = [E.IterVar(E.Range(0, d), E.Var(f"ax{k}", "int32"), "data")
                for k, d in enumerate(tensor.shape)]
        cache_op = ComputeOp(f"{tensor.name}.{scope}", "", {}, axis,
                             [tensor[tuple(iv.var for iv in axis)]])
        cache = cache_op.outputs[0]

        def redirect(n):
            if isinstance(n, E.ProducerLoad) and n.producer is tensor:
                return E.ProducerLoad(cache, n.indices)
            return None
        for op in readers:
            op.set_body([rewrite(b, redirect) for b in op.body])
        first = min(self.stages.index(self[op]) for op in readers)
        stage = self._add(cache_op, before=self.stages[first])
        stage.scope = scope
        return cache

    def cache_write(self, tensor, scope):
        """Compute `tensor`'s op into a new cache stage of storage `scope` (e.g. "local")
        and make the original stage copy from it; returns the cache tensor(s)."""
        op = tensor.op
        if not isinstance(op, ComputeOp):
            raise CompileError(f"cache_write: {tensor.name} is not a compute")
        stage = self[op]
        if stage.relations or stage.attach_type != "root":
            raise CompileError(f"cache_write on {op.name}: call it before other scheduling of "
                               "this stage")
        new_axis = [E.IterVar(iv.dom, E.Var(iv.var.name + ".c", "int32"), "data")
                    for iv in op.axis]
        vmap = {iv.var: niv.var for iv, niv in zip(op.axis, new_axis)}
        body = [substitute(b, vmap) for b in op.body]
        cache_op = ComputeOp(f"{op.name}.{scope}", op.tag, op.attrs, new_axis, body)
        op.set_body([t[tuple(iv.var for iv in op.axis)] for t in cache_op.outputs])
        stage.reset_axes()
        cache_stage = self._add(cache_op, before=stage)
        cache_stage.scope = scope
        outs = cache_op.outputs
        return outs if len(outs) > 1 else outs[0]


def _topo_ops(outputs):
    """Operations reachable from `outputs`, each after its inputs (iterative DFS)."""
    order, done, stack = [], set(), [(op, False) for op in reversed(outputs)]
    while stack:
        op, ready = stack.pop()
        if id(op) in done:
            continue
        if ready:
            done.add(id(op))
            order.append(op)
            continue
        stack.append((op, True))
        for t in reversed(op.input_tensors()):
            if id(t.op) not in done:
                stack.append((t.op, False))
    return order


def create_schedule(outs):
    """A default schedule (every stage at the root, loops in axis order) for `outs`: te Tensors
    or, as TVM's create_schedule takes them, their operations (an op stands for its outputs)."""
    if isinstance(outs, (Tensor, ComputeOp)):
        outs = [outs]
    outs = [t for item in outs for t in (
        [item.output(k) for k in range(item.num_outputs)] if isinstance(item, ComputeOp) else [item])]
    for t in outs:
        if not isinstance(t, Tensor):
            raise CompileError(f"create_schedule: expects te Tensors, got {t!r}")
        if isinstance(t.op, PlaceholderOp):
            raise CompileError(f"create_schedule: output {t.name} is a placeholder")
    return Schedule(outs)
