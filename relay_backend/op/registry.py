"""The operator registry: one OpDef per operator holds everything passes and executors need.

An OpDef is itself a relay `Op` expression, so `Call(opdef, args, attrs)` is a call to it.
Fields (the one-place rule): name, input names, attrs class, type relation, pattern, support
level, numpy reference, samples for conformance tests, and (added by the compiler issue) the te
compute; a data-dependent op also declares a shape function, an op whose relation can tell
the type of an unannotated input (a weight from `units`) declares fill_inputs, and an op that
only changes its input's shape says so (`is_reshape`, TVM's TReshapeOp).

Contracts:
  rel(arg_types, attrs) -> Type       plain Python over TensorType/TupleType; raises
                                      TypeInferenceError naming what is wrong. Dims may be
                                      symbolic or Any: compute them with ir/shape_math.py (its
                                      docstring says how a relation treats each kind). Called on
                                      concrete shapes at run time too, so it doubles as the shape
                                      function.
  fill_inputs(arg_types, attrs) -> {index: Type}   optional; arg_types has None for inputs
                                      whose type is not known yet. Returns the types the op implies
                                      for some of them (TVM's relations Assign them), e.g. nn.dense's
                                      weight (units, in_features); InferType unifies them in.
  shape_func(attrs, input_arrays) -> Type   data-dependent ops only: the output type for the
                                      concrete input *values* (the VM calls it at run time; the
                                      op's inputs must then be inputs of its fused function, so
                                      such ops are OPAQUE).
  to_static(args, attrs) -> (OpDef, Attrs)   dyn ops only (op/dyn/common.py): the static op and
                                      its attrs for concrete values of the shape arguments (args
                                      holds None at `static_inputs`, the positions of the data the
                                      static op takes); DynamicToStatic rewrites calls with it.
  shape_only                          True for ops that read only their inputs' shapes and dtypes
                                      (shape_of, ndarray_size): FoldConstant folds them once those
                                      shapes are static, as TVM's does.
  ref(*inputs, attrs) -> ndarray|tuple numpy reference; an input of TupleType arrives as a list.
  samples(rng) -> [Sample]            example inputs/attrs the conformance tests run.
  compute(attrs, inputs, out_type) -> [te.Tensor]   (compiler issue)

Passes may also attach named attributes to an op after it is defined, as TVM's `Op.set_attr`:
`register_op_attr("nn.relu", "FPrimalGradient", fn)` (or `register_gradient`), read back with
`op.get_attr("FPrimalGradient")`. A second registration needs a higher `level` to replace the
first (TVM's rule), so a user can override a built-in rule deliberately but not by accident.

Ops defined outside the package are built step by step instead (relay.op.register(name), then
set_num_inputs, add_type_rel, register_compute, ...; see op/op.py): such a *user* op is checked
when it is used, and a missing piece is an error naming the op and how to add it.
"""
import dataclasses
from typing import Callable, NamedTuple

from ..errors import OpDefinitionError, TypeInferenceError
from ..ir.attrs import Attrs
from ..ir.expr import OP_TABLE, Call, Op
from .op_attrs import OpAttrs, bump_generation, missing_piece
from .pattern import OpPattern

_REGISTRY = OP_TABLE   # name -> OpDef (ir.Op.get reads it too)


class Sample(NamedTuple):
    """One conformance case: numpy inputs (a list for a tuple input) and an attrs instance."""

    inputs: list
    attrs: object = None
    note: str = ""


class OpDef(OpAttrs, Op):
    """A registered operator. Calling it builds a relay Call: `ADD(x, y)`.

    Every field but the name has a default so a user op can start empty (`user_defined`); the
    built-in ops pass them all to defop, which checks them at import."""

    def __init__(self, name: str, *, inputs=(), rel: Callable = None,
                 pattern: OpPattern = OpPattern.OPAQUE, ref: Callable = None,
                 samples: Callable = None, attrs: type = None, level: int = 1,
                 compute: Callable = None, shape_func: Callable = None, tag: str = None,
                 doc: str = "", user_defined: bool = False,
                 is_reshape: bool = False, fill_inputs: Callable = None,
                 to_static: Callable = None, static_inputs=(), shape_only: bool = False):
        super().__init__(name)
        self.input_names = tuple(inputs)
        self.num_inputs = len(self.input_names)
        self.attrs_type = attrs
        self.rel = rel
        self.pattern = OpPattern(pattern)
        self.ref = ref
        self.samples = samples
        self.support_level = level
        self.compute = compute
        self.shape_func = shape_func
        self.fill_inputs = fill_inputs
        self.to_static = to_static
        self.static_inputs = tuple(static_inputs)
        self.shape_only = bool(shape_only)
        self._tag = tag   # None: follows the pattern (see the tag property)
        self.doc = doc
        # TVM's TReshapeOp: the op only reinterprets its input's shape (same elements, same
        # order), so a fused function of such ops may alias its input (relay.reshape_only)
        self.is_reshape = bool(is_reshape)
        self._attr_map = {}   # key -> value, set by set_attr (op_attrs.py)
        self.user_defined = user_defined
        self.arguments = []             # (name, type, description) from add_argument
        self.fstrategy = None           # FTVMStrategy: (attrs, inputs, out_type, target) -> OpStrategy
        self.schedule = None            # FTVMSchedule: the generic implementation's schedule
        self.shape_data_dependent = bool(shape_func)
        self.stateful = False

    @property
    def tag(self) -> str:
        """The te tag of the op's computes: the declared one, else its pattern's name, so a
        pattern set later (register_pattern, TempOpAttr) changes it too."""
        return self._tag or _default_tag(self.pattern)

    def missing(self, field: str) -> str:
        """The message for a piece this op lacks (see op_attrs.missing_piece)."""
        return missing_piece(self.name, field)

    def __call__(self, *args, attrs=None) -> Call:
        if self.num_inputs >= 0 and len(args) != self.num_inputs:   # < 0: not declared (TVM: any)
            raise TypeInferenceError(
                f"{self.name} takes {self.num_inputs} argument(s) {list(self.input_names)}, got {len(args)}")
        if self.attrs_type is None and attrs is not None:
            raise TypeInferenceError(f"{self.name} takes no attributes, got {attrs!r}")
        if self.attrs_type is not None:
            if attrs is None:
                attrs = self.attrs_type()
            elif not isinstance(attrs, self.attrs_type):
                raise TypeInferenceError(
                    f"{self.name} expects attrs of type {self.attrs_type.__name__}, got {type(attrs).__name__}")
        return Call(self, args, attrs)

    def __repr__(self) -> str:
        return f"Op({self.name})"

    def __reduce__(self):
        # Ops are singletons: copying or unpickling one returns the registered object.
        return (get, (self.name,))


def _default_tag(pattern: OpPattern) -> str:
    return {OpPattern.ELEMWISE: "elemwise", OpPattern.BROADCAST: "broadcast",
            OpPattern.INJECTIVE: "injective", OpPattern.COMM_REDUCE: "comm_reduce",
            OpPattern.OUT_ELEMWISE_FUSABLE: "out_elemwise_fusable"}.get(pattern, "opaque")


def _validate(op: OpDef) -> None:
    for field in ("rel", "ref", "samples"):
        if op.user_defined:   # built step by step: checked where each piece is used
            break
        if not callable(getattr(op, field)):
            raise OpDefinitionError(f"{op.name}: missing {field} (pass {field}=... to defop)")
    if op.attrs_type is not None:
        if not (dataclasses.is_dataclass(op.attrs_type) and issubclass(op.attrs_type, Attrs)):
            raise OpDefinitionError(f"{op.name}: attrs must be a dataclass deriving from Attrs")
        if not op.attrs_type.__dataclass_params__.frozen:
            raise OpDefinitionError(f"{op.name}: attrs class {op.attrs_type.__name__} must be frozen")
        for f in dataclasses.fields(op.attrs_type):
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise OpDefinitionError(f"{op.name}: attribute {f.name!r} of {op.attrs_type.__name__} has no default")


def register(op: OpDef) -> OpDef:
    """Add an op to the registry; a duplicate name or a missing piece is an OpDefinitionError."""
    if op.name in _REGISTRY:
        raise OpDefinitionError(f"operator {op.name!r} is registered twice")
    _validate(op)
    _REGISTRY[op.name] = op
    return op


def defop(name: str, **fields) -> OpDef:
    """Declare and register an operator in one statement (see OpDef for the fields)."""
    return register(OpDef(name, **fields))


def get(name: str) -> OpDef:
    """The registered operator called `name` (relay.op.get).

    Parameters
    ----------
    name : str
        The operator's name, as "add" or "nn.conv2d".

    Returns
    -------
    op : OpDef
        The operator; calling it builds a relay Call. An unknown name raises OpDefinitionError.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise OpDefinitionError(f"operator {name!r} is not registered") from None


def register_op_attr(op_name: str, attr_key: str, value=None, level: int = 10):
    """Attach `value` to op `op_name` under `attr_key` (tvm.ir.register_op_attr); without a
    value it returns a decorator, so a rule can be declared next to its function."""

    def attach(v):
        get(op_name).set_attr(attr_key, v, level)
        return v

    return attach(value) if value is not None else attach


def register_gradient(op_name: str, fgradient=None, level: int = 10):
    """Register the gradient of op `op_name` (tvm.relay.op.register_gradient):
    fgradient(orig_call, output_grad) -> [one gradient expression per input]."""
    return register_op_attr(op_name, "FPrimalGradient", fgradient, level)


def register_user_op(name: str, describe: str = "") -> OpDef:
    """A new, empty operator defined from user code (relay.op.register); its pieces are added
    with the register_* functions and checked where they are used."""
    if not isinstance(name, str) or not name:
        raise OpDefinitionError(f"an operator name must be a non-empty str, got {name!r}")
    if name in _REGISTRY:
        raise OpDefinitionError(f"operator {name!r} is registered twice")
    op = OpDef(name, doc=describe, user_defined=True)
    op.num_inputs = -1   # unknown until set_num_inputs / add_argument
    _REGISTRY[name] = op
    bump_generation()
    return op


def unregister(name: str) -> None:
    """Remove a user-defined op (tests and notebooks that define one again); built-in ops stay."""
    op = _REGISTRY.get(name)
    if op is None:
        raise OpDefinitionError(f"operator {name!r} is not registered")
    if not op.user_defined:
        raise OpDefinitionError(f"operator {name!r} is built in and cannot be unregistered")
    del _REGISTRY[name]
    bump_generation()


def list_ops() -> list:
    """Every registered op, sorted by name."""
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def check() -> None:
    """Re-verify every registered op (a test calls this)."""
    for op in _REGISTRY.values():
        _validate(op)
