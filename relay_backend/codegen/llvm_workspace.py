"""Heap temporaries of LLVM kernels that keep their memory between calls.

A temporary too big for the stack (llvm_stmt.STACK_LIMIT) used to be `aligned_alloc`ed and
`free`d on every call. For a kernel whose temporaries add up to a few MB (a Winograd
convolution's transformed tiles and products: 4.6 MB at 64 channels, 56x56) glibc returns the
memory to the system at each free (its trim threshold follows the largest block freed), so
every call faulted in and zeroed fresh pages: half of that kernel's time.

Now each allocation site keeps its block in a module global, `cache`:

    acquire(cache, nbytes, site):
        block = atomic exchange(cache, null)
        if block and size(block) >= nbytes: return block
        free(block); return a fresh block of nbytes (aligned_alloc)
    release(cache, block):
        old = atomic exchange(cache, block); free(old)

A block carries its size in a 64-byte header before the returned pointer, so the pointer
stays 64-byte aligned. The exchanges make a site safe when several threads run it at once
(inside a parallel loop, or two kernels' callers): a thread finding the cache empty takes a
fresh block, and a release that finds another block there frees that one. Each site holds at
most one block (its largest recent temporary). `acquire` is a separate function whose result
is `noalias`, as malloc's is, so alias analysis keeps treating the temporary as distinct from
every other buffer.

When aligned_alloc has no block to give (out of memory, or a symbolic size too large for the
machine), acquire prints OUT_OF_MEMORY to stderr, naming the kernel, the buffer (`site`) and the
size, and aborts. A kernel returns void, so it cannot hand an error to its caller, and going on
would write through a null pointer: a segmentation fault with no word of why.

The blocks live as long as the loaded kernel: each kernel with sites also gets an exported
`<kernel symbol>_workspace_free` (FREE_SUFFIX) that empties and frees its sites' caches. A JIT
engine's owner calls it before the engine goes (`free_when_collected`); in a shared library
(export_library, AOT) the same function is a destructor (llvm.global_dtors), run at dlclose.
"""
import ctypes
import weakref

from llvmlite import ir

ACQUIRE = "rb_workspace_acquire"
RELEASE = "rb_workspace_release"
FREE_SUFFIX = "_workspace_free"
HEADER = 64                     # bytes before the returned pointer; holds the block's usable size
ALIGN = 64
OUT_OF_MEMORY = ("relay_backend: kernel %s could not allocate %lld bytes of workspace (out of memory); "
                 "the process stops here. Free memory, or run smaller inputs.\n")

I64 = ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()
NULL = ir.Constant(PTR, None)


def _header(b, block):
    return b.gep(block, [ir.Constant(I64, -HEADER)], source_etype=ir.IntType(8))


def _exchange_and_free(fn, b, cache, value, free, tag: str) -> None:
    """Put `value` in `cache` (atomic exchange) and free the block that was there, if any; the
    builder continues in a new block of `fn` after that."""
    old = b.atomic_rmw("xchg", cache, value, "acq_rel")
    drop, done = fn.append_basic_block(f"drop{tag}"), fn.append_basic_block(f"done{tag}")
    b.cbranch(b.icmp_unsigned("!=", old, NULL), drop, done)
    b.position_at_end(drop)
    b.call(free, [_header(b, old)])
    b.branch(done)
    b.position_at_end(done)


def _define_acquire(module, declare) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(PTR, [PTR, I64, PTR]), name=ACQUIRE)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.return_value.add_attribute("noalias")
    cache, nbytes, site = fn.args
    entry, reuse, fresh = (fn.append_basic_block(n) for n in ("entry", "reuse", "fresh"))
    b = ir.IRBuilder(entry)
    block = b.atomic_rmw("xchg", cache, NULL, "acquire")
    has = b.icmp_unsigned("!=", block, NULL)
    b.cbranch(has, reuse, fresh)
    b.position_at_end(reuse)
    size = b.load(_header(b, block), typ=I64)
    fits = b.icmp_unsigned(">=", size, nbytes)
    keep = fn.append_basic_block("keep")
    drop = fn.append_basic_block("drop")
    b.cbranch(fits, keep, drop)
    b.position_at_end(keep)
    b.ret(block)
    b.position_at_end(drop)
    b.call(declare("free", VOID, [PTR]), [_header(b, block)])
    b.branch(fresh)
    b.position_at_end(fresh)
    rounded = b.and_(b.add(nbytes, ir.Constant(I64, ALIGN - 1)), ir.Constant(I64, -ALIGN))
    raw = b.call(declare("aligned_alloc", PTR, [I64, I64]),
                 [ir.Constant(I64, ALIGN), b.add(rounded, ir.Constant(I64, HEADER))])
    got, failed = fn.append_basic_block("got"), fn.append_basic_block("out_of_memory")
    b.cbranch(b.icmp_unsigned("==", raw, NULL), failed, got)
    b.position_at_end(failed)
    _stop_out_of_memory(module, b, declare, site, nbytes)
    b.position_at_end(got)
    b.store(rounded, raw)
    b.ret(b.gep(raw, [ir.Constant(I64, HEADER)], source_etype=ir.IntType(8)))
    return fn


def _stop_out_of_memory(module, b, declare, site, nbytes) -> None:
    """Print OUT_OF_MEMORY (naming the site and the size) to stderr and abort (module doc)."""
    message = _c_string(module, "rb_workspace_out_of_memory", OUT_OF_MEMORY)
    dprintf = declare("dprintf", ir.IntType(32), [ir.IntType(32), PTR], var_arg=True)
    b.call(dprintf, [ir.Constant(ir.IntType(32), 2), message, site, nbytes])
    b.call(declare("abort", VOID, []), [])
    b.unreachable()


def _c_string(module, name: str, text: str) -> ir.GlobalVariable:
    """A private constant NUL-terminated string global (one per name per module)."""
    if name in module.globals:
        return module.globals[name]
    data = bytearray(text.encode() + b"\0")
    value = ir.Constant(ir.ArrayType(ir.IntType(8), len(data)), data)
    var = ir.GlobalVariable(module, value.type, name=name)
    var.linkage, var.global_constant, var.initializer = "private", True, value
    return var


def _define_release(module, declare) -> ir.Function:
    """void release(cache, block): the block into the cache, the one it replaces freed."""
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR, PTR]), name=RELEASE)
    fn.linkage = "internal"
    cache, block = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    _exchange_and_free(fn, b, cache, block, declare("free", VOID, [PTR]), "")
    b.ret_void()
    return fn


def _define_free(module, declare, name: str, caches) -> ir.Function:
    """void name(): empty each cache, freeing its block."""
    fn = ir.Function(module, ir.FunctionType(VOID, []), name=name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    free = declare("free", VOID, [PTR])
    for k, cache in enumerate(caches):
        _exchange_and_free(fn, b, cache, NULL, free, str(k))
    b.ret_void()
    return fn


class Workspace:
    """The acquire/release helpers of one module, defined on first use, a cache global per
    allocation site, and per kernel the function that frees its sites' blocks."""

    def __init__(self, module: ir.Module, declare):
        self.module = module
        self._declare = declare      # ModuleCodegen.declare: get or declare a libc function
        self._helpers = None
        self._sites = 0
        self._open = []              # the caches of the kernel being emitted
        self._kernel = "?"           # its name (start_kernel), given if an allocation fails
        self._frees = []             # every kernel's free function, for llvm.global_dtors

    def _functions(self):
        if self._helpers is None:
            self._helpers = (_define_acquire(self.module, self._declare),
                             _define_release(self.module, self._declare))
        return self._helpers

    def start_kernel(self, name: str) -> None:
        """The kernel whose allocation sites come next (their out-of-memory message names it)."""
        self._kernel = name

    def acquire(self, builder, nbytes, name: str):
        """(pointer to a block of at least `nbytes`, the site's cache) for a new allocation site.
        If the block cannot be allocated the process stops with a message naming the kernel
        and buffer `name` (_stop_out_of_memory)."""
        acquire, _ = self._functions()
        self._sites += 1
        cache = ir.GlobalVariable(self.module, PTR, name=f"rb_workspace_cache.{self._sites}")
        cache.linkage = "internal"
        cache.initializer = NULL
        cache.align = 8
        self._open.append(cache)
        site = _c_string(self.module, f"rb_workspace_site.{self._sites}", f"{self._kernel} (buffer {name})")
        return builder.call(acquire, [cache, nbytes, site], name=name), cache

    def finish_kernel(self, symbol: str) -> None:
        """Define `symbol` + FREE_SUFFIX for the sites made since the last kernel (none: nothing)."""
        if self._open:
            self._frees.append(_define_free(self.module, self._declare, symbol + FREE_SUFFIX, self._open))
            self._open = []

    def finish_module(self) -> None:
        """List the kernels' free functions in llvm.global_dtors (once; none: nothing)."""
        if not self._frees or "llvm.global_dtors" in self.module.globals:
            return
        entry = ir.LiteralStructType([ir.IntType(32), PTR, PTR])
        table = ir.ArrayType(entry, len(self._frees))
        dtors = ir.GlobalVariable(self.module, table, name="llvm.global_dtors")
        dtors.linkage = "appending"
        dtors.initializer = ir.Constant(table, [ir.Constant(entry, [ir.Constant(ir.IntType(32), 65535), fn, NULL])
                                                for fn in self._frees])

    def release(self, builder, cache, block) -> None:
        """Give the site's block back to its cache at the end of the allocation's scope."""
        _, release = self._functions()
        builder.call(release, [cache, block])


_FREE_TYPE = ctypes.CFUNCTYPE(None)


def _free_all(functions, engine) -> None:
    """Run the free functions; `engine` (unused) is held until then, so their code stays mapped."""
    for fn in functions:
        fn()


def free_when_collected(owner, engine, symbols) -> None:
    """When `owner` (the runtime Module holding `engine`) is collected, call each kernel's
    `<symbol>_workspace_free` found in `engine`, before the engine itself goes."""
    addresses = [engine.get_function_address(symbol + FREE_SUFFIX) for symbol in symbols]
    functions = [_FREE_TYPE(address) for address in addresses if address]
    if functions:
        weakref.finalize(owner, _free_all, functions, engine)


__all__ = ["Workspace", "ACQUIRE", "RELEASE", "HEADER", "FREE_SUFFIX", "free_when_collected"]
