"""An onnx.backend.base.Backend over relay_backend's executors, so ONNX's own node tests run.

    rep = RelayBackend.prepare(model, device="CPU")      # from_onnx + create_executor
    outputs = rep.run([x, y])                            # list of numpy arrays

A model whose shape-like inputs (Reshape's shape, Squeeze's axes, Pad's pads, ...) arrive as graph
inputs rather than initializers cannot be compiled ahead of the values (there are no dynamic-shape
ops); such a model is prepared lazily: each run binds its integer and bool inputs as constants
(one compile per distinct set of values) and feeds the float inputs at run time.

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

from ...errors import InputError
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
    """`inputs` (a list, one array, or {name: array}) as arrays in the order of `names`; an
    InputError names missing, unknown or miscounted inputs."""
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
    return [np.asarray(x) for x in inputs]


class RelayBackendRep(BackendRep):
    """A prepared model: the compiled (or interpreted) main and its input names."""

    def __init__(self, mod, params, executor: str, input_names):
        from ...build_module import create_executor
        self.mod, self.params, self.executor = mod, params, executor
        self.input_names = input_names
        self._fn = create_executor(executor, mod=mod, params=params or None).evaluate()

    def run(self, inputs, **kwargs):
        return _flatten(self._fn(*input_list(inputs, self.input_names)), [])


class DeferredBackendRep(BackendRep):
    """A model that needs some input values at import time: imported again per distinct value set."""

    def __init__(self, model, executor: str, input_names, shape=None):
        self.model, self.executor, self.input_names, self.shape = model, executor, input_names, shape
        self._cache = {}

    def run(self, inputs, **kwargs):
        from .converters import CONVERTERS
        inputs = input_list(inputs, self.input_names)
        bound = {n: x for n, x in zip(self.input_names, inputs) if x.dtype.kind in "iub"}
        key = tuple((n, x.dtype.str, x.shape, x.tobytes()) for n, x in bound.items())
        rep = self._cache.get(key)
        if rep is None:
            mod, params = OnnxImporter(CONVERTERS, self.shape, bind_inputs=bound).import_model(self.model)
            free = [n for n in self.input_names if n not in bound]
            rep = self._cache[key] = RelayBackendRep(mod, params, self.executor, free)
        return rep.run([x for n, x in zip(self.input_names, inputs) if n not in bound])


class RelayBackend(Backend):
    """ONNX backend API (prepare / run_model / supports_device) over relay_backend."""

    @classmethod
    def prepare(cls, model, device="CPU", executor=None, shape=None, **kwargs):
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
        try:
            mod, params = from_onnx(model, shape=shape)
        except DynamicInputError:
            return DeferredBackendRep(model, executor, names, shape)
        return RelayBackendRep(mod, params, executor, names)

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


prepare = RelayBackend.prepare
run_model = RelayBackend.run_model
supports_device = RelayBackend.supports_device
