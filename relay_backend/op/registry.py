"""The operator registry: one OpDef per operator holds everything passes and executors need.

An OpDef is itself a relay `Op` expression, so `Call(opdef, args, attrs)` is a call to it.
Fields (the one-place rule): name, input names, attrs class, type relation, pattern, support
level, numpy reference, samples for conformance tests, and (added by the compiler issue) the te
compute; a data-dependent op also declares a shape function, and an op whose relation can tell
the type of an unannotated input (a weight from `units`) declares fill_inputs.

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
                 shape_func: Callable = None, tag: str = None, doc: str = "",
                 fill_inputs: Callable = None, to_static: Callable = None, static_inputs=(),
                 shape_only: bool = False):
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
        self.tag = tag or _default_tag(self.pattern)
        self.doc = doc

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


def list_ops() -> list:
    """Every registered op, sorted by name."""
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def check() -> None:
    """Re-verify every registered op (a test calls this)."""
    for op in _REGISTRY.values():
        _validate(op)
