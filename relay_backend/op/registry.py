"""The operator registry: one OpDef per operator holds everything passes and executors need.

An OpDef is itself a relay `Op` expression, so `Call(opdef, args, attrs)` is a call to it.
Fields (the one-place rule): name, input names, attrs class, type relation, pattern, support
level, numpy reference, samples for conformance tests, and (added by the compiler issue) the te
compute; a data-dependent op also declares a shape function, and an op that only changes its
input's shape says so (`is_reshape`, TVM's TReshapeOp).

Contracts:
  rel(arg_types, attrs) -> Type       plain Python over TensorType/TupleType; raises
                                      TypeInferenceError naming what is wrong. Called on concrete
                                      shapes at run time too, so it doubles as the shape function.
  ref(*inputs, attrs) -> ndarray|tuple numpy reference; an input of TupleType arrives as a list.
  samples(rng) -> [Sample]            example inputs/attrs the conformance tests run.
  compute(attrs, inputs, out_type) -> [te.Tensor]   (compiler issue)

Passes may also attach named attributes to an op after it is defined, as TVM's `Op.set_attr`:
`register_op_attr("nn.relu", "FPrimalGradient", fn)` (or `register_gradient`), read back with
`op.get_attr("FPrimalGradient")`. A second registration needs a higher `level` to replace the
first (TVM's rule), so a user can override a built-in rule deliberately but not by accident.
"""
import dataclasses
from typing import Callable, NamedTuple

from ..errors import OpDefinitionError, TypeInferenceError
from ..ir.attrs import Attrs
from ..ir.expr import Call, Op
from .pattern import OpPattern

_REGISTRY = {}


class Sample(NamedTuple):
    """One conformance case: numpy inputs (a list for a tuple input) and an attrs instance."""

    inputs: list
    attrs: object = None
    note: str = ""


class OpDef(Op):
    """A registered operator. Calling it builds a relay Call: `ADD(x, y)`."""

    def __init__(self, name: str, *, inputs, rel: Callable, pattern: OpPattern, ref: Callable,
                 samples: Callable, attrs: type = None, level: int = 1, compute: Callable = None,
                 shape_func: Callable = None, tag: str = None, doc: str = "", is_reshape: bool = False):
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
        self.tag = tag or _default_tag(self.pattern)
        self.doc = doc
        # TVM's TReshapeOp: the op only reinterprets its input's shape (same elements, same
        # order), so a fused function of such ops may alias its input (relay.reshape_only)
        self.is_reshape = bool(is_reshape)
        self._attr_map = {}   # key -> (value, level), set by set_attr

    def set_attr(self, key: str, value, plevel: int = 10) -> None:
        """Attach `value` under `key` (tvm Op.set_attr); replacing one needs a higher plevel."""
        old = self._attr_map.get(key)
        if old is not None and old[1] >= plevel:
            raise OpDefinitionError(f"{self.name}: attribute {key!r} is already registered at level "
                                    f"{old[1]}; register with level > {old[1]} to override it")
        self._attr_map[key] = (value, plevel)

    def get_attr(self, key: str):
        """The value attached under `key`, or None."""
        entry = self._attr_map.get(key)
        return None if entry is None else entry[0]

    def has_attr(self, key: str) -> bool:
        return key in self._attr_map

    def reset_attr(self, key: str) -> None:
        """Remove the value attached under `key` (tvm Op.reset_attr)."""
        self._attr_map.pop(key, None)

    def __call__(self, *args, attrs=None) -> Call:
        if len(args) != self.num_inputs:
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
    """The registered op called `name` (relay.op.get)."""
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


def list_ops() -> list:
    """Every registered op, sorted by name."""
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def check() -> None:
    """Re-verify every registered op (a test calls this)."""
    for op in _REGISTRY.values():
        _validate(op)
