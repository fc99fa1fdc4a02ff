"""AotProgram: a fused, typed main flattened into kernel calls over one planned workspace.

The walk over main (params, constants, primitive calls, tuples, lets) is
te_compiler.lower_main's, shared with the graph executor's codegen. What is AOT's own:

* the memory plan runs with `reuse_for_outputs=False`, because outputs are the caller's
  buffers (`struct tvmgen_default_outputs`), and inputs are the caller's too;
* every storage holding intermediates gets a 64-byte aligned offset in ONE arena; storages of
  inputs, constants and outputs are not in it, so `workspace_size` counts intermediates only
  (plus scratch for kernels whose temporaries are too big for the stack);
* a reshape-only primitive aliases its input (no kernel call) unless its result is a model
  output, which must land in the caller's buffer;
* a concatenation whose inputs can be written straight into their slices of its output
  (te_compiler/inplace_concat.py, as in the graph executor) makes no call: its inputs are views
  at byte offsets of its output's storage, an arena slot or the caller's output buffer
  (analysis.memory_views plans and checks them);
* a model output that is an input, a constant or a repeat of another output is a memcpy.
"""
from dataclasses import dataclass, field

from ..analysis.memory_plan import Step
from ..analysis.memory_views import check_views, plan_with_views, resolve
from ..errors import CompileError
from ..te_compiler.inplace_concat import inplace_concats
from ..te_compiler.lower_main import lower_main
from ..te_compiler.naming import mangle_module_name

ALIGN = 64


def align(n: int) -> int:
    return (int(n) + ALIGN - 1) // ALIGN * ALIGN


class AotCodegenError(CompileError):
    """The program cannot be compiled ahead of time (see the graph executor's limits)."""


@dataclass
class Tensor:
    """One flattened tensor of the program and where its bytes live."""

    shape: tuple
    dtype: str
    kind: str            # "input" | "param" | "intermediate" | "output"
    name: str            # input var name, constant name or producing kernel
    nbytes: int
    place: tuple = None  # ("input", i) | ("const", k) | ("output", i, byte offset) | ("arena", offset)


@dataclass
class KernelCall:
    """One kernel invocation: func_name, argument tensor ids (inputs then outputs)."""

    func_name: str
    inputs: tuple
    outputs: tuple


@dataclass
class AotProgram:
    """Everything the C emitter needs to write a model; built by lower_program.

    Parameters
    ----------
    mod_name : str
        The model's name (mod_name of relay.build).
    prefix : str
        The prefix of every generated symbol, as "tvmgen_default".
    tensors : list of Tensor
        Every tensor of the program, by id: shape, dtype, kind and where it lives.
    inputs : list of tuple
        (name, tensor id) per parameter of main, in order.
    outputs : list of int
        The tensor id of each flattened output.
    constants : list of tuple
        (name, numpy array, tensor id) per constant.
    calls : list of KernelCall
        The kernel calls, in execution order.
    copies : list of tuple
        (output index, source tensor id) copies made after the calls (an output that is an
        input or a constant).
    prim_funcs : dict of str to PrimFunc
        The kernels, by name.
    arena_bytes : int
        The size of the planned intermediates, in 64-byte aligned slots.
    plan : MemoryPlan, optional
        The memory plan: a storage id per entry (a view shares its root's). Defaults to None.
    steps : list, optional
        The planner's steps (inputs and outputs of each call). Defaults to [].
    entries : list, optional
        The planner's entries (one per value). Defaults to [].
    views : dict, optional
        In-place concatenations: input entry -> (concatenation output entry, byte offset).
        Defaults to {}.
    dropped : set, optional
        The indices (in `steps`) of the concatenations that run in place. Defaults to set().
    kernel_ws_offset : int, optional
        Where the kernels' scratch space starts, after the arena. Defaults to 0.
    kernel_ws_bytes : int, optional
        The size of the kernels' scratch space. Defaults to 0.
    primitive_functions : dict, optional
        The Relay primitive function of each kernel, by name (for debugging). Defaults to {}.
    """

    mod_name: str
    prefix: str                        # "tvmgen_default"
    tensors: list
    inputs: list                       # (name, tensor id) in main's parameter order
    outputs: list                      # tensor id per flattened output
    constants: list                    # (name, numpy array, tensor id)
    calls: list                        # KernelCall in execution order
    copies: list                       # (output index, source tensor id) memcpys after the calls
    prim_funcs: dict                   # func_name -> tir PrimFunc
    arena_bytes: int                   # planned intermediates, 64-byte aligned slots
    plan: object = None                # analysis.memory_plan.MemoryPlan
    steps: list = field(default_factory=list)
    entries: list = field(default_factory=list)
    views: dict = field(default_factory=dict)
    dropped: set = field(default_factory=set)
    kernel_ws_offset: int = 0          # scratch for kernel temporaries, after the arena
    kernel_ws_bytes: int = 0
    primitive_functions: dict = field(default_factory=dict)

    @property
    def workspace_size(self) -> int:
        """Bytes of the static arena: planned intermediates plus kernel scratch."""
        return self.kernel_ws_offset + self.kernel_ws_bytes if self.kernel_ws_bytes else self.arena_bytes


def lower_program(func, target="llvm", mod_name="default") -> AotProgram:
    """Flatten the fused, typed main into an AotProgram with a checked memory plan.

    Parameters
    ----------
    func : Function
        The main function, fused and typed.
    target : str or Target, optional
        What the kernels are compiled for. Defaults to "llvm".
    mod_name : str, optional
        The prefix of the generated names. Defaults to "default".

    Returns
    -------
    program : AotProgram
        The program.
    """
    lowered = lower_main(func, target, mod_name, executor="AOT")
    tensors = [Tensor(e.shape, e.dtype, e.kind, e.name, e.nbytes) for e in lowered.entries]
    kinds = [t.kind for t in tensors]

    # inputs (main's params, in order) and constants (p0, p1, ... in first-use order)
    inputs = lowered.inputs
    for i, (_, eid) in enumerate(inputs):
        tensors[eid].place = ("input", i)
    constants = []
    for k, (name, data, eid) in enumerate(lowered.constants):
        tensors[eid].place = ("const", k)
        constants.append((name, data.numpy(), eid))
    outputs = list(lowered.outputs)

    # steps: keep a reshape alias only when its result is an intermediate
    steps, calls = [], []
    for step in lowered.steps():
        alias = step.alias_of
        if alias is not None and kinds[step.outputs[0]] != "intermediate":
            alias = None
        steps.append(Step(step.inputs, step.outputs, alias, step.name))
    planner_entries = lowered.planner_entries()
    views, dropped = inplace_concats(lowered)
    plan, view_offsets = plan_with_views(steps, planner_entries, views, dropped, reuse_for_outputs=False)
    plan.check_size("the AOT executor")
    check_views(steps, planner_entries, views, dropped, plan.storage_ids, plan.storage_sizes, view_offsets)
    sids = plan.storage_ids
    steps = [s if s.alias_of is None or sids[s.outputs[0]] == sids[s.alias_of] else
             Step(s.inputs, s.outputs, None, s.name) for s in steps]      # an alias not honoured runs

    # outputs: the first head naming a kernel-written entry owns it; the rest are copies
    copies, owner = [], {}
    for i, eid in enumerate(outputs):
        if tensors[eid].kind == "output" and eid not in owner:
            owner[eid] = i
            tensors[eid].place = ("output", i, 0)
        else:
            copies.append((i, eid))
    arena = _place_intermediates(tensors, steps, plan, resolve(views))

    used = {}                  # kernel names in first-call order: model.c is the same in every
    for index, (step, node) in enumerate(zip(steps, lowered.calls)):   # process (a set's order
        if step.alias_of is not None or index in dropped:                # follows the hash seed)
            continue
        used.setdefault(node.func_name, None)
        calls.append(KernelCall(node.func_name, tuple(step.inputs), tuple(step.outputs)))
    prim_funcs = {}
    for name in used:
        if lowered.cached[name].external_module is not None:
            raise AotCodegenError(f"{name} is compiled by an external codegen (Compiler attribute), and "
                                  f"the AOT executor links only the kernels it generates; use the graph "
                                  f"executor or the VM for partitioned functions")
        prim_funcs.update(lowered.cached[name].funcs)
    return AotProgram(mod_name, mangle_module_name(mod_name), tensors, inputs, outputs, constants,
                      calls, copies, prim_funcs, arena, plan, steps, planner_entries,
                      views=views, dropped=dropped, kernel_ws_offset=arena,
                      primitive_functions={k: lowered.prims[k] for k in used if k in lowered.prims})


def _place_intermediates(tensors, steps, plan, roots) -> int:
    """Give every intermediate its place and return the arena's size: one aligned arena slot
    per storage that holds intermediates only; a view of an in-place concatenation (`roots`:
    view -> (root entry, byte offset)) lies at its offset inside its root's place (an arena
    slot or an output buffer); a reshape alias shares its source's place (an input, a constant,
    an output or a slot)."""
    sids = plan.storage_ids
    alias_of = {out: step.alias_of for step in steps if step.alias_of is not None for out in step.outputs}
    outside = {sids[eid] for eid, t in enumerate(tensors) if t.kind != "intermediate"}
    offsets, arena = {}, 0
    for eid, t in enumerate(tensors):
        if t.kind != "intermediate" or eid in roots or eid in alias_of:
            continue
        sid = sids[eid]
        if sid in outside:
            raise AotCodegenError(f"entry {eid} ({t.name}) shares storage {sid} with an input, a "
                                  f"constant or an output")
        if sid not in offsets:
            offsets[sid] = arena
            arena += align(plan.storage_sizes[sid])
        t.place = ("arena", offsets[sid])
    for eid, (root, offset) in roots.items():   # roots are concatenation outputs, placed above
        kind, where, *rest = tensors[root].place
        if kind == "arena":
            tensors[eid].place = ("arena", where + offset)
        elif kind == "output":
            tensors[eid].place = ("output", where, rest[0] + offset)
        else:
            raise AotCodegenError(f"in-place concatenation: entry {root} holding views is a {kind}")
    for eid, t in enumerate(tensors):   # in entry order, so an alias's source is placed first
        if t.kind == "intermediate" and eid in alias_of:
            t.place = tensors[alias_of[eid]].place
    return arena
