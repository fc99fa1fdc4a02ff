"""Lowering a primitive Relay function to te tensors and then to a tir PrimFunc.

    params  -> te.placeholder per tensor (a tuple param contributes one per field; size
               variables stay, Any dims become fresh te vars: _ParamDims)
    body    -> post-order walk: each op call runs the selected implementation's compute on its
               arguments' tensors; 0-d constants become inlined te constants
    anchor  -> the call with the highest pattern (ties: the later one); its implementation's
               schedule function schedules the outputs of the whole fused function
    te.lower(schedule, inputs + outputs) -> PrimFunc
"""
from dataclasses import dataclass, field

from .. import te, tir
from ..autotvm.task.dispatcher import fused_function_scope
from ..errors import CompileError
from ..ir.expr import Call, Constant, Function, Let, Tuple, TupleGetItem, Var
from ..ir.functor import post_order
from ..ir.dims import dim_key, dim_vars, is_any, is_static
from ..ir.span import attach_span
from ..ir.types import TensorType, regroup_by_type, tuple_leaves
from ..op.registry import OpDef
from .cache import ensure_typed
from .select import select_implementation


@dataclass
class LoweredTE:
    """The te form of a primitive function: placeholders, outputs and the anchor's choice."""

    inputs: list
    outputs: list
    anchor_op: object = None
    anchor_attrs: object = None
    anchor_impl: object = None
    implementations: list = field(default_factory=list)  # (op name, implementation name)


def flatten_type(ty) -> list:
    """The TensorTypes of a (possibly nested) tuple type, in order."""
    leaves = tuple_leaves(ty)
    for t in leaves:
        if not isinstance(t, TensorType):
            raise CompileError(f"cannot compile a value of type {ty}: only tensors and tuples of tensors")
    return leaves


class _ParamDims:
    """The te dims of a primitive function's parameters, as TVM's compile engine makes them.

    A constant stays an int; a size variable stays itself (shared by every parameter using it,
    so the kernel is compiled once over it and the runtime binds it from the arguments' shapes);
    an expression on size variables stays itself when each of its variables is a whole dim of
    some parameter (so the runtime can bind it), else it becomes one fresh variable per distinct
    expression; every Any becomes its own fresh variable."""

    def __init__(self, param_types):
        self.whole = {id(d) for ty in param_types for d in ty.shape if isinstance(d, tir.Var)}
        self.fresh = {}

    def shape(self, ty: TensorType, name: str) -> list:
        return [self._dim(d, f"{name}_dim{i}") for i, d in enumerate(ty.shape)]

    def _dim(self, d, name: str):
        if is_static(d):
            return int(d)
        if is_any(d):
            return te.var(name)
        if isinstance(d, tir.Var) or all(id(v) in self.whole for v in dim_vars(d)):
            return d
        key = dim_key(d)
        if key not in self.fresh:
            self.fresh[key] = te.var(name)
        return self.fresh[key]


def _flatten_value(value) -> list:
    """The te tensors of a (nested) list of them, in order (iterative)."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(reversed(v))
        else:
            out.append(v)
    return out


def _constant_tensor(c: Constant):
    arr = c.data.numpy()
    if arr.ndim != 0:
        raise CompileError(
            f"a primitive function holds a {arr.shape} constant; only 0-d constants can be fused into "
            f"kernels (run FuseOps, which makes tensor constants parameters)")
    value = arr.item()
    dtype = str(arr.dtype)
    return te.compute((), lambda: te.const(value, dtype), name="compile_engine_const", tag="elemwise")


def lower_to_te(func: Function, target) -> LoweredTE:
    """Run each op's selected compute over placeholders for the function's parameters (a
    tunable op asks the dispatch context for this function's own config first)."""
    with fused_function_scope(func):
        return _lower_to_te(func, target)


def _lower_to_te(func: Function, target) -> LoweredTE:
    ensure_typed(func)
    env, inputs = {}, []
    ptypes = [param.checked_type if param._checked_type_ is not None else param.type_annotation
              for param in func.params]
    dims = _ParamDims([t for ptype in ptypes for t in flatten_type(ptype)])
    for i, (param, ptype) in enumerate(zip(func.params, ptypes)):
        tensors = [te.placeholder(dims.shape(t, f"p{i}_{k}"), t.dtype, name=f"{param.name_hint}_{k}"
                                  if len(flatten_type(ptype)) > 1 else param.name_hint)
                   for k, t in enumerate(flatten_type(ptype))]
        inputs.extend(tensors)
        env[param] = tensors[0] if isinstance(ptype, TensorType) else _regroup(ptype, iter(tensors))

    lowered = LoweredTE(inputs, [])
    best_pattern = -1
    for node in post_order(func.body):
        if node in env:
            continue
        if isinstance(node, Constant):
            env[node] = _constant_tensor(node)
        elif isinstance(node, Tuple):
            env[node] = [env[f] for f in node.fields]
        elif isinstance(node, TupleGetItem):
            env[node] = env[node.tuple_value][node.index]
        elif isinstance(node, Let):
            raise CompileError("let bindings inside a primitive function are not supported; "
                               "run FuseOps on a dataflow (graph normal form) program")
        elif isinstance(node, Call) and isinstance(node.op, OpDef):
            op = node.op
            args = [t for a in node.args for t in _flatten_value(env[a])]
            try:
                impl, outs = select_implementation(op, node.attrs, args, node.checked_type, target)
            except Exception as err:  # noqa: BLE001  # name the op and the function, whatever failed
                raise attach_span(CompileError(f"lowering {op.name} failed in\n{_excerpt(func)}\n"
                                               f"{type(err).__name__}: {err}"),
                                  node.span or func.span) from err
            lowered.implementations.append((op.name, impl.name))
            env[node] = outs[0] if isinstance(node.checked_type, TensorType) else _regroup(node.checked_type, iter(outs))
            if int(op.pattern) >= best_pattern:
                best_pattern = int(op.pattern)
                lowered.anchor_op, lowered.anchor_attrs, lowered.anchor_impl = op, node.attrs, impl
        elif isinstance(node, Var):
            raise CompileError(f"free variable %{node.name_hint} in a primitive function")
        else:
            raise CompileError(f"cannot lower {type(node).__name__} inside a primitive function:\n{_excerpt(func)}")
    lowered.outputs = _distinct_outputs(_flatten_value(env[func.body]), inputs)
    return lowered


def _regroup(ty, tensors):
    return regroup_by_type(ty, lambda t: next(tensors), list)


def _distinct_outputs(outs, inputs) -> list:
    """Outputs must be fresh compute stages: copy an output that is an input or repeated."""
    seen, result = set(), []
    input_ops = {id(t.op) for t in inputs}
    for t in outs:
        if id(t.op) in input_ops or id(t) in seen or not isinstance(t.op, (te.ComputeOp, te.ExternOp)):
            src = t
            t = te.compute(src.shape, lambda *idx, src=src: src[idx], name="copy", tag="elemwise")
        seen.add(id(t))
        result.append(t)
    return result


def _excerpt(func, limit: int = 600) -> str:
    text = func.astext()
    return text if len(text) <= limit else text[:limit] + "\n  ..."


def schedule_lowered(lowered: LoweredTE, target):
    """Apply the anchor implementation's schedule (the generic one when there is no op call)."""
    from ..strategy.generic import generic_schedule
    if lowered.anchor_impl is None or lowered.anchor_impl.schedule is None:
        return generic_schedule(target)(lowered.anchor_attrs, lowered.outputs, target)
    return lowered.anchor_impl.schedule(lowered.anchor_attrs, lowered.outputs, target)


def lower_to_primfunc(func: Function, target, name: str = "main"):
    """The tir PrimFunc of a primitive function, its inputs then its outputs as buffer
    parameters.

    Parameters
    ----------
    func : Function
        A primitive (fused) function.
    target : str or Target
        The target whose strategies choose the implementations.
    name : str, optional
        The PrimFunc's name. Defaults to "main".

    Returns
    -------
    prim_func : PrimFunc
        The lowered function.
    """
    lowered = lower_to_te(func, target)
    return _to_primfunc(lowered, target, name, func)


def _to_primfunc(lowered: LoweredTE, target, name: str, func):
    anchor = lowered.anchor_op.name if lowered.anchor_op is not None else "no op (a copy)"
    impl = f" ({lowered.anchor_impl.name})" if lowered.anchor_impl is not None else ""
    try:
        sched = schedule_lowered(lowered, target)
        prim = te.lower(sched, lowered.inputs + lowered.outputs, name=name)
    except Exception as err:  # noqa: BLE001  # a schedule that crashes: name the anchor op too
        raise attach_span(CompileError(f"lowering {name} failed scheduling anchor op {anchor}{impl} "
                                       f"({type(err).__name__}: {err}) for\n{_excerpt(func)}"),
                          func.span) from err
    prim.attrs["num_outputs"] = len(lowered.outputs)
    return prim

