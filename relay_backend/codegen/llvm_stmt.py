"""tir statements -> LLVM basic blocks: loops (serial, vectorized, unrolled, parallel),
branches, lets and temporary allocations, for one LLVM function.

Parallel loops are outlined: the body becomes `void body(i32 tid, i32 nthreads, begin, end,
captured values...)` (buffer pointers `noalias`), called by a trampoline `void tramp(ptr ctx,
i32 tid, i32 nthreads, i64 begin, i64 end)` that unpacks a context struct; the parent fills
the struct and calls `rb_parallel_for(tramp, ctx, extent)`: the process's thread pool
(llvm_thread_pool.py), which splits the iterations into static blocks and dynamic chunks and
never waits for a thread that has not started. Without libgomp (whose team size the pool
follows) or inside another parallel loop the loop runs serially.
Vectorized / unrolled loops carry `llvm.loop` metadata that forces LLVM's loop vectorizer /
unroller (buffers are noalias and 64-byte aligned, so it needs no runtime checks); a vectorized
loop is also kept from the full unroller, which runs before the loop vectorizer and would
leave its lanes to the SLP vectorizer.
"""
from llvmlite import ir

from .. import tir
from ..errors import CompileError
from ..tir.unroll import NO_UNROLL
from .llvm_builder import ValueNumberingBuilder
from .llvm_expr import I64, PTR, ExprEmitter, itemsize, llvm_type, mem_type
from .llvm_thread_pool import POOL_SYMBOL as PARALLEL_FOR
from .llvm_vector import VectorEmitter, vector_plan

I32 = ir.IntType(32)
STACK_LIMIT = 64 * 1024        # bytes; bigger (or symbolic) temporaries: llvm_workspace's heap blocks
ALIGN = 64


class FunctionEmitter(ExprEmitter):
    """Emits the body of one LLVM function from tir statements."""

    def __init__(self, mcg, fn: ir.Function, vars_=None, buffers=None, in_parallel=False):
        self.mcg = mcg                    # the ModuleCodegen (module, math, loop metadata)
        self.math = mcg.math
        self.fn = fn
        self.vars = dict(vars_ or {})
        self.buffers = dict(buffers or {})
        self.in_parallel = in_parallel
        self.entry = fn.append_basic_block("entry")
        start = fn.append_basic_block("start")
        self.alloca_builder = ir.IRBuilder(self.entry)
        self.builder = ValueNumberingBuilder(start)

    def finish(self):
        """Close the function (entry block falls through to the code)."""
        self.alloca_builder.branch(self.fn.basic_blocks[1])
        if not self.builder.block.is_terminated:
            self.builder.ret_void()

    # ------------------------------------------------------------------ statements
    def stmt(self, node):
        # iterate through SeqStmt / LetStmt chains instead of recursing on them
        work = [node]
        while work:
            s = work.pop()
            if s is None:
                continue
            if isinstance(s, tir.SeqStmt):
                work.extend(reversed(s.seq))
            elif isinstance(s, tir.LetStmt):
                self.vars[id(s.var)] = self.cast(self.expr(s.value), s.value.dtype, s.var.dtype)
                work.append(s.body)
            elif isinstance(s, tir.BufferStore):
                idx = [self.expr(i) for i in s.indices]
                self.store(s.buffer, idx, self.expr(s.value))
            elif isinstance(s, tir.For):
                self._for(s)
            elif isinstance(s, tir.IfThenElse):
                self._if(s)
            elif isinstance(s, tir.Allocate):
                self._allocate(s)
            elif isinstance(s, tir.Evaluate):
                if not isinstance(s.value, (tir.IntImm, tir.FloatImm)):
                    self.expr(s.value)
            else:
                raise CompileError(f"llvm codegen: unsupported statement {type(s).__name__}")

    def _if(self, s):
        cond = self.expr(s.condition)
        if s.else_case is None:
            with self.builder.if_then(cond):
                self.stmt(s.then_case)
        else:
            with self.builder.if_else(cond) as (then, other):
                with then:
                    self.stmt(s.then_case)
                with other:
                    self.stmt(s.else_case)

    # ------------------------------------------------------------------ loops
    def _for(self, s):
        if s.kind == "parallel" and not self.in_parallel and self.mcg.has_openmp:
            self._parallel_for(s)
            return
        plan = vector_plan(s) if s.kind == "vectorized" else None
        if plan is not None:
            VectorEmitter(self, plan).emit(s.body)
            return
        lo = self.cast(self.expr(s.min), s.min.dtype, s.loop_var.dtype)
        ext = self.cast(self.expr(s.extent), s.extent.dtype, s.loop_var.dtype)
        self.loop(s.loop_var, lo, ext, lambda: self.stmt(s.body), self._loop_md(s))

    def loop(self, var, lo, ext, emit_body, metadata=None):
        """for var in [lo, lo + ext): emit_body(), as a guarded, rotated loop."""
        b = self.builder
        ty = llvm_type(var.dtype)
        end = b.add(lo, ext, flags=["nsw"])
        pre = b.block
        body = b.append_basic_block(f"for_{var.name}")
        done = b.append_basic_block(f"for_{var.name}_end")
        b.cbranch(b.icmp_signed("<", lo, end), body, done)
        b.position_at_end(body)
        phi = b.phi(ty, name=var.name)
        phi.add_incoming(lo, pre)
        self.vars[id(var)] = phi
        emit_body()
        nxt = b.add(phi, ir.Constant(ty, 1), flags=["nsw"])
        br = b.cbranch(b.icmp_signed("<", nxt, end), body, done)
        phi.add_incoming(nxt, b.block)
        if metadata is not None:
            br.set_metadata("llvm.loop", metadata)
        b.position_at_end(done)

    def _loop_md(self, s):
        if s.kind == "vectorized":
            # unroll.disable: the full unroller (which runs first) would otherwise flatten a short
            # vector loop into scalars and leave it to the SLP vectorizer, which packs a register
            # tile's accumulators piecemeal (one 8-lane accumulator as 1+4+2+1 lanes) when the
            # epilogue reads more than one operand
            props = [("llvm.loop.vectorize.enable", True), ("llvm.loop.unroll.disable", None)]
            if "vector_width" in s.annotations:     # te Stage.vectorize(axis, width)
                props.append(("llvm.loop.vectorize.width", int(s.annotations["vector_width"])))
            return self.mcg.loop_metadata(props)
        if s.kind == "unrolled":
            full = isinstance(s.extent, tir.IntImm)
            return self.mcg.loop_metadata([("llvm.loop.unroll.full" if full
                                            else "llvm.loop.unroll.enable", None)])
        if s.annotations.get(NO_UNROLL):            # te Stage.no_unroll
            return self.mcg.loop_metadata([("llvm.loop.unroll.disable", None)])
        return None

    # ------------------------------------------------------------------ parallel loops
    def _parallel_for(self, s):
        """Outline the loop body as `body(tid, nthreads, begin, end, captures...)` running
        [begin, end), a trampoline `tramp(ctx, tid, nthreads, begin, end)` adding the loop's
        start and unpacking the captures from a context struct, and call the process's thread
        pool: `rb_parallel_for(tramp, ctx, extent)` (codegen/llvm_thread_pool.py)."""
        b, mcg = self.builder, self.mcg
        ity = llvm_type(s.loop_var.dtype)
        lo = self.cast(self.expr(s.min), s.min.dtype, s.loop_var.dtype)
        ext = self.cast(self.expr(s.extent), s.extent.dtype, s.loop_var.dtype)
        var_caps, buf_caps = self._captures(s.body)
        cap_vals = [self.vars[k] for k in var_caps] + [self.buffers[k] for k in buf_caps]
        name = mcg.fresh_name(f"{self.fn.name}_par_{s.loop_var.name}")

        fixed = [I32, I32, ity, ity]
        body_fn = ir.Function(mcg.module, ir.FunctionType(
            ir.VoidType(), fixed + [v.type for v in cap_vals]), name=name)
        body_fn.linkage = "internal"
        args = body_fn.args
        nfix, nvar = len(fixed), len(var_caps)
        for arg in args[nfix + nvar:]:
            arg.add_attribute("noalias")
            arg.attributes.align = ALIGN
        inner = FunctionEmitter(mcg, body_fn,
                                {k: a for k, a in zip(var_caps, args[nfix:])},
                                {k: a for k, a in zip(buf_caps, args[nfix + nvar:])},
                                in_parallel=True)
        inner.thread_id, inner.num_threads = args[0], args[1]
        inner.read_only = self.read_only
        begin, end = args[2], args[3]
        inner.loop(s.loop_var, begin, inner.builder.sub(end, begin), lambda: inner.stmt(s.body))
        inner.finish()

        ctx_ty = ir.LiteralStructType([ity] + [v.type for v in cap_vals])
        tramp = ir.Function(mcg.module, ir.FunctionType(ir.VoidType(), [PTR, I32, I32, I64, I64]),
                            name=name + "_tramp")
        tramp.linkage = "internal"
        tb = ir.IRBuilder(tramp.append_basic_block("entry"))
        loaded = [tb.load(tb.gep(tramp.args[0], [ir.Constant(I32, 0), ir.Constant(I32, k)],
                                 source_etype=ctx_ty), typ=t)
                  for k, t in enumerate(ctx_ty.elements)]
        offset = (lambda v: tb.trunc(v, ity)) if ity.width < 64 else (lambda v: v)
        tb.call(body_fn, [tramp.args[1], tramp.args[2], tb.add(loaded[0], offset(tramp.args[3])),
                          tb.add(loaded[0], offset(tramp.args[4]))] + loaded[1:])
        tb.ret_void()

        ctx = self.alloca_builder.alloca(ctx_ty, name=name + "_ctx")
        for k, v in enumerate([lo] + cap_vals):
            b.store(v, b.gep(ctx, [ir.Constant(I32, 0), ir.Constant(I32, k)]))
        launch = mcg.declare(PARALLEL_FOR, ir.VoidType(), [PTR, PTR, I64])
        b.call(launch, [tramp, ctx, b.sext(ext, I64) if ity.width < 64 else ext])

    def _captures(self, body):
        """Keys of the variables and buffers bound here that `body` uses (in a stable order)."""
        var_ids, buf_ids = set(), set()

        def note_buffer(buf):
            buf_ids.add(id(buf.data))
            for e in list(buf.shape) + list(buf.strides or ()):
                var_ids.update(id(n) for n in tir.walk(e) if isinstance(n, tir.Var))
        for node in tir.walk(body):
            if isinstance(node, tir.Var):
                var_ids.add(id(node))
            elif isinstance(node, (tir.BufferLoad, tir.BufferStore)):
                note_buffer(node.buffer)
            elif isinstance(node, tir.Allocate):
                for e in node.buffer.shape:
                    var_ids.update(id(n) for n in tir.walk(e) if isinstance(n, tir.Var))
        return ([k for k in self.vars if k in var_ids],
                [k for k in self.buffers if k in buf_ids])

    # ------------------------------------------------------------------ allocation
    def _allocate(self, s):
        buf = s.buffer
        elem = mem_type(buf.dtype)
        numel = 1
        const = all(isinstance(d, tir.IntImm) for d in buf.shape)
        if const:
            for d in buf.shape:
                numel *= int(d.value)
        if const and numel * itemsize(buf.dtype) <= STACK_LIMIT:
            ptr = self.alloca_builder.alloca(ir.ArrayType(elem, max(numel, 1)), name=buf.name)
            ptr.align = ALIGN
            ptr.type = PTR      # llvmlite types allocas as typed pointers; loads index it as ptr
            self.buffers[id(buf.data)] = ptr
            self.stmt(s.body)
            return
        b = self.builder
        size = ir.Constant(I64, 1)
        for d in buf.shape:
            size = b.mul(size, self.cast(self.expr(d), d.dtype, "int64"))
        nbytes = b.mul(size, ir.Constant(I64, itemsize(buf.dtype)))
        ptr, cache = self.mcg.workspace.acquire(b, nbytes, buf.name)     # kept between calls
        self.buffers[id(buf.data)] = ptr
        self.stmt(s.body)
        self.mcg.workspace.release(self.builder, cache, ptr)
