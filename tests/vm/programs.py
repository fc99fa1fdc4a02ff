"""Relay programs shared by the VM tests."""
import relay_backend as relay


def count_to():
    """@count(i, n) = if i < n then count(i + 1, n) else i; main(n) = count(0, n): a loop as recursion."""
    mod = relay.IRModule()
    count = relay.GlobalVar("count")
    i, n = relay.var("i", shape=(), dtype="int32"), relay.var("n", shape=(), dtype="int32")
    mod[count] = relay.Function([i, n], relay.If(relay.less(i, n), relay.Call(
        count, [relay.add(i, relay.const(1, "int32")), n]), i), relay.TensorType((), "int32"))
    m = relay.var("n", shape=(), dtype="int32")
    mod["main"] = relay.Function([m], relay.Call(count, [relay.const(0, "int32"), m]))
    return mod


def batched_kernels(machine) -> int:
    """How many kernels this thread's straight lines of `machine` (a VirtualMachine) ran
    inside native kernel sequences (codegen/kernel_sequence.py)."""
    from relay_backend.codegen.kernel_sequence import KernelSequence
    return sum(len(v[0]) for v in machine._storage_pool().sites.values()
               if isinstance(v, tuple) and isinstance(v[0], KernelSequence))
