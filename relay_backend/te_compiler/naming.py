"""Kernel names as Relay makes them: `tvmgen_default_fused_nn_conv2d_add_nn_relu`.

The candidate is "fused" + "_" + each op's name in post-order (each call once); past 80 characters
it is cut and a hash of the full name appended; the module prefix is mangled from mod_name
("default" -> "tvmgen_default", as tvm.relay.build does) unless it is an `Unmangled` name,
used as given (TVM's VM lowers with the bare prefix "vm_mod": `vm_mod_fused_add`); dots
become underscores; repeats get _1, _2, ...
"""
import dataclasses
import hashlib

from .. import tir
from ..ir.expr import Call, GlobalVar
from ..ir.functor import post_order
from ..op.registry import OpDef
from ..runtime.signature import SYMBOL_PREFIX

MAX_CANDIDATE = 80


class Unmangled(str):
    """A module prefix used verbatim for kernel names (no "tvmgen_" in front)."""

    __slots__ = ()


def mangle_module_name(mod_name) -> str:
    """"default" -> "tvmgen_default"; None or "" -> "tvmgen"; Unmangled("vm_mod") -> "vm_mod"."""
    if isinstance(mod_name, Unmangled):
        if not mod_name.isascii():
            raise ValueError(f"module name {mod_name!r} must be ASCII")
        return str(mod_name)
    if not mod_name:
        return "tvmgen"
    if not str(mod_name).isascii():
        raise ValueError(f"module name {mod_name!r} must be ASCII")
    return f"tvmgen_{mod_name}"


def candidate_name(func) -> str:
    """"fused_nn.conv2d_add_nn.relu" for a primitive function calling conv2d, add, relu."""
    names = [node.op.name for node in post_order(func.body)
             if isinstance(node, Call) and isinstance(node.op, OpDef)]
    name = "_".join(["fused", *names]) if names else "fused_identity"
    if len(name) > MAX_CANDIDATE:
        digest = hashlib.sha256(name.encode()).hexdigest()[:16]
        name = f"{name[:MAX_CANDIDATE]}_{digest}_"
    return name


class NameSupply:
    """Hands out unique names: the second request for `x` gets `x_1`, then `x_2`."""

    def __init__(self):
        self._counts = {}

    def fresh(self, name: str) -> str:
        if name not in self._counts:
            self._counts[name] = 0
            return name
        while True:
            self._counts[name] += 1
            candidate = f"{name}_{self._counts[name]}"
            if candidate not in self._counts:
                self._counts[candidate] = 0
                return candidate


def kernel_name(func, mod_name, supply: NameSupply) -> str:
    prefix = mangle_module_name(mod_name) if mod_name is not None else ""
    base = candidate_name(func)
    full = f"{prefix}_{base}" if prefix else base
    return supply.fresh(full.replace(".", "_"))


def renamed(cached, name: str):
    """`cached` (a CachedFunc) as kernel `name`: the same lowered code under another symbol.

    The TECompiler's cache is shared by every executor, so a function first lowered by
    build() carries a tvmgen_default_ name; an executor that names its kernels itself (the
    VM: vm_mod_fused_add, numbered per compiled module as in TVM) renames its copy instead
    of lowering again. A deferred function (recalled from a disk record) stays deferred: its
    copy lowers the original on first use and renames that."""
    if cached.func_name == name or cached.external_module is not None:
        return cached             # an external codegen's symbol is fixed by its module
    if cached.is_deferred:
        return type(cached).deferred(
            cached.target, name, lambda: renamed(lowered(cached), name),
            kernel=_renamed_kernel(cached.kernel, name, lambda: renamed_prim(cached.kernel.prim_func(), name)),
            implementations=cached.implementations, tuning_queries=cached.tuning_queries,
            untuned=cached.untuned)
    (prim,) = cached.funcs.values()
    prim = renamed_prim(prim, name)
    return dataclasses.replace(cached, func_name=name, prim_fn_var=GlobalVar(name), funcs={name: prim},
                               kernel=_renamed_kernel(cached.kernel, name, lambda: prim))


def lowered(cached):
    """`cached` with its lowering run (a deferred CachedFunc lowers itself once)."""
    cached.funcs                        # noqa: B018 - the access lowers a deferred function
    return cached


def _renamed_kernel(kernel, name: str, prim_func):
    """A codegen.KernelRecord (or None) under `name`, producing its PrimFunc with `prim_func()`."""
    if kernel is None:
        return None
    info = dataclasses.replace(kernel.info, name=name, symbol=SYMBOL_PREFIX + name)
    return dataclasses.replace(kernel, info=info, prim_func=prim_func)


def renamed_prim(prim, name: str):
    """`prim` (a tir PrimFunc) named `name`, its global symbol too."""
    return tir.PrimFunc(prim.params, prim.body, name, {**prim.attrs, "global_symbol": name})
