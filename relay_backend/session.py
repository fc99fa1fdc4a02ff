"""InferenceSession: an onnxruntime-style front door over the compiled executors.

    import relay_backend
    sess = relay_backend.InferenceSession("model.onnx")          # executor="graph" by default
    [x.name for x in sess.get_inputs()], [y.name for y in sess.get_outputs()]
    outputs = sess.run(None, {"data": array})                    # all outputs, as numpy arrays

The model (a path, bytes or onnx.ModelProto) is imported with frontend.from_onnx and compiled
once. executor: "graph" (default), "vm" or "aot"; a model with symbolic dimensions runs on the VM
whatever was asked (the graph and AOT executors need static shapes). providers: None or a list
of onnxruntime provider names: "CPUExecutionProvider" compiles for llvm, "CUDAExecutionProvider"
for cuda (graph or VM). `run` may be called from several threads (one lock per session).
"""
import threading
from dataclasses import dataclass

import numpy as np

from . import diagnostics
from .build_module import build
from .errors import InputError
from .ir.dims import dim_spec
from .ir.types import TensorType
from .runtime.device import cpu, cuda

PROVIDERS = {"CPUExecutionProvider": "llvm", "CUDAExecutionProvider": "cuda"}
EXECUTORS = ("graph", "vm", "aot")
_LOG = diagnostics.get_logger("session")

# ONNX element type names as onnxruntime prints them (NodeArg.type)
_ORT_TYPE = {"float32": "tensor(float)", "float64": "tensor(double)", "float16": "tensor(float16)",
             "int8": "tensor(int8)", "int16": "tensor(int16)", "int32": "tensor(int32)",
             "int64": "tensor(int64)", "uint8": "tensor(uint8)", "uint16": "tensor(uint16)",
             "uint32": "tensor(uint32)", "uint64": "tensor(uint64)", "bool": "tensor(bool)"}


@dataclass(frozen=True)
class NodeArg:
    """An input or output of a session, as onnxruntime describes it.

    Parameters
    ----------
    name : str
        The input's or output's name in the model.
    shape : list
        Its dims: ints, or a str or None for a symbolic dimension.
    type : str
        Its ONNX type, as "tensor(float)".
    dtype : str
        Its numpy dtype name, as "float32".
    """

    name: str
    shape: list
    type: str
    dtype: str                      # the numpy dtype name ("float32")


def _target_of(providers) -> str:
    if providers is None:
        return "llvm"
    names = [p[0] if isinstance(p, (tuple, list)) else p for p in providers]
    unknown = [n for n in names if n not in PROVIDERS]
    if unknown or not names:
        raise InputError(f"InferenceSession: providers {names} are not supported; use "
                         f"{list(PROVIDERS)} (the first one is used)")
    return PROVIDERS[names[0]]


def _node_args(value_infos, types) -> list:
    """NodeArgs from ONNX value infos (declared dims) and the imported Relay types."""
    args = []
    for info, ty in zip(value_infos, types):
        dtype = str(ty.dtype) if isinstance(ty, TensorType) else "float32"
        dims = info.type.tensor_type.shape.dim if info.type.HasField("tensor_type") else []
        if dims:
            shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in dims]
        elif isinstance(ty, TensorType):
            shape = [dim_spec(d) for d in ty.shape]
        else:
            shape = []
        args.append(NodeArg(info.name, shape, _ORT_TYPE.get(dtype, f"tensor({dtype})"), dtype))
    return args


class InferenceSession:
    """Compile an ONNX model once and run it, with onnxruntime.InferenceSession's interface:
    get_inputs(), get_outputs(), run(output_names, {name: array}).

        session = relay_backend.InferenceSession("model.onnx")
        (probabilities,) = session.run(None, {"data": batch})

    Models with symbolic dimensions run on the VM whatever executor is asked for.
    Attributes: `executor` (the one used), `target`, `device`, and `mod` and `params` (the
    imported Relay program).

    Parameters
    ----------
    path_or_model : str or os.PathLike or bytes or onnx.ModelProto
        A path to an .onnx file, its bytes, or a loaded model.
    sess_options : object, optional
        Accepted for onnxruntime's signature and not used. Defaults to None.
    providers : list of str, optional
        ["CPUExecutionProvider"] (or None, the default) compiles for this CPU with LLVM;
        ["CUDAExecutionProvider"] for a CUDA GPU.
    executor : str, optional
        "graph" (the default), "vm" or "aot" (CPU only).
    shape : dict of str to tuple, optional
        {input name: shape} overriding the shapes the model declares, as in from_onnx.
        Defaults to None.
    """

    def __init__(self, path_or_model, sess_options=None, providers=None, executor: str = "graph",
                 shape=None, **_ignored):
        from .frontend.onnx.loading import load_model
        from .frontend import from_onnx
        del sess_options
        if executor not in EXECUTORS:
            raise InputError(f"InferenceSession: executor={executor!r}; choose one of {list(EXECUTORS)}")
        self.target = _target_of(providers)
        model = load_model(path_or_model, "InferenceSession")
        self.mod, self.params = from_onnx(model, shape=shape)
        main = self.mod["main"]
        out_type = main.checked_type.ret_type
        out_types = list(out_type.fields) if hasattr(out_type, "fields") else [out_type]
        in_types = [p.checked_type for p in main.params]
        initializers = {init.name for init in model.graph.initializer}
        inputs = [i for i in model.graph.input if i.name not in initializers]
        self._inputs = _node_args(inputs, in_types)
        self._outputs = _node_args(model.graph.output, out_types)
        dynamic = any(isinstance(t, TensorType) and t.is_dynamic for t in in_types + out_types)
        if dynamic and executor != "vm":
            _LOG.info("InferenceSession: the model has symbolic dimensions; running it on the VM "
                      "instead of the %s executor", executor)
            executor = "vm"
        if executor == "aot" and self.target != "llvm":
            raise InputError("InferenceSession: the AOT executor runs on the CPU only; use "
                             "executor='graph' or 'vm' with CUDAExecutionProvider")
        self.executor = executor
        self.device = cuda(0) if self.target == "cuda" else cpu(0)
        self._lock = threading.Lock()
        self._run_compiled = self._compile()

    def _compile(self):
        """A function {input name: array} -> [numpy outputs] for the chosen executor."""
        if self.executor == "vm":
            from .vm import VirtualMachine, compile as vm_compile
            machine = VirtualMachine(vm_compile(self.mod, self.target, params=self.params), self.device)

            def run_vm(feed):
                result = machine.invoke("main", **feed)
                fields = result.fields if hasattr(result, "fields") else [result]
                return [field.numpy() for field in fields]
            return run_vm
        factory = build(self.mod, self.target, params=self.params, executor=self.executor)
        module = factory["default"](self.device)

        def run_module(feed):
            with self._lock:
                module.run(**feed)
                return [module.get_output(i).numpy() for i in range(module.get_num_outputs())]
        return run_module

    def get_inputs(self) -> list:
        """The model's inputs (initializers excluded) as NodeArgs: name, shape, type, dtype."""
        return list(self._inputs)

    def get_outputs(self) -> list:
        """The model's outputs as NodeArgs, in the order `run(None, ...)` returns them."""
        return list(self._outputs)

    def get_providers(self) -> list:
        """The onnxruntime provider name matching the compile target."""
        return ["CUDAExecutionProvider" if self.target == "cuda" else "CPUExecutionProvider"]

    def run(self, output_names, input_feed: dict, run_options=None) -> list:
        """Run the model (onnxruntime's InferenceSession.run).

        Parameters
        ----------
        output_names : list of str or None
            The outputs to return, in that order; None returns all, in the model's order.
        input_feed : dict of str to array-like
            {input name: value} for every model input.
        run_options : object, optional
            Accepted for onnxruntime's signature and not used. Defaults to None.

        Returns
        -------
        outputs : list of numpy.ndarray
            The requested outputs.
        """
        del run_options
        if not isinstance(input_feed, dict):
            raise InputError(f"InferenceSession.run: input_feed must be a dict {{name: array}}, got "
                             f"{type(input_feed).__name__}")
        names = [i.name for i in self._inputs]
        missing = [n for n in names if n not in input_feed]
        unknown = sorted(set(input_feed) - set(names))
        if missing or unknown:
            raise InputError(f"InferenceSession.run: the model's inputs are {names}; missing {missing}, "
                             f"unknown {unknown}")
        all_outputs = [o.name for o in self._outputs]
        wanted = all_outputs if output_names is None else list(output_names)
        bad = [n for n in wanted if n not in all_outputs]
        if bad:
            raise InputError(f"InferenceSession.run: unknown output name(s) {bad}; the outputs are {all_outputs}")
        feed = {name: np.asarray(value) for name, value in input_feed.items()}
        results = dict(zip(all_outputs, self._run_compiled(feed)))
        return [results[n] for n in wanted]


__all__ = ["InferenceSession", "NodeArg", "PROVIDERS"]
