"""An onnx.backend.base.Backend over relay_backend's executors, so ONNX's own node tests run.

    rep = RelayBackend.prepare(model, device="CPU")      # from_onnx + create_executor
    outputs = rep.run([x, y])                            # list of numpy arrays

A model whose shape-like inputs (Reshape's shape, Squeeze's axes, Pad's pads, ...) arrive as graph
inputs rather than initializers, and whose converters need their values, is prepared lazily by
default: each run binds its integer and bool inputs as constants (one compile per distinct set of
values) and feeds the float inputs at run time. `prepare(..., bind_inputs=False)` turns that off:
every graph input is then supplied at run time, and such a model is reported as unsupported.

Sequence and optional inputs and outputs (ONNX seq(tensor) / optional(...)) are Python lists and
None-or-value, as onnxruntime gives them; inside they are the Prelude's List and Option, which
the debug interpreter and the VM run (the graph and AOT executors cannot, and say so). A sequence
input whose element shape the model does not declare is typed from the first run's value (its
rank; every dim dynamic), again one import per distinct set of ranks.

The executor is chosen per call (`executor="debug" | "graph" | "vm"`); the default is "graph"
when this version provides it, else the debug interpreter.

prepare accepts what from_onnx accepts (a ModelProto, its bytes, a path) and fails with the same
RelayErrors: the importer's own checks run before onnx.checker, so a malformed node is named the
same way; what only the checker finds is reported as an InvalidModelError carrying its message.
run checks the inputs' names and count before anything runs.
"""
import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from ...errors import InputError, OpNotImplemented
from ...ir.types import TupleType
from .adt_values import from_runtime, to_runtime
from .common import DynamicInputError, InvalidModelError
from .importer import OnnxImporter, from_onnx, model_opset
from .loading import load_model
from .validate import check_opset_known, validate_model


def default_executor() -> str:
    """The executor RelayBackend runs models on unless told otherwise."""
    return "graph"


def _flatten(value, out):
    from ...runtime.ndarray import NDArray
    if isinstance(value, NDArray):
        out.append(value.numpy())
    elif isinstance(value, np.ndarray):
        out.append(value)
    elif hasattr(value, "fields"):
        for f in value.fields:
            _flatten(f, out)
    else:
        try:
            for f in value:
                _flatten(f, out)
        except TypeError:
            out.append(np.asarray(value))
    return out


def input_list(inputs, names) -> list:
    """`inputs` (a list, one array, or {name: array}) in the order of `names`; an InputError names
    missing, unknown or miscounted inputs. Values stay as given (a list may be a sequence input)."""
    if isinstance(inputs, dict):
        missing = [n for n in names if n not in inputs]
        unknown = [n for n in inputs if n not in names]
        if missing or unknown:
            raise InputError(f"run: missing input(s) {missing}, unknown input(s) {unknown}; the model expects "
                             f"{list(names)}")
        inputs = [inputs[n] for n in names]
    elif isinstance(inputs, np.ndarray):
        inputs = [inputs]
    inputs = list(inputs)
    if len(inputs) != len(names):
        raise InputError(f"run: got {len(inputs)} inputs, but the model expects {len(names)} ({list(names)})")
    return inputs


class NeedsVMError(OpNotImplemented):
    """The chosen executor cannot run the imported program (control flow, ADT values, dynamic
    shapes); the debug interpreter or the VM can."""


class RelayBackendRep(BackendRep):
    """A prepared model: the compiled (or interpreted) main and its input names."""

    def __init__(self, mod, params, executor: str, input_names):
        from ...build_module import create_executor
        from ...te_compiler.lower_main import GraphCodegenError
        self.mod, self.params, self.executor = mod, params, executor
        self.input_names = input_names
        main = mod["main"]
        self._param_types = [getattr(p, "_checked_type_", None) or p.type_annotation for p in main.params]
        self._ret_type = main.ret_type  # InferType (run by from_onnx) sets it
        try:
            self._fn = create_executor(executor, mod=mod, params=params or None).evaluate()
        except GraphCodegenError as err:
            raise NeedsVMError(f"RelayBackend: {err}; prepare(..., executor='vm') runs this model") from err

    def run(self, inputs, **kwargs):
        values = input_list(inputs, self.input_names)
        args = [to_runtime(v, t, self.mod, f"run: input {n!r}")
                for v, t, n in zip(values, self._param_types, self.input_names)]
        out = self._fn(*args)
        ret = self._ret_type
        if isinstance(ret, TupleType):
            return [from_runtime(v, t, self.mod) for v, t in zip(out.fields, ret.fields)]
        return [from_runtime(out, ret, self.mod)]


class DeferredBackendRep(BackendRep):
    """A model imported again per distinct run-time signature: the values of its integer and bool
    tensor inputs when its converters need them (`bind`), and the element ranks of its sequence
    inputs whose element shape the model does not declare (`open_elements`)."""

    def __init__(self, model, executor: str, input_names, shape=None, bind=False, open_elements=()):
        self.model, self.executor, self.input_names, self.shape = model, executor, input_names, shape
        self.bind, self.open_elements = bind, set(open_elements)
        self._cache = {}

    def run(self, inputs, **kwargs):
        from .converters import CONVERTERS
        inputs = input_list(inputs, self.input_names)
        shape = dict(self.shape or {})
        for name, value in zip(self.input_names, inputs):
            if name in self.open_elements:
                shape[name] = (None,) * _element_rank(value)
        bound = {}
        if self.bind:
            bound = {n: np.asarray(x) for n, x in zip(self.input_names, inputs)
                     if not isinstance(x, (list, type(None))) and np.asarray(x).dtype.kind in "iub"}
        key = (tuple(sorted((n, len(s)) for n, s in shape.items() if n in self.open_elements)),
               tuple((n, x.dtype.str, x.shape, x.tobytes()) for n, x in bound.items()))
        rep = self._cache.get(key)
        if rep is None:
            mod, params = OnnxImporter(CONVERTERS, shape, bind_inputs=bound).import_model(self.model)
            free = [n for n in self.input_names if n not in bound]
            rep = self._cache[key] = RelayBackendRep(mod, params, self.executor, free)
        return rep.run([x for n, x in zip(self.input_names, inputs) if n not in bound])


def _element_rank(value) -> int:
    """The rank of the first tensor inside a sequence (or optional) input value (0 when empty)."""
    while isinstance(value, (list, tuple)):
        if not value:
            return 0
        value = value[0]
    return 0 if value is None else np.ndim(value)


def _has_integer_inputs(graph, names) -> bool:
    """Whether some tensor graph input in `names` holds integers or bools (a possible shape input)."""
    return any(inp.name in names and inp.type.WhichOneof("value") == "tensor_type" and
               onnx.helper.tensor_dtype_to_np_dtype(inp.type.tensor_type.elem_type).kind in "iub"
               for inp in graph.input if inp.type.tensor_type.elem_type)


def _open_element_inputs(graph, names) -> list:
    """The graph inputs that are sequences or optionals whose innermost tensor declares no shape."""
    out = []
    for inp in graph.input:
        ty = inp.type
        while ty.WhichOneof("value") in ("sequence_type", "optional_type"):
            ty = getattr(ty, ty.WhichOneof("value")).elem_type
        if inp.name in names and inp.type.WhichOneof("value") != "tensor_type" and \
                ty.WhichOneof("value") == "tensor_type" and not ty.tensor_type.HasField("shape"):
            out.append(inp.name)
    return out


class RelayBackend(Backend):
    """ONNX backend API (prepare / run_model / supports_device) over relay_backend."""

    @classmethod
    def prepare(cls, model, device="CPU", executor=None, shape=None, bind_inputs=True, **kwargs):
        """A rep whose run() takes the graph inputs. bind_inputs=False: never import again with
        input values bound as constants (every input is a run-time input)."""
        model = load_model(model, "RelayBackend.prepare")
        try:
            super().prepare(model, device, **kwargs)  # onnx.checker.check_model
        except onnx.checker.ValidationError as err:
            opset = model_opset(model)  # our own checks name the node when they can
            check_opset_known(opset, "RelayBackend.prepare: the model uses ONNX")
            validate_model(model, opset)
            raise InvalidModelError(f"RelayBackend.prepare: the ONNX checker rejects the model: {err}") from err
        inits = {i.name for i in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in inits]
        executor = executor or default_executor()
        open_elements = [n for n in _open_element_inputs(model.graph, names) if n not in (shape or {})]
        if open_elements:
            return DeferredBackendRep(model, executor, names, shape, bind_inputs, open_elements)
        try:
            mod, params = from_onnx(model, shape=shape)
            return RelayBackendRep(mod, params, executor, names)
        except (DynamicInputError, NeedsVMError):
            # shape-like inputs computed at run time: converters without a dyn form need their values,
            # and an executor without dynamic shapes needs them bound
            if not bind_inputs or not _has_integer_inputs(model.graph, names):
                raise
            return DeferredBackendRep(model, executor, names, shape, bind=True)

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


prepare = RelayBackend.prepare
run_model = RelayBackend.run_model
supports_device = RelayBackend.supports_device
