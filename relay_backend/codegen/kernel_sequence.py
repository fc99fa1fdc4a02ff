"""One native call that runs a list of kernel calls in order: an executor's run loop without a
Python-to-native transition per kernel.

    run = KernelSequence([(kernel address, args array address, shape_vars address or 0), ...],
                         keep=[the arrays those addresses point into, ...])
    run()        # for each entry, in order: kernel(args, shape_vars)

Each ctypes call costs ~0.2-0.4 us; on a small model (the seed CNN's five kernels take ~11 us)
that is a tenth of the run. The calls go through one trampoline, compiled once per process
with LLVM (module docstring of runtime/module.py gives the calling convention):

    void rb_run_kernels(int64 n, ptr fns, ptr args, ptr shapes):
        for i in 0 .. n-1: fns[i](args[i], shapes[i])

The sequence holds the addresses it was given: the caller keeps the kernels' module, the
argument arrays and the buffers they point to alive and unchanged (the graph executor's
prepared calls, planned once).
"""
import ctypes
import functools

from .llvm_target import LLVM_LOCK, load_objects, machine_spec, parse, target_machine

_IR = """
define void @rb_run_kernels(i64 %n, ptr %fns, ptr %args, ptr %shapes) {
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %fp = getelementptr ptr, ptr %fns, i64 %i
  %f = load ptr, ptr %fp
  %ap = getelementptr ptr, ptr %args, i64 %i
  %a = load ptr, ptr %ap
  %sp = getelementptr ptr, ptr %shapes, i64 %i
  %s = load ptr, ptr %sp
  call void %f(ptr %a, ptr %s)
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""

_TRAMPOLINE_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


@functools.lru_cache(maxsize=None)
def _trampoline():
    """(the ctypes trampoline, its engine): compiled once per process (not an optimised kernel
    build, so LLVM's compile counter does not count it)."""
    spec = machine_spec()
    with LLVM_LOCK:
        obj = target_machine(False, spec).emit_object(parse(_IR, "the kernel-sequence trampoline", spec))
    engine = load_objects([obj], spec)
    return _TRAMPOLINE_TYPE(engine.get_function_address("rb_run_kernels")), engine


class KernelSequence:
    """A callable running kernels in order with one native call (see the module docstring).

    Parameters
    ----------
    calls : list of (int, int, int)
        Per kernel: its native address, the address of its argument pointer array, the address
        of its shape-variable array (0 for none).
    keep : list
        Objects that must stay alive while the sequence runs (the arrays behind the
        addresses).
    """

    __slots__ = ("_call", "_n", "_arrays", "_keep")

    def __init__(self, calls, keep=()):
        calls = list(calls)
        n = len(calls)
        table = ctypes.c_void_p * max(n, 1)
        fns, args, shapes = (table(*[c[k] or None for c in calls]) for k in range(3))
        trampoline, engine = _trampoline()
        self._arrays = (fns, args, shapes)
        self._keep = (list(keep), engine)
        self._n = n
        fns_at, args_at, shapes_at = (ctypes.addressof(a) for a in self._arrays)
        self._call = functools.partial(trampoline, n, fns_at, args_at, shapes_at)

    def __call__(self) -> None:
        self._call()

    def __len__(self) -> int:
        return self._n


__all__ = ["KernelSequence"]
