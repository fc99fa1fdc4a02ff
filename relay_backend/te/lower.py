"""Lowering te -> tir: turn a Schedule into a PrimFunc whose loop nests honor it.

Per stage, in producer-before-consumer order:
* inlined stages disappear: their expression is substituted into every consumer;
* a root stage becomes one loop per leaf axis; root axes are recovered from the leaves
  through the split/fuse relations, and each split that may not divide evenly adds a guard
  (placed at the innermost loop it mentions) so the results stay exact;
* a reduction becomes an init nest (data loops only) then an update nest, sharing the
  leading data loops; tuple reductions update every output from one combine step;
* a compute_at stage is built inside its consumer's loop, over the region one iteration of
  that loop reads (te/bound.py), into a buffer allocated there and indexed relative to the
  region (a "shared" stage covers what all threads of the block read: the threadIdx loops
  around the attach point are relaxed, as TVM's bound inference does); other intermediates
  not in `args` are allocated at the top of the function;
* a reduction with a reduce axis bound to a threadIdx dimension accumulates per thread into a
  local buffer and ends with a tir.ThreadAllReduce that combines the threads' partials.
A loop marked `partition` is split where its variable changes which buffer a Select reads
(tir/partition_branches.py), and an unrolled loop whose variable picks the buffer a Select reads
is expanded into one copy per iteration (tir/unroll_branches.py); the result is simplified and
verified.
"""
from collections import defaultdict

from ..errors import CompileError
from ..tir import expr as E
from ..tir import stmt as S
from ..tir.buffer import Buffer
from ..tir.functor import copy_with, rewrite, substitute, walk
from ..tir.prim_func import PrimFunc
from ..tir.simplify import simplify
from ..tir.partition_branches import partition_branching_loops
from ..tir.unroll_branches import expand_branching_unrolled
from ..tir.verify import verify
from .bound import infer_region
from .extern import ExternOp
from .schedule import Fuse, Schedule, Split
from .tensor import ComputeOp, PlaceholderOp, Tensor


def lower(sch, args, name="main", simple_mode=False):
    """The PrimFunc computing `sch`'s outputs; `args` (Tensors: inputs, then outputs) become
    its buffer parameters in that order. `simple_mode` is accepted for tvm compatibility."""
    if not isinstance(sch, Schedule):
        raise CompileError(f"lower: expects a te Schedule (te.create_schedule), got {sch!r}")
    return _Lowering(sch, list(args), name).run()


def _vars_in(e):
    return {id(n) for n in walk(e) if isinstance(n, E.Var)}


def _thread_of(stage, ivar):
    """The GPU thread tag `ivar` is bound to in `stage`, or None."""
    return stage.iter_attrs.get(id(ivar), {}).get("thread")


class _Lowering:
    def __init__(self, sch, args, name):
        self.sch = sch
        self.name = name
        self.buffers = {}       # id(tensor) -> Buffer
        self.offsets = {}       # id(tensor) -> [lo per dim] for region-allocated buffers
        self.params = []
        self.bodies = {}        # id(op) -> body exprs with inlined producers substituted
        self._names = set()
        self._thread_loops = {}  # id(var) -> (0, hi): threadIdx loops around the stage being built
        for t in args:
            if not isinstance(t, Tensor):
                raise CompileError(f"lower {name}: args must be te Tensors, got {t!r}")
            if id(t) in self.buffers:
                raise CompileError(f"lower {name}: tensor {t.name} appears twice in args")
            buf = Buffer(self._unique(t.name), t.shape, t.dtype)
            self.buffers[id(t)] = buf
            self.params.append(buf)

    def _unique(self, base):
        base = base or "buf"
        name, k = base, 0
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    # -- driver -----------------------------------------------------------------------------
    def run(self):
        stages = self.sch.stages
        self._materialize_extern_inputs()
        for st in stages:
            op = st.op
            if isinstance(op, ExternOp):
                if op in self.sch.outputs and id(op.outputs[0]) not in self.buffers:
                    raise CompileError(f"lower {self.name}: output {op.name} is not in args; pass "
                                       "the outputs after the inputs")
                continue
            if isinstance(op, PlaceholderOp):
                if id(op.outputs[0]) not in self.buffers:
                    raise CompileError(f"lower {self.name}: input {op.name} is read but not in "
                                       "args; pass every placeholder in args")
                continue
            if st.attach_type == "inline":
                if any(id(t) in self.buffers for t in op.outputs):
                    raise CompileError(f"lower {self.name}: {op.name} is inlined, so it cannot be "
                                       "an argument")
            elif op in self.sch.outputs and id(op.outputs[0]) not in self.buffers:
                raise CompileError(f"lower {self.name}: output {op.name} is not in args; pass "
                                   "the outputs after the inputs")
            self.bodies[id(op)] = [self._inline(b) for b in op.body]
        self._check_attachments()
        root_temps = []
        for st in stages:
            if isinstance(st.op, (ComputeOp, ExternOp)) and st.attach_type == "root":
                for t in st.op.outputs:
                    if id(t) not in self.buffers:
                        buf = Buffer(self._unique(t.name), t.shape, t.dtype, scope="global")
                        self.buffers[id(t)] = buf
                        root_temps.append(buf)
        body = S.seq(*[self._build_extern(st.op, root_temps) if isinstance(st.op, ExternOp)
                       else self._build(st, None) for st in stages
                       if isinstance(st.op, (ComputeOp, ExternOp)) and st.attach_type == "root"])
        for buf in reversed(root_temps):
            body = S.Allocate(buf, body, "global")
        func = PrimFunc(self.params, body, self.name,
                        {"global_symbol": self.name, "tir.noalias": True})
        return verify(simplify(expand_branching_unrolled(partition_branching_loops(func))))

    def _materialize_extern_inputs(self):
        """An extern reads its inputs from memory: a stage it reads is computed at the root."""
        for st in self.sch.stages:
            if isinstance(st.op, ExternOp):
                if st.attach_type != "root":
                    raise CompileError(f"lower {self.name}: extern stage {st.op.name} must stay at the root")
                for t in st.op.inputs:
                    producer = self.sch.stage_map.get(t.op)
                    if producer is not None and producer.attach_type == "inline":
                        producer.attach_type = "root"

    def _build_extern(self, op, root_temps):
        """The extern's statement over the real buffers of its inputs and outputs. Its outermost
        global scratch buffers join the function's root temporaries, and a statement with no
        GPU thread binding runs inside a one-block, one-thread launch (serial loops of extent 1
        on a CPU), so every target can compile it."""
        remap = {}
        for placeholder, t in zip(op.input_placeholders + op.output_placeholders, op.inputs + op.outputs):
            if id(t) not in self.buffers:
                raise CompileError(f"lower {self.name}: {t.name}, read by extern {op.name}, has no buffer")
            remap[id(placeholder)] = self.buffers[id(t)]

        # a view fcompute made of a placeholder (same data, another shape) views the real buffer
        by_data = {id(placeholder.data): remap[id(placeholder)]
                   for placeholder in op.input_placeholders + op.output_placeholders}
        views = {}

        def real_buffer(buf):
            if id(buf) in remap:
                return remap[id(buf)]
            real = by_data.get(id(buf.data))
            if real is None:
                return None
            if id(buf) not in views:
                views[id(buf)] = Buffer(buf.name, buf.shape, buf.dtype, data=real.data, strides=buf.strides,
                                        scope=real.scope)
            return views[id(buf)]

        def fn(n):
            if isinstance(n, (E.BufferLoad, S.BufferStore)):
                real = real_buffer(n.buffer)
                return None if real is None else copy_with(n, buffer=real)
            return None
        body = rewrite(op.body, fn)
        local = []
        while isinstance(body, S.Allocate):
            if body.scope == "global":
                root_temps.append(body.buffer)
            else:
                local.append(body)
            body = body.body
        for alloc in reversed(local):
            body = S.Allocate(alloc.buffer, body, alloc.scope)
        if not any(isinstance(n, S.For) and n.thread_binding for n in walk(body)):
            thread = S.For(E.Var(f"{op.name}_tx", "int32"), 0, 1, "serial", body, "threadIdx.x")
            body = S.For(E.Var(f"{op.name}_bx", "int32"), 0, 1, "serial", thread, "blockIdx.x")
        return body

    def _inline(self, expr):
        def fn(n):
            if isinstance(n, E.ProducerLoad):
                op = n.producer.op
                st = self.sch.stage_map.get(op)
                if st is not None and st.attach_type == "inline":
                    return substitute(self.bodies[id(op)][0],
                                      {iv.var: i for iv, i in zip(op.axis, n.indices)})
            return None
        return rewrite(expr, fn)

    def _check_attachments(self):
        for st in self.sch.stages:
            if st.attach_type != "scope":
                continue
            parent = st.attach_stage
            if parent.attach_type == "inline":
                raise CompileError(f"compute_at: {st.op.name} is attached to {parent.op.name}, "
                                   "which is inlined")
            ids = {id(t) for t in st.op.outputs}
            order = self.sch.stages.index(st)
            for other in self.sch.stages:
                if other is parent or other is st or id(other.op) not in self.bodies:
                    continue
                if other.attach_type == "inline":
                    continue
                if (other.attach_type == "scope" and other.attach_stage is parent
                        and other.attach_ivar is st.attach_ivar
                        and self.sch.stages.index(other) > order):
                    continue        # a later sibling at the same loop: its reads widen the region
                if any(isinstance(n, E.ProducerLoad) and id(n.producer) in ids
                       for b in self.bodies[id(other.op)] for n in walk(b)):
                    raise CompileError(f"compute_at: {st.op.name} is computed inside "
                                       f"{parent.op.name} but {other.op.name} reads it too; "
                                       "keep it at the root")

    # -- one stage --------------------------------------------------------------------------
    def _axes(self, st, region):
        """Extents of every iter var, values of the root vars, and split guards."""
        op = st.op
        ext, mins = {}, {}
        for d, iv in enumerate(op.axis):
            lo, extent = (region[d][0], region[d][1]) if region else (E.IntImm("int32", 0),
                                                                       iv.dom.extent)
            ext[id(iv)], mins[id(iv)] = extent, lo
        for iv in op.reduce_axis:
            ext[id(iv)], mins[id(iv)] = iv.dom.extent, iv.dom.min
        factors = {}
        for rel in st.relations:
            if isinstance(rel, Split):
                extent = ext[id(rel.parent)]
                if rel.factor is not None:
                    f = rel.factor
                    ext[id(rel.outer)] = simplify((extent + f - 1) // f)
                else:
                    f = simplify((extent + rel.nparts - 1) // rel.nparts)
                    ext[id(rel.outer)] = rel.nparts
                ext[id(rel.inner)] = f
                factors[id(rel)] = f
            else:
                ext[id(rel.fused)] = simplify(ext[id(rel.outer)] * ext[id(rel.inner)])
        val = {id(iv): iv.var for iv in st.leaf_iter_vars}
        guards = []
        for rel in reversed(st.relations):
            if isinstance(rel, Split):
                f = factors[id(rel)]
                val[id(rel.parent)] = val[id(rel.outer)] * f + val[id(rel.inner)]
                # exact only when the loops cover the parent exactly: outer * f == extent.
                # With factor=, f | extent implies it; with nparts=, f = ceil(extent / nparts)
                # may divide the extent while nparts * f exceeds it (6, nparts=4: 4 x 2 = 8).
                if rel.factor is not None:
                    exact = simplify(ext[id(rel.parent)] % f)
                else:
                    exact = simplify(ext[id(rel.outer)] * f - ext[id(rel.parent)])
                if not (isinstance(exact, E.IntImm) and exact.value == 0):
                    guards.append(val[id(rel.parent)] < ext[id(rel.parent)])
            elif isinstance(rel, Fuse):
                inner_ext = ext[id(rel.inner)]
                val[id(rel.outer)] = val[id(rel.fused)] // inner_ext
                val[id(rel.inner)] = val[id(rel.fused)] % inner_ext
        roots = list(op.axis) + list(op.reduce_axis)
        root_val = {iv.var: simplify(mins[id(iv)] + val[id(iv)]) for iv in roots}
        if region:
            for d, iv in enumerate(op.axis):
                if region[d][2]:
                    actual = root_val[iv.var]
                    guards += [actual >= 0, actual < st.op.outputs[0].shape[d]]
        return ext, root_val, guards

    def _to_buffers(self, expr):
        def fn(n):
            if isinstance(n, E.ProducerLoad):
                t = n.producer
                if id(t) not in self.buffers:
                    raise CompileError(f"lower {self.name}: {t.name} is read but has no buffer")
                offs = self.offsets.get(id(t))
                idx = n.indices if offs is None else [i - lo for i, lo in zip(n.indices, offs)]
                return E.BufferLoad(self.buffers[id(t)], idx)
            return None
        return rewrite(expr, fn)

    def _store_index(self, t, op, root_val):
        idx = [root_val[iv.var] for iv in op.axis]
        offs = self.offsets.get(id(t))
        return idx if offs is None else [i - lo for i, lo in zip(idx, offs)]

    def _build(self, st, region):
        op = st.op
        ext, root_val, guards = self._axes(st, region)
        body = [substitute(b, root_val) for b in self.bodies[id(op)]]
        leaves = st.leaf_iter_vars
        hooks = self._hooks(st, body, leaves, ext)
        if not op.is_reduction:
            main = S.seq(*[S.BufferStore(self.buffers[id(t)], self._to_buffers(b),
                                         self._store_index(t, op, root_val))
                           for t, b in zip(op.outputs, body)])
            return self._nest(st, leaves, main, guards, hooks, ext)
        red = body[0]
        p = next((k for k, iv in enumerate(leaves) if iv.iter_type == "reduce"), len(leaves))
        common, rest = leaves[:p], leaves[p:]
        init_loops = [iv for iv in rest if iv.iter_type != "reduce"]
        outs = [(self.buffers[id(t)], self._store_index(t, op, root_val)) for t in op.outputs]
        common_ids = {id(iv.var) for iv in common}
        init_ids = common_ids | {id(iv.var) for iv in init_loops}
        g_common, g_init, g_update = [], [], []
        for g in guards:
            used = _vars_in(g)
            if used & {id(iv.var) for iv in leaves} <= common_ids:
                g_common.append(g)
            else:
                if used & {id(iv.var) for iv in leaves} <= init_ids:
                    g_init.append(g)
                g_update.append(g)
        bound = [iv for iv in rest if iv.iter_type == "reduce" and _thread_of(st, iv)]
        if bound:
            inner = self._cross_thread(st, red, outs, rest, bound, g_update, hooks, ext)
            return self._nest(st, common, inner, g_common, hooks, ext)
        init = S.seq(*[S.BufferStore(b, ident, idx)
                       for (b, idx), ident in zip(outs, red.combiner.identity_element)])
        update = self._update(red, outs)
        init_nest = self._fresh_loops(st, init_loops, init, g_init, ext)
        inner = S.seq(init_nest, self._nest(st, rest, update, g_update, hooks, ext))
        return self._nest(st, common, inner, g_common, hooks, ext)

    def _cross_thread(self, st, red, outs, rest, bound, guards, hooks, ext):
        """A reduction with a reduce axis bound to a thread dimension: every thread folds its
        share into a local accumulator, then a ThreadAllReduce combines the threads' partials
        and stores the result.

            acc = identity
            for r in <reduce loops, one bound to threadIdx.x>: acc = combine(acc, source)
            v = allreduce(acc) over threadIdx.x: out[...] = v
        """
        name = st.op.name
        if len(bound) > 1:
            raise CompileError(f"lower {self.name}: {name} binds {len(bound)} reduction axes to "
                               f"threads; fuse them into one first")
        data_inside = [iv.var.name for iv in rest if iv.iter_type != "reduce"]
        if data_inside:
            raise CompileError(f"lower {self.name}: {name} has data axes {data_inside} inside its "
                               f"reduction loops; a cross-thread reduction needs every data axis "
                               f"outside the reduce axes (reorder them first)")
        tag = _thread_of(st, bound[0])
        accs = [Buffer(self._unique(f"{b.name}_red"), (1,), b.dtype, scope="local") for b, _ in outs]
        init = S.seq(*[S.BufferStore(a, ident, [0])
                       for a, ident in zip(accs, red.combiner.identity_element)])
        update = self._nest(st, rest, self._update(red, [(a, [0]) for a in accs]), guards, hooks, ext)
        results = [E.Var(f"{b.name}_v", b.dtype) for b, _ in outs]
        stores = S.seq(*[S.BufferStore(b, r, idx) for (b, idx), r in zip(outs, results)])
        body = S.seq(init, update, S.ThreadAllReduce(
            red.combiner, [E.BufferLoad(a, [0]) for a in accs], results, stores, tag))
        for a in reversed(accs):
            body = S.Allocate(a, body, "local")
        return body

    def _fresh_loops(self, st, loops, body, guards, ext):
        """The nest of `loops` over `body` with fresh loop Vars, so that no Var is the loop
        variable of two different loops (the init and update nests share data axes)."""
        fresh = [E.IterVar(None, E.Var(iv.var.name, "int32"), iv.iter_type) for iv in loops]
        vmap = {iv.var: nv.var for iv, nv in zip(loops, fresh)}
        ext = dict(ext)
        for iv, nv in zip(loops, fresh):
            ext[id(nv)] = ext[id(iv)]
            if id(iv) in st.iter_attrs:
                st.iter_attrs[id(nv)] = st.iter_attrs[id(iv)]
        return self._nest(st, fresh, substitute(body, vmap), [substitute(g, vmap) for g in guards],
                          {}, ext)

    def _update(self, red, outs):
        comb = red.combiner
        source = [self._to_buffers(s) for s in red.source]
        loads = [E.BufferLoad(b, idx) for b, idx in outs]
        vmap = {}
        for x, y, ld, src in zip(comb.lhs, comb.rhs, loads, source):
            vmap[x], vmap[y] = ld, src
        results = [substitute(r, vmap) for r in comb.result]
        if len(results) == 1:
            stmt = S.BufferStore(outs[0][0], results[0], outs[0][1])
        else:
            temps = [E.Var(f"{b.name}_v{k}", b.dtype) for k, (b, _) in enumerate(outs)]
            stmt = S.seq(*[S.BufferStore(b, tmp, idx) for (b, idx), tmp in zip(outs, temps)])
            for tmp, r in reversed(list(zip(temps, results))):
                stmt = S.LetStmt(tmp, r, stmt)
        cond = self._to_buffers(red.condition)
        if not (isinstance(cond, E.IntImm) and cond.value):
            stmt = S.IfThenElse(cond, stmt)
        return stmt

    def _nest(self, st, loops, inner, guards, hooks, ext):
        pos = {id(iv.var): k for k, iv in enumerate(loops)}
        by_level = defaultdict(list)
        for g in guards:
            ks = [pos[v] for v in _vars_in(g) if v in pos]
            by_level[max(ks) if ks else -1].append(g)
        stmt = inner
        for k in reversed(range(len(loops))):
            iv = loops[k]
            if by_level[k]:
                stmt = S.IfThenElse(E.all(*by_level[k]), stmt)
            entries = hooks.get(id(iv))
            if entries:        # attached producers first, their buffers live over the body
                stmt = S.seq(*[h for h, _ in entries], stmt)
                for _, bufs in reversed(entries):
                    for buf in reversed(bufs):
                        stmt = S.Allocate(buf, stmt, buf.scope)
            attrs = st.iter_attrs.get(id(iv), {})
            stmt = S.For(iv.var, 0, ext[id(iv)], attrs.get("kind", "serial"), stmt,
                         attrs.get("thread"),
                         {k: v for k, v in attrs.items() if k not in ("kind", "thread")} or None)
        if by_level[-1]:
            stmt = S.IfThenElse(E.all(*by_level[-1]), stmt)
        return stmt

    def _hooks(self, st, body, leaves, ext):
        """Build the stages computed at one of `st`'s loops:
        {id(leaf ivar): [(stmt, buffers to allocate around that loop's body)]}.

        A stage's region covers what `st`'s body reads of it and what the later stages attached
        at the same loop read (their regions are inferred first, latest first)."""
        hooks = defaultdict(list)
        children = [c for c in self.sch.stages
                    if c.attach_type == "scope" and c.attach_stage is st]
        plans = {}
        for child in reversed(children):
            k = next((i for i, iv in enumerate(leaves) if iv is child.attach_ivar), None)
            if k is None:
                raise CompileError(f"compute_at: {child.op.name} is attached to an axis that is "
                                   f"no longer a leaf of {st.op.name} (split or fused after "
                                   "compute_at)")
            inner = {}
            for iv in leaves[k + 1:]:
                e = simplify(ext[id(iv)])
                inner[id(iv.var)] = (0, e.value - 1) if isinstance(e, E.IntImm) else (0, None)
            # threads enclosing the attach point, as the child sees them
            threads = dict(self._thread_loops)
            for iv in leaves[:k + 1]:
                e = simplify(ext[id(iv)])
                if (_thread_of(st, iv) or "").startswith("threadIdx.") and isinstance(e, E.IntImm):
                    threads[id(iv.var)] = (0, e.value - 1)
            if child.scope == "shared":     # one copy per block: cover every thread's reads
                inner.update(threads)
            readers = list(body)
            for sibling in children[children.index(child) + 1:]:
                if sibling.attach_ivar is child.attach_ivar:
                    exprs, ranges = self._region_reads(sibling, plans[id(sibling)][0])
                    readers += exprs
                    inner.update(ranges)
            outs = child.op.outputs
            region = infer_region(outs, readers, inner, outs[0].shape)
            if region is None:
                raise CompileError(f"compute_at: {st.op.name} does not read {child.op.name}; "
                                   "attach a stage to one of its consumers")
            plans[id(child)] = (region, threads)
        for child in children:
            region, threads = plans[id(child)]
            shape = [r[1] for r in region]
            const_shape = all(isinstance(s, E.IntImm) for s in shape)
            scope = child.scope if const_shape else "global"
            bufs = []
            for t in child.op.outputs:
                buf = Buffer(self._unique(t.name), shape, t.dtype, scope=scope)
                self.buffers[id(t)] = buf
                self.offsets[id(t)] = [r[0] for r in region]
                bufs.append(buf)
            saved, self._thread_loops = self._thread_loops, threads
            try:
                hooks[id(child.attach_ivar)].append((self._build(child, region), bufs))
            finally:
                self._thread_loops = saved
        return hooks

    def _region_reads(self, stage, region):
        """(body exprs, ranges) of a stage computed over `region`: its axis i stands for
        lo_i + v_i with v_i in [0, extent_i), its reduce axes range over their domains."""
        op = stage.op
        vmap, ranges = {}, {}
        for iv, (lo, extent, _) in zip(op.axis, region):
            vmap[iv.var] = lo + iv.var
            e = simplify(extent)
            ranges[id(iv.var)] = (0, e.value - 1) if isinstance(e, E.IntImm) else (0, None)
        for iv in op.reduce_axis:
            lo, e = simplify(iv.dom.min), simplify(iv.dom.extent)
            ranges[id(iv.var)] = ((lo.value, lo.value + e.value - 1)
                                  if isinstance(lo, E.IntImm) and isinstance(e, E.IntImm) else (0, None))
        return [substitute(b, vmap) for b in self.bodies[id(op)]], ranges
