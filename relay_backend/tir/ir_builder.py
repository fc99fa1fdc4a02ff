"""IRBuilder: write a tir statement as ordinary nested Python blocks (TVM's tir.ir_builder).

For kernels that are sequential by nature (a greedy non-maximum suppression, a merge sort, a
compaction with a running counter) and so are not one expression per output element:

    ib = ir_builder.create()
    out = ib.buffer_ptr(out_buffer)
    count = ib.allocate("int32", (1,), name="count", scope="local")
    count[0] = 0
    with ib.for_range(0, n, name="i") as i:
        with ib.if_scope(data[i] > 0):
            out[count[0]] = data[i]
            count[0] = count[0] + 1
    stmt = ib.get()

A buffer allocated with `allocate` lives over the whole block it was allocated in. The result
feeds te.extern, which places it in a kernel.
"""
from contextlib import contextmanager

from ..errors import CompileError
from . import expr as E
from . import stmt as S
from .buffer import Buffer


class BufferPtr:
    """Indexing sugar over a Buffer: `ptr[i]` loads, `ptr[i] = v` appends a store."""

    def __init__(self, builder, buffer):
        self._builder = builder
        self.buffer = buffer

    @property
    def dtype(self):
        return self.buffer.dtype

    @property
    def shape(self):
        return self.buffer.shape

    def _index(self, index):
        return index if isinstance(index, tuple) else (index,)

    def __getitem__(self, index):
        return E.BufferLoad(self.buffer, self._index(index))

    def __setitem__(self, index, value):
        value = E.convert(value, self.buffer.dtype)
        if value.dtype != self.buffer.dtype:
            value = value.astype(self.buffer.dtype)
        self._builder.emit(S.BufferStore(self.buffer, value, self._index(index)))


class IRBuilder:
    """Collects statements into nested scopes; `get()` returns the whole statement."""

    def __init__(self):
        self._scopes = [[]]
        self._allocs = [[]]
        self._names = 0

    def emit(self, stmt) -> None:
        """Append a statement to the current block."""
        self._scopes[-1].append(stmt)

    def _push(self):
        self._scopes.append([])
        self._allocs.append([])

    def _pop(self):
        body = S.seq(*self._scopes.pop())
        for buf in reversed(self._allocs.pop()):
            body = S.Allocate(buf, body, buf.scope)
        return body

    @contextmanager
    def for_range(self, begin, end, name="i", dtype="int32", kind="serial"):
        """A loop over [begin, end); yields the loop variable."""
        loop_var = E.Var(name, dtype)
        begin = E.convert(begin, dtype)
        self._push()
        yield loop_var if _is_zero(begin) else loop_var + begin
        body = self._pop()
        extent = E.convert(end, dtype)
        self.emit(S.For(loop_var, 0, extent if _is_zero(begin) else extent - begin, kind, body))

    @contextmanager
    def if_scope(self, cond):
        """A block run when `cond` holds (an `else_scope` may follow it)."""
        self._push()
        yield
        self.emit(S.IfThenElse(cond, self._pop()))

    @contextmanager
    def else_scope(self):
        """The else block of the if_scope just closed."""
        prev = self._scopes[-1][-1] if self._scopes[-1] else None
        if not isinstance(prev, S.IfThenElse) or prev.else_case is not None:
            raise CompileError("IRBuilder.else_scope must directly follow an if_scope")
        self._push()
        yield
        body = self._pop()
        self._scopes[-1][-1] = S.IfThenElse(prev.condition, prev.then_case, body)

    def allocate(self, dtype, shape, name="buf", scope="local", at_root=False) -> BufferPtr:
        """A temporary buffer living over the current block (over the whole statement with
        at_root: a GPU kernel may not allocate global memory inside its loops, so scratch rows
        a loop body reuses row after row are allocated once, outside them)."""
        self._names += 1
        buf = Buffer(f"{name}_{self._names}", shape, dtype, scope=scope)
        self._allocs[0 if at_root else -1].append(buf)
        return BufferPtr(self, buf)

    def buffer_ptr(self, buffer) -> BufferPtr:
        """Indexing sugar over an existing buffer (an extern's input or output)."""
        return BufferPtr(self, buffer)

    def get(self):
        """The statement built so far (allocations of the outer block wrapped around it)."""
        if len(self._scopes) != 1:
            raise CompileError("IRBuilder.get: a for_range / if_scope block is still open")
        body = S.seq(*self._scopes[0])
        for buf in reversed(self._allocs[0]):
            body = S.Allocate(buf, body, buf.scope)
        return body


def _is_zero(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0


def create() -> IRBuilder:
    """A new IRBuilder (tvm.tir.ir_builder.create)."""
    return IRBuilder()


__all__ = ["IRBuilder", "BufferPtr", "create"]
