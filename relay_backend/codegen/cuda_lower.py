"""A GPU-scheduled PrimFunc -> device kernels with their launch shapes, ready to print as CUDA.

te.lower of a GPU schedule gives host code around kernels:

    allocate T (global)                      device workspace the launcher allocates
      for bx in blockIdx.x(0, ceil(n/256)):  kernel 0: one top-level statement; its grid and
        for tx in threadIdx.x(0, 256): ...    block come from the thread-bound loops inside
      for bx in blockIdx.x(...): ...         kernel 1, launched after kernel 0

`split_kernels` checks that every loop runs inside a thread-bound loop (a loop outside them
would run redundantly in every thread: the schedule forgot to bind it), that blockIdx loops
are outermost, and that a block has at most the target's thread limit. Then, per kernel:

* `lower_allreduce` turns each tir.ThreadAllReduce into a shared-memory tree reduction:
  red[g*T + tx] = partial; sync; for s = T/2 .. 1: if tx < s: red[..tx] op= red[..tx + s];
  sync; v = red[g*T]; sync; body(v)   (g: the thread's index in the other dims; body's stores
  do not depend on tx, so the emitter lets thread 0 of that dimension make them);
* `insert_syncs` adds __syncthreads() where one statement reads or writes shared memory that
  an earlier one wrote (or writes what it read), and at the end of a loop body that both reads
  and writes shared memory, wherever every thread of the block executes the code; a barrier
  under thread-dependent control flow (the threads would not all reach it) is a CompileError.
"""
from dataclasses import dataclass, field

from .. import tir
from ..errors import CompileError
from ..tir.functor import children, rewrite, substitute, walk
from ..tir.simplify import simplify

BLOCK_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
THREAD_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
MAX_BLOCK_THREADS = 1024


class SyncThreads(tir.Stmt):
    """__syncthreads(): every thread of the block waits here; orders shared-memory accesses."""
    __slots__ = ()
    _fields = ()


@dataclass
class Kernel:
    """One __global__ function: its body, grid (3 PrimExprs over shape vars), block (3 ints),
    and the Vars standing for threadIdx.x/y/z inside lowered cross-thread reductions."""

    name: str
    body: object
    grid: tuple
    block: tuple
    thread_vars: dict = field(default_factory=dict)


def split_kernels(func, max_threads: int = MAX_BLOCK_THREADS):
    """(workspace buffers, [Kernel]) of a PrimFunc scheduled for the GPU."""
    name = str(func.attrs.get("global_symbol", func.name))
    body, workspace = func.body, []
    while isinstance(body, tir.Allocate) and body.scope == "global":
        workspace.append(body.buffer)
        body = body.body
    parts = body.seq if isinstance(body, tir.SeqStmt) else (body,)
    kernels = []
    for stmt in parts:
        if tir.stmt.is_no_op(stmt):
            continue
        kname = f"{name}_kernel{len(kernels)}"
        grid, block = _launch_shape(stmt, kname, max_threads)
        kernel = Kernel(kname, stmt, grid, block,
                        {tag: tir.Var(tag.replace(".", "_"), "int32") for tag in THREAD_TAGS})
        kernel.body = insert_syncs(lower_allreduce(stmt, kernel), kernel)
        kernels.append(kernel)
    return workspace, kernels


def _stmt_children(s):
    return [c for c in children(s) if isinstance(c, tir.Stmt)]


def _launch_shape(stmt, kname, max_threads):
    """(grid, block) from the extents of the thread-bound loops of one kernel."""
    extents = {tag: [] for tag in BLOCK_TAGS + THREAD_TAGS}
    stack = [(stmt, False, False)]          # (node, under a bound loop, under an unbound loop)
    while stack:
        s, bound, unbound = stack.pop()
        if isinstance(s, tir.For):
            tag = s.thread_binding
            if tag is None:
                if not bound:
                    raise CompileError(
                        f"cuda codegen {kname}: loop {s.loop_var.name} is not inside any loop "
                        f"bound to blockIdx/threadIdx, so every GPU thread would run all of it: "
                        f"schedule it for the GPU (bind its axes; did you forget to bind?) or "
                        f"build for target 'llvm'")
                if s.kind == "parallel":
                    raise CompileError(f"cuda codegen {kname}: loop {s.loop_var.name} is a CPU "
                                       f"parallel loop; bind it to GPU threads instead")
            else:
                if tag not in extents:
                    raise CompileError(f"cuda codegen {kname}: unknown thread tag {tag!r}; use "
                                       f"one of {list(extents)}")
                if tag in BLOCK_TAGS and unbound:
                    raise CompileError(f"cuda codegen {kname}: loop {s.loop_var.name} bound to "
                                       f"{tag} sits inside a serial loop; blockIdx loops must be "
                                       f"outermost")
                extents[tag].append(simplify(s.extent))
            stack.extend((c, True, unbound or tag is None) for c in _stmt_children(s))
        else:
            stack.extend((c, bound, unbound) for c in _stmt_children(s))
    block = []
    for tag in THREAD_TAGS:
        sizes = extents[tag]
        if any(not isinstance(e, tir.IntImm) for e in sizes):
            raise CompileError(f"cuda codegen {kname}: a loop bound to {tag} has a symbolic "
                               f"extent; split it by a constant factor before binding")
        block.append(max((int(e.value) for e in sizes), default=1))
    if block[0] * block[1] * block[2] > max_threads:
        raise CompileError(f"cuda codegen {kname}: {block[0]}x{block[1]}x{block[2]} threads per "
                           f"block exceed the limit of {max_threads}")
    grid = []
    for tag in BLOCK_TAGS:
        sizes = extents[tag]
        if not sizes:
            grid.append(tir.IntImm("int32", 1))
        elif all(isinstance(e, tir.IntImm) for e in sizes):
            grid.append(tir.IntImm("int32", max(int(e.value) for e in sizes)))
        elif len({str(e) for e in sizes}) == 1:
            grid.append(sizes[0])
        else:
            raise CompileError(f"cuda codegen {kname}: loops bound to {tag} have different "
                               f"symbolic extents {sorted({str(e) for e in sizes})}")
    return tuple(grid), tuple(block)


# ---------------------------------------------------------------- cross-thread reductions

def lower_allreduce(stmt, kernel):
    """Replace every tir.ThreadAllReduce in a kernel by a shared-memory tree reduction."""
    def fn(node):
        if isinstance(node, tir.ThreadAllReduce):
            return _tree_reduce(node, kernel)
        return None
    return rewrite(stmt, fn)


def _tree_reduce(node, kernel):
    tag = node.thread_tag
    dim = "xyz".index(tag[-1])
    width = kernel.block[dim]
    if width & (width - 1):
        raise CompileError(f"cuda codegen {kernel.name}: a cross-thread reduction over {tag} needs "
                           f"a power-of-two number of threads, the block has {width}")
    tv = kernel.thread_vars
    tid = tv[tag]
    group, groups = tir.IntImm("int32", 0), 1      # this thread's index in the other dims
    for i, axis in enumerate("xyz"):
        if i != dim and kernel.block[i] > 1:
            group = group + tv[f"threadIdx.{axis}"] * groups
            groups *= kernel.block[i]
    base = simplify(group * width)
    comb = node.combiner
    reds = [tir.Buffer(f"red_buf{k}", (groups * width,), src.dtype, scope="shared")
            for k, src in enumerate(node.sources)]
    steps = [tir.BufferStore(r, src, [base + tid]) for r, src in zip(reds, node.sources)]
    steps.append(SyncThreads())
    offset = width // 2
    while offset >= 1:
        lhs = [tir.Var(f"lhs{k}", r.dtype) for k, r in enumerate(reds)]
        rhs = [tir.Var(f"rhs{k}", r.dtype) for k, r in enumerate(reds)]
        out = [tir.Var(f"out{k}", r.dtype) for k, r in enumerate(reds)]
        vmap = {**dict(zip(comb.lhs, lhs)), **dict(zip(comb.rhs, rhs))}
        combine = tir.seq(*[tir.BufferStore(r, o, [base + tid]) for r, o in zip(reds, out)])
        for o, res in reversed(list(zip(out, comb.result))):
            combine = tir.LetStmt(o, substitute(res, vmap), combine)
        for k in reversed(range(len(reds))):
            combine = tir.LetStmt(lhs[k], reds[k][base + tid],
                                  tir.LetStmt(rhs[k], reds[k][base + tid + offset], combine))
        steps += [tir.IfThenElse(tid < offset, combine), SyncThreads()]
        offset //= 2
    result = tir.seq(SyncThreads(), node.body)    # the emitter lets thread 0 store
    for var, red in reversed(list(zip(node.result_vars, reds))):
        result = tir.LetStmt(var, red[base], result)
    body = tir.seq(*steps, result)
    for red in reversed(reds):
        body = tir.Allocate(red, body, "shared")
    return body


# ---------------------------------------------------------------- barriers

def _shared_access(node, memo):
    """(reads, writes): ids of the shared buffers `node` loads from / stores to."""
    key = id(node)
    if key not in memo:
        reads, writes = set(), set()
        for n in walk(node):
            if isinstance(n, tir.BufferLoad) and n.buffer.scope == "shared":
                reads.add(id(n.buffer.data))
            elif isinstance(n, tir.BufferStore) and n.buffer.scope == "shared":
                writes.add(id(n.buffer.data))
        memo[key] = (reads, writes)
    return memo[key]


def _uses(expr, dep) -> bool:
    return any(isinstance(n, tir.Var) and id(n) in dep for n in walk(expr))


def insert_syncs(stmt, kernel):
    """Add __syncthreads() between shared-memory producers and consumers (see module doc)."""
    dep = {id(v) for v in kernel.thread_vars.values()}
    return _Syncs(kernel).visit(stmt, True, dep)


class _Syncs:
    def __init__(self, kernel):
        self.kernel = kernel
        self.memo = {}

    def visit(self, s, uniform, dep):
        if isinstance(s, tir.SeqStmt):
            items = [self.visit(c, uniform, dep) for c in s.seq]
            return self._sequence(items) if uniform else tir.seq(*items)
        if isinstance(s, tir.For):
            inside = uniform and not (_uses(s.min, dep) or _uses(s.extent, dep))
            if s.thread_binding in THREAD_TAGS:
                dep = dep | {id(s.loop_var)}
                size = self.kernel.block[THREAD_TAGS.index(s.thread_binding)]
                inside = inside and isinstance(s.extent, tir.IntImm) and s.extent.value == size
            body = self._enter(s.body, uniform, inside, dep, f"loop {s.loop_var.name}")
            if inside and s.thread_binding is None:
                reads, writes = _shared_access(body, self.memo)
                if writes & reads:            # the next iteration overwrites what this one read
                    body = tir.seq(body, SyncThreads())
            return tir.For(s.loop_var, s.min, s.extent, s.kind, body, s.thread_binding, s.annotations)
        if isinstance(s, tir.IfThenElse):
            inside = uniform and not _uses(s.condition, dep)
            what = f"if {s.condition}"
            then = self._enter(s.then_case, uniform, inside, dep, what)
            other = self._enter(s.else_case, uniform, inside, dep, what) if s.else_case else None
            return tir.IfThenElse(s.condition, then, other)
        if isinstance(s, tir.LetStmt):
            inner = dep | {id(s.var)} if _uses(s.value, dep) else dep
            return tir.LetStmt(s.var, s.value, self.visit(s.body, uniform, inner))
        if isinstance(s, tir.Allocate):
            return tir.Allocate(s.buffer, self.visit(s.body, uniform, dep), s.scope)
        return s

    def _enter(self, body, uniform, inside, dep, what):
        if uniform and not inside and any(isinstance(n, SyncThreads) for n in walk(body)):
            raise CompileError(f"cuda codegen {self.kernel.name}: a block-wide barrier (a "
                               f"cross-thread reduction) sits under `{what}`, which not every "
                               f"thread of the block enters; bind the surrounding axes to "
                               f"blockIdx, or make the thread loops span the whole block")
        return self.visit(body, inside, dep)

    def _sequence(self, items):
        out, pend_r, pend_w = [], set(), set()
        for c in items:
            if isinstance(c, SyncThreads):
                out.append(c)
                pend_r, pend_w = set(), set()
                continue
            reads, writes = _shared_access(c, self.memo)
            if (reads | writes) & pend_w or writes & pend_r:
                out.append(SyncThreads())
                pend_r, pend_w = set(), set()
            out.append(c)
            pend_r |= reads
            pend_w |= writes
        return tir.seq(*out)
