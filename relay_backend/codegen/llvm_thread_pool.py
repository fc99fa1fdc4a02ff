"""The process's thread pool for the parallel loops of LLVM-compiled kernels.

A kernel's parallel loop calls `rb_parallel_for(body, ctx, extent)` (codegen/llvm_stmt.py):
`body(ctx, tid, nthreads, begin, end)` runs iterations [begin, end). This module builds the
pool that call reaches, once per process, as LLVM IR compiled by llvmlite into its own engine
(no C compiler needed); JIT-loaded kernels resolve the name to it, and a kernel library this
process loads (export_library, AOT) is pointed at it through `rb_parallel_launcher`
(codegen/llvm_parallel_shim.py), so every kernel of the process shares one pool.

Why not GNU OpenMP's fork/join (what the kernels called before): a libgomp parallel region
ends with a barrier that waits for every thread of the team, also for a worker that was
asleep and has not even started; on a virtual machine waking an idle vCPU takes 40-100 us,
which the caller then waits for at the first kernel of every model run. This pool's caller
never waits for a thread that has not started:

    split [0, extent) into n static blocks (half the iterations; block t is thread t's) and
    dynamic chunks (the other half, claimed from a shared counter; guided: each takes
    1/(2n) of what is left, at least one iteration, so the threads finish together);
    every thread: its own static block (claimed with an atomic exchange), then dynamic chunks,
    then any static block nobody has claimed yet;
    the caller, when nothing is left to claim, closes the job (no thread may join it after
    that) and waits only for the threads that joined and still run their claimed work.

An idle worker waits in three steps. It spins (pause) for SPIN_NS after a job, catching the
next kernel of a model run back to back. Then, until YIELD_NS after the job, it calls
sched_yield between looks, so any other runnable thread gets its core at once while the next
model run (a serving loop, a benchmark round) still finds it awake. Then it sleeps on a
condition variable, and the caller signals it only when one sleeps. Waking a sleeping vCPU
takes 40-100 us on a virtual machine, longer than a small model's whole run. Interleaved with
onnxruntime (two runs back to back, benchmarks/README.md "The yield window"), MLP b1 ran at
0.35 / 0.40 / 0.35x onnxruntime (graph / vm / aot) with the window and 0.48 / 0.57 / 0.49x
without it, the seed CNN with a spread of 41-44% against 94-102%.
TVM's own pool yields the same way (up to 300,000 times); TVM_THREAD_POOL_SPIN_COUNT bounds
the yields as there (0: sleep at once), and set_idle_policy changes all three settings.
The team size is GNU OpenMP's (omp_get_max_threads in the calling thread), so
runtime.set_num_threads, TVM_NUM_THREADS, OMP_NUM_THREADS and threadpoolctl keep working as
documented in runtime/thread_count.py. A second caller while the pool is busy (another Python
thread running a model) runs its loop serially; so does a process that forked (the pool
starts new workers in the child, since fork copies only the calling thread).
"""
import ctypes
import functools
import threading

import llvmlite.binding as llvm
from llvmlite import ir

from .. import config
from ..errors import InputError
from ..runtime.shared_library import register_thread_pool
from . import llvm_cache, llvm_target

MAX_THREADS = 64          # team size limit (threads beyond it are not started)
SPIN_NS = 25_000          # how long an idle worker spins (pause) after a job
YIELD_NS = 1_000_000      # then until this long after the job it yields its core between looks
YIELD_MAX = 300_000       # at most this many yields (TVM_THREAD_POOL_SPIN_COUNT; TVM's default)
CLOSED = 1 << 31          # job-state bit: the caller took everything, no thread may join now
ACTIVE = CLOSED - 1       # job-state bits: threads that joined the job and have not left
POOL_SYMBOL = "rb_parallel_for"          # what kernels call
STATS = ("regions", "worker_chunks", "stolen_blocks", "wakeups")
IDLE_SETTINGS = ("spin_ns", "yield_ns", "yield_max")    # how an idle worker waits (exported globals)

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()
BODY_TYPE = ir.FunctionType(VOID, [PTR, I32, I32, I64, I64])
LAUNCH_TYPE = ir.FunctionType(VOID, [PTR, PTR, I64])       # rb_parallel_for(body, ctx, extent)
# job fields: body, ctx, extent, static block size, dynamic start, team size
JOB_TYPE = ir.LiteralStructType([PTR, PTR, I64, I64, I64, I32])
PTHREAD_OPAQUE = 128      # bytes reserved for a pthread_mutex_t / pthread_cond_t (glibc: 40 / 48)


def _c(ty, value):
    return ir.Constant(ty, value)


def as_callable(b, pointer, fn_type=BODY_TYPE):
    """`pointer` as a callable of `fn_type` (by default a loop body(ctx, tid, nthreads, begin,
    end)): llvmlite's call needs the callee's function type, which an opaque pointer does not
    carry (the cast prints as a no-op)."""
    value = b.bitcast(pointer, fn_type.as_pointer())
    value.type = fn_type.as_pointer()
    return value


def _enter_loop(b, fn, name: str, initial):
    """Branch from the current block into a new block `name` and return its phi, seeded with
    `initial` (the loop's back edges add their values to it)."""
    before = b.block
    header = fn.append_basic_block(name)
    b.branch(header)
    b.position_at_end(header)
    phi = b.phi(initial.type, name=f"{name}_value")
    phi.add_incoming(initial, before)
    return phi


class _PoolModule:
    """Builds the pool's LLVM module (see the module docstring for the protocol)."""

    def __init__(self, triple: str):
        self.module = ir.Module(name="rb_thread_pool")
        self.module.triple = triple
        self.pause_intrinsic = ("llvm.x86.sse2.pause" if triple.startswith(("x86_64", "i386", "i686"))
                                else "llvm.aarch64.hint" if triple.startswith("aarch64") else None)
        g = self._global
        self.gen = g("rb_pool_gen", I32)              # job generation: workers wait for it to change
        self.state = g("rb_pool_state", I64)          # generation << 32 | CLOSED | joined threads
        self.job = g("rb_pool_job", JOB_TYPE)
        self.counter = g("rb_pool_counter", I64)      # dynamic iterations handed out
        self.claimed = g("rb_pool_claimed", ir.ArrayType(I32, MAX_THREADS))
        self.busy = g("rb_pool_busy", I32)            # a caller holds the pool
        self.sleepers = g("rb_pool_sleepers", I32)
        self.started = g("rb_pool_started", I32)      # workers running (thread ids 1..started)
        self.pid = g("rb_pool_pid", I32)              # the process that started them
        self.mutex = g("rb_pool_mutex", ir.ArrayType(I8, PTHREAD_OPAQUE))
        self.cond = g("rb_pool_cond", ir.ArrayType(I8, PTHREAD_OPAQUE))
        self.spin_ns = g("rb_pool_spin_ns", I64, SPIN_NS, exported=True)
        self.yield_ns = g("rb_pool_yield_ns", I64, YIELD_NS, exported=True)
        self.yield_max = g("rb_pool_yield_max", I64, YIELD_MAX, exported=True)
        self.stats = {name: g(f"rb_pool_{name}", I64, exported=True) for name in STATS}
        self.run_share = self._define_run_share()
        self.now_ns = self._define_now_ns()
        self.worker = self._define_worker()
        self._define_parallel_for()

    # -- helpers
    def _global(self, name, ty, value=None, exported=False):
        """A zeroed (or `value`), cache-line-aligned global; `exported` ones are read from Python."""
        var = ir.GlobalVariable(self.module, ty, name=name)
        if not exported:
            var.linkage = "internal"
        var.initializer = _c(ty, value) if value is not None else _c(ty, None)
        var.align = 64
        return var

    def _extern(self, name, ret, args):
        fn = self.module.globals.get(name)
        return fn if fn is not None else ir.Function(self.module, ir.FunctionType(ret, args), name=name)

    def _pause(self, b):
        if self.pause_intrinsic == "llvm.x86.sse2.pause":
            b.call(self._extern(self.pause_intrinsic, VOID, []), [])
        elif self.pause_intrinsic:
            b.call(self._extern(self.pause_intrinsic, VOID, [I32]), [_c(I32, 1)])   # yield

    def _job_field(self, b, k):
        return b.gep(self.job, [_c(I32, 0), _c(I32, k)], inbounds=True)

    def _claim(self, b, t):
        """Atomically take static block t; i1 true when this thread got it."""
        slot = b.gep(self.claimed, [_c(I32, 0), t], inbounds=True)
        return b.icmp_unsigned("==", b.atomic_rmw("xchg", slot, _c(I32, 1), "acq_rel"), _c(I32, 0))

    def _stat(self, b, name, value):
        b.atomic_rmw("add", self.stats[name], value, "monotonic")

    def _function(self, name, ret, args, internal=True):
        fn = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
        if internal:
            fn.linkage = "internal"
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    # -- i64 now_ns(): CLOCK_MONOTONIC in nanoseconds (vDSO, no system call)
    def _define_now_ns(self):
        fn, b = self._function("rb_pool_now_ns", I64, [])
        ts = b.alloca(ir.ArrayType(I64, 2))
        b.call(self._extern("clock_gettime", I32, [I32, PTR]), [_c(I32, 1), ts])
        sec = b.load(b.gep(ts, [_c(I32, 0), _c(I32, 0)], source_etype=ts.allocated_type), typ=I64)
        nsec = b.load(b.gep(ts, [_c(I32, 0), _c(I32, 1)], source_etype=ts.allocated_type), typ=I64)
        b.ret(b.add(b.mul(sec, _c(I64, 1_000_000_000)), nsec))
        return fn

    # -- void run_share(i32 tid, i32 n): this thread's part of the current job
    def _define_run_share(self):
        fn, b = self._function("rb_pool_run_share", VOID, [I32, I32])
        tid, n = fn.args
        body = as_callable(b, b.load(self._job_field(b, 0), typ=PTR))
        ctx = b.load(self._job_field(b, 1), typ=PTR)
        ext = b.load(self._job_field(b, 2), typ=I64)
        per = b.load(self._job_field(b, 3), typ=I64)
        dyn_start = b.load(self._job_field(b, 4), typ=I64)
        worker = b.icmp_unsigned("!=", tid, _c(I32, 0))

        def run(bb, begin, end):
            bb.call(body, [ctx, tid, n, begin, end])

        def static_block(bb, t):
            begin = bb.mul(bb.sext(t, I64), per)
            run(bb, begin, bb.add(begin, per))

        has_static = b.icmp_signed(">", per, _c(I64, 0))
        own = fn.append_basic_block("own")
        dyn = fn.append_basic_block("dynamic")
        b.cbranch(has_static, own, dyn)
        b.position_at_end(own)
        with b.if_then(self._claim(b, tid)):
            static_block(b, tid)
        b.branch(dyn)

        # guided chunks: half an equal share of what is left, so the last ones are small and
        # the threads finish together
        b.position_at_end(dyn)
        taken = _enter_loop(b, fn, "claim", b.load_atomic(self.counter, "monotonic", 8, typ=I64))
        claim = b.block
        begin = b.add(dyn_start, taken)
        chunk = fn.append_basic_block("chunk")
        steal = fn.append_basic_block("steal")
        try_claim = fn.append_basic_block("try_claim")
        b.cbranch(b.icmp_signed("<", begin, ext), try_claim, steal)
        b.position_at_end(try_claim)
        size = b.sdiv(b.sub(ext, begin), b.mul(b.sext(n, I64), _c(I64, 2)))
        size = b.select(b.icmp_signed("<", size, _c(I64, 1)), _c(I64, 1), size)
        pair = b.cmpxchg(self.counter, taken, b.add(taken, size), "monotonic", "monotonic")
        taken.add_incoming(b.extract_value(pair, 0), try_claim)
        b.cbranch(b.extract_value(pair, 1), chunk, claim)
        b.position_at_end(chunk)
        run(b, begin, b.add(begin, size))
        with b.if_then(worker):
            self._stat(b, "worker_chunks", _c(I64, 1))
        b.branch(dyn)

        # static blocks nobody took yet (a worker that is late or asleep)
        b.position_at_end(steal)
        done = fn.append_basic_block("done")
        loop = fn.append_basic_block("steal_loop")
        b.cbranch(has_static, loop, done)
        b.position_at_end(loop)
        t = b.phi(I32)
        t.add_incoming(_c(I32, 0), steal)
        slot = b.gep(self.claimed, [_c(I32, 0), t], inbounds=True)
        free = b.icmp_unsigned("==", b.load_atomic(slot, "monotonic", 4, typ=I32), _c(I32, 0))
        with b.if_then(b.and_(b.icmp_unsigned("!=", t, tid), free)):
            with b.if_then(self._claim(b, t)):
                static_block(b, t)
                self._stat(b, "stolen_blocks", _c(I64, 1))
        nxt = b.add(t, _c(I32, 1))
        t.add_incoming(nxt, b.block)
        b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
        b.position_at_end(done)
        b.ret_void()
        return fn

    # -- void* worker(void* tid): wait for a job, join it while it is open, do a share, leave
    def _define_worker(self):
        fn, b = self._function("rb_pool_worker", PTR, [PTR])
        tid = b.trunc(b.ptrtoint(fn.args[0], I64), I32)
        seen = _enter_loop(b, fn, "wait", b.load_atomic(self.gen, "acquire", 4, typ=I32))
        wait = b.block
        start = b.call(self.now_ns, [])
        spin_ns = b.load(self.spin_ns, typ=I64)
        wait_entry = b.block
        spin = fn.append_basic_block("spin")
        got = fn.append_basic_block("got")
        b.branch(spin)

        b.position_at_end(spin)
        i = b.phi(I32, name="i")
        i.add_incoming(_c(I32, 0), wait_entry)
        gen = b.load_atomic(self.gen, "acquire", 4, typ=I32)
        keep = fn.append_basic_block("keep_spinning")
        got_phi_blocks = [(gen, b.block)]
        b.cbranch(b.icmp_unsigned("!=", gen, seen), got, keep)
        b.position_at_end(keep)
        self._pause(b)
        i_next = b.add(i, _c(I32, 1))
        check = fn.append_basic_block("check_clock")
        b.cbranch(b.icmp_unsigned("==", b.and_(i_next, _c(I32, 63)), _c(I32, 0)), check, spin)
        i.add_incoming(i_next, keep)
        b.position_at_end(check)
        spent = b.sub(b.call(self.now_ns, []), start)
        sleep = fn.append_basic_block("sleep")
        yield_loop = fn.append_basic_block("yield")
        b.cbranch(b.icmp_signed(">", spent, spin_ns), yield_loop, spin)
        i.add_incoming(i_next, check)

        # yield: give the core to any other runnable thread, look again, until yield_ns after
        # the job or yield_max yields
        b.position_at_end(yield_loop)
        y = b.phi(I64, name="yields")
        y.add_incoming(_c(I64, 0), check)
        yield_limit = b.load(self.yield_max, typ=I64)
        more_yields = fn.append_basic_block("yield_again")
        b.cbranch(b.icmp_signed("<", y, yield_limit), more_yields, sleep)
        b.position_at_end(more_yields)
        b.call(self._extern("sched_yield", I32, []), [])
        gen_y = b.load_atomic(self.gen, "acquire", 4, typ=I32)
        got_phi_blocks.append((gen_y, b.block))
        still_idle = fn.append_basic_block("still_idle")
        b.cbranch(b.icmp_unsigned("!=", gen_y, seen), got, still_idle)
        b.position_at_end(still_idle)
        y.add_incoming(b.add(y, _c(I64, 1)), still_idle)
        within = b.icmp_signed("<=", b.sub(b.call(self.now_ns, []), start), b.load(self.yield_ns, typ=I64))
        b.cbranch(within, yield_loop, sleep)

        # sleep: under the mutex, count ourselves a sleeper, wait until the generation moves
        b.position_at_end(sleep)
        b.call(self._extern("pthread_mutex_lock", I32, [PTR]), [self.mutex])
        b.atomic_rmw("add", self.sleepers, _c(I32, 1), "seq_cst")
        recheck = fn.append_basic_block("recheck")
        b.branch(recheck)
        b.position_at_end(recheck)
        gen2 = b.load_atomic(self.gen, "seq_cst", 4, typ=I32)
        do_wait = fn.append_basic_block("cond_wait")
        woke = fn.append_basic_block("woke")
        b.cbranch(b.icmp_unsigned("!=", gen2, seen), woke, do_wait)
        b.position_at_end(do_wait)
        b.call(self._extern("pthread_cond_wait", I32, [PTR, PTR]), [self.cond, self.mutex])
        b.branch(recheck)
        b.position_at_end(woke)
        b.atomic_rmw("sub", self.sleepers, _c(I32, 1), "seq_cst")
        b.call(self._extern("pthread_mutex_unlock", I32, [PTR]), [self.mutex])
        b.branch(got)
        got_phi_blocks.append((gen2, woke))

        # got a new generation: join its job if it is still open
        b.position_at_end(got)
        g = b.phi(I32, name="gen")
        for value, block in got_phi_blocks:
            g.add_incoming(value, block)
        s = _enter_loop(b, fn, "join", b.load_atomic(self.state, "seq_cst", 8, typ=I64))
        join = b.block
        open_ = b.and_(b.icmp_unsigned("==", b.trunc(b.lshr(s, _c(I64, 32)), I32), g),
                       b.icmp_unsigned("==", b.and_(s, _c(I64, CLOSED)), _c(I64, 0)))
        try_join = fn.append_basic_block("try_join")
        b.cbranch(open_, try_join, wait)
        seen.add_incoming(g, join)
        b.position_at_end(try_join)
        pair = b.cmpxchg(self.state, s, b.add(s, _c(I64, 1)), "seq_cst", "seq_cst")
        joined = fn.append_basic_block("joined")
        s.add_incoming(b.extract_value(pair, 0), try_join)
        b.cbranch(b.extract_value(pair, 1), joined, join)
        b.position_at_end(joined)
        n = b.load(self._job_field(b, 5), typ=I32)
        with b.if_then(b.icmp_signed("<", tid, n)):
            b.call(self.run_share, [tid, n])
        b.atomic_rmw("sub", self.state, _c(I64, 1), "seq_cst")
        b.branch(wait)
        seen.add_incoming(g, b.block)
        return fn

    # -- void rb_pool_parallel_for(body, ctx, extent)
    def _define_parallel_for(self):
        fn, b = self._function("rb_pool_parallel_for", VOID, [PTR, PTR, I64], internal=False)
        body, ctx, ext = fn.args
        body_fn = as_callable(b, body)
        serial = fn.append_basic_block("serial")
        n0 = b.call(self._extern("omp_get_max_threads", I32, []), [])
        n0 = b.select(b.icmp_signed(">", n0, _c(I32, MAX_THREADS)), _c(I32, MAX_THREADS), n0)
        try_take = fn.append_basic_block("try_take")
        b.cbranch(b.and_(b.icmp_signed(">", n0, _c(I32, 1)), b.icmp_signed(">", ext, _c(I64, 1))),
                  try_take, serial)
        b.position_at_end(try_take)
        taken = b.extract_value(b.cmpxchg(self.busy, _c(I32, 0), _c(I32, 1), "acquire", "monotonic"), 1)
        have = fn.append_basic_block("have_pool")
        b.cbranch(taken, have, serial)

        b.position_at_end(have)
        pid = b.call(self._extern("getpid", I32, []), [])
        with b.if_then(b.icmp_unsigned("!=", pid, b.load(self.pid, typ=I32))):
            # first use, or the first in a forked child (whose copy has no worker threads)
            b.store(_c(I32, 0), self.started)
            b.store(_c(I32, 0), self.sleepers)
            b.store(_c(I64, 0), self.state)
            b.call(self._extern("pthread_mutex_init", I32, [PTR, PTR]), [self.mutex, ir.Constant(PTR, None)])
            b.call(self._extern("pthread_cond_init", I32, [PTR, PTR]), [self.cond, ir.Constant(PTR, None)])
            b.store(pid, self.pid)
        # start workers up to n0 - 1
        create = self._extern("pthread_create", I32, [PTR, PTR, PTR, PTR])
        detach = self._extern("pthread_detach", I32, [I64])
        handle = b.alloca(I64)
        start_loop = fn.append_basic_block("start_workers")
        started_done = fn.append_basic_block("workers_ready")
        b.branch(start_loop)
        b.position_at_end(start_loop)
        have_n = b.load(self.started, typ=I32)
        more = b.icmp_signed("<", b.add(have_n, _c(I32, 1)), n0)
        spawn = fn.append_basic_block("spawn")
        b.cbranch(more, spawn, started_done)
        b.position_at_end(spawn)
        new_tid = b.add(have_n, _c(I32, 1))
        rc = b.call(create, [handle, ir.Constant(PTR, None), self.worker,
                             b.inttoptr(b.zext(new_tid, I64), PTR)])
        ok = fn.append_basic_block("spawned")
        b.cbranch(b.icmp_signed("==", rc, _c(I32, 0)), ok, started_done)
        b.position_at_end(ok)
        b.call(detach, [b.load(handle, typ=I64)])
        b.store(new_tid, self.started)
        b.branch(start_loop)

        b.position_at_end(started_done)
        team = b.add(b.load(self.started, typ=I32), _c(I32, 1))
        n = b.select(b.icmp_signed("<", team, n0), team, n0)
        release_serial = fn.append_basic_block("release_serial")
        publish = fn.append_basic_block("publish")
        b.cbranch(b.icmp_signed(">", n, _c(I32, 1)), publish, release_serial)
        b.position_at_end(release_serial)
        b.store_atomic(_c(I32, 0), self.busy, "release", 4)
        b.branch(serial)

        b.position_at_end(publish)
        n64 = b.sext(n, I64)
        per = b.sdiv(ext, b.mul(n64, _c(I64, 2)))
        dyn_start = b.mul(per, n64)
        for k, value in enumerate([body, ctx, ext, per, dyn_start, n]):
            b.store(value, self._job_field(b, k))
        b.store(_c(I64, 0), self.counter)
        b.call(self._extern("llvm.memset.p0.i64", VOID, [PTR, I8, I64, I1]),
               [self.claimed, _c(I8, 0), b.mul(n64, _c(I64, 4)), _c(I1, 0)])
        gen = b.add(b.load_atomic(self.gen, "monotonic", 4, typ=I32), _c(I32, 1))
        b.store_atomic(b.shl(b.zext(gen, I64), _c(I64, 32)), self.state, "seq_cst", 8)
        b.store_atomic(gen, self.gen, "seq_cst", 4)
        with b.if_then(b.icmp_signed(">", b.load_atomic(self.sleepers, "seq_cst", 4, typ=I32), _c(I32, 0))):
            b.call(self._extern("pthread_mutex_lock", I32, [PTR]), [self.mutex])
            b.call(self._extern("pthread_cond_broadcast", I32, [PTR]), [self.cond])
            b.call(self._extern("pthread_mutex_unlock", I32, [PTR]), [self.mutex])
            self._stat(b, "wakeups", _c(I64, 1))
        b.call(self.run_share, [_c(I32, 0), n])
        # close the job, then wait for the threads that joined it to leave
        b.atomic_rmw("or", self.state, _c(I64, CLOSED), "seq_cst")
        wait = fn.append_basic_block("wait_joined")
        finished = fn.append_basic_block("finished")
        b.branch(wait)
        b.position_at_end(wait)
        active = b.and_(b.load_atomic(self.state, "acquire", 8, typ=I64), _c(I64, ACTIVE))
        spin = fn.append_basic_block("spin_joined")
        b.cbranch(b.icmp_unsigned("==", active, _c(I64, 0)), finished, spin)
        b.position_at_end(spin)
        self._pause(b)
        b.branch(wait)
        b.position_at_end(finished)
        self._stat(b, "regions", _c(I64, 1))
        b.store_atomic(_c(I32, 0), self.busy, "release", 4)
        b.ret_void()

        b.position_at_end(serial)
        b.call(body_fn, [ctx, _c(I32, 0), _c(I32, 1), _c(I64, 0), ext])
        b.ret_void()


def pool_ir(triple: str) -> str:
    """The pool's LLVM IR for `triple` (see the module docstring)."""
    return str(_PoolModule(triple).module)


class _Pool:
    """The compiled pool of this process: its engine (kept alive) and entry address."""

    def __init__(self):
        llvm_target.libgomp_path()                 # omp_get_max_threads resolves from libgomp
        spec = llvm_target.machine_spec()
        obj = llvm_cache.support_object("the thread pool", pool_ir(spec.triple), spec)
        self.engine = llvm_target.load_objects([obj], spec)
        self.address = self.engine.get_function_address("rb_pool_parallel_for")
        llvm.add_symbol(POOL_SYMBOL, self.address)
        self._globals = {name: self.engine.get_global_value_address(f"rb_pool_{name}")
                         for name in STATS + IDLE_SETTINGS}
        spin_count = config.get().thread_pool_spin_count
        if spin_count >= 0:          # TVM_THREAD_POOL_SPIN_COUNT: 0 sleeps at once, as TVM's pool
            self.write("yield_max", spin_count)
            if spin_count == 0:
                self.write("spin_ns", 0)

    def read(self, name: str) -> int:
        return ctypes.c_int64.from_address(self._globals[name]).value

    def write(self, name: str, value: int) -> None:
        ctypes.c_int64.from_address(self._globals[name]).value = value


_LOCK = threading.Lock()


@functools.lru_cache(maxsize=None)
def _pool() -> _Pool:
    with _LOCK:
        return _Pool()


def ensure_loaded() -> int:
    """Compile and load the pool once per process (LLVM-JIT kernels then resolve
    rb_parallel_for to it); returns the address of its entry point."""
    return _pool().address


def idle_policy() -> dict:
    """How an idle worker waits for the next job: spin_ns (spinning), yield_ns (until then after
    its last job it yields its core between looks), yield_max (at most that many yields)."""
    pool = _pool()
    return {name: pool.read(name) for name in IDLE_SETTINGS}


def set_idle_policy(**settings) -> None:
    """Change how idle workers wait from now on (names as idle_policy(); nanoseconds / count)."""
    pool = _pool()
    for name, value in settings.items():
        if name not in IDLE_SETTINGS:
            raise InputError(f"set_idle_policy: unknown setting {name!r}; use one of {list(IDLE_SETTINGS)}")
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 63:
            raise InputError(f"set_idle_policy: {name} must be an int >= 0 (below 2**63), got {value!r}")
        pool.write(name, value)


def stats() -> dict:
    """Counters since the process started the pool: parallel regions run with more than one
    thread, chunks run by worker threads, static blocks run by a thread other than their owner
    (a late worker's share taken over), and wakeups (jobs that found a worker asleep and
    signalled it)."""
    pool = _pool()
    return {name: pool.read(name) for name in STATS}


register_thread_pool(ensure_loaded)


__all__ = ["ensure_loaded", "stats", "idle_policy", "set_idle_policy", "pool_ir", "as_callable", "SPIN_NS",
           "YIELD_NS", "YIELD_MAX", "MAX_THREADS", "POOL_SYMBOL", "BODY_TYPE", "LAUNCH_TYPE"]
