"""An onnx.backend.base.Backend over relay_backend's executors, so ONNX's own node tests run.

    rep = RelayBackend.prepare(model, device="CPU")      # from_onnx + create_executor
    outputs = rep.run([x, y])                            # list of numpy arrays

A model whose shape-like inputs (Reshape's shape, Squeeze's axes, Pad's pads, ...) arrive as graph
inputs rather than initializers cannot be compiled ahead of the values (there are no dynamic-shape
ops); such a model is prepared lazily: each run binds its integer and bool inputs as constants
(one compile per distinct set of values) and feeds the float inputs at run time.

The executor is chosen per call (`executor="debug" | "graph" | "vm"`); the default is "graph"
when this version provides it, else the debug interpreter.
"""
import numpy as np
from onnx.backend.base import Backend, BackendRep

from .common import DynamicInputError
from .importer import OnnxImporter, from_onnx


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


class RelayBackendRep(BackendRep):
    """A prepared model: the compiled (or interpreted) main and its input names."""

    def __init__(self, mod, params, executor: str, input_names):
        from ...build_module import create_executor
        self.mod, self.params, self.executor = mod, params, executor
        self.input_names = input_names
        self._fn = create_executor(executor, mod=mod, params=params or None).evaluate()

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            inputs = [inputs[n] for n in self.input_names]
        elif isinstance(inputs, np.ndarray):
            inputs = [inputs]
        return _flatten(self._fn(*[np.asarray(x) for x in inputs]), [])


class DeferredBackendRep(BackendRep):
    """A model that needs some input values at import time: imported again per distinct value set."""

    def __init__(self, model, executor: str, input_names, shape=None):
        self.model, self.executor, self.input_names, self.shape = model, executor, input_names, shape
        self._cache = {}

    def run(self, inputs, **kwargs):
        from .converters import CONVERTERS
        if isinstance(inputs, dict):
            inputs = [inputs[n] for n in self.input_names]
        elif isinstance(inputs, np.ndarray):
            inputs = [inputs]
        inputs = [np.asarray(x) for x in inputs]
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
        super().prepare(model, device, **kwargs)
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
