"""CUDAModule: compiled CUDA kernels (PTX) plus how to launch them, as a runtime Module.

Every function of the module is a launch plan (`FunctionPlan`): the kernels to launch in order,
each with its grid (dims over the function's shape variables, the signature's dim encoding)
and block (constants), and the device workspace buffers its kernels share. Every kernel of a
function takes the same arguments: the buffers (inputs, outputs), the workspace buffers, then
the shape variables. `mod["f"](*cuda_ndarrays)` checks the arguments like any Module function
(on the CUDA device), allocates the workspace, launches the kernels through the device API
(runtime/cuda_driver.py: pycuda) and waits for them.

Exported, a CUDAModule is a stub shared object whose trailer carries one section: the PTX,
the CUDA source and the plans as JSON, validated on load like every other section.
"""
import json
import threading
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, RelayError, SerializationError
from .module import Function, Module
from .signature import FunctionInfo, eval_dim

CUDA_SECTION = "relay_backend.cuda"
CUDA_FORMAT_VERSION = 1
_SCALARS = {"int32": np.int32, "int64": np.int64}


@dataclass(frozen=True)
class KernelLaunch:
    """One __global__ function: its name, grid (3 dims) and block (3 ints)."""

    name: str
    grid: tuple
    block: tuple


@dataclass(frozen=True)
class FunctionPlan:
    """How to run one function: its signature, its kernels in order, its workspace buffers
    ((name, byte-size dim) pairs) and the dtypes of its shape variables."""

    info: FunctionInfo
    kernels: tuple
    workspace: tuple
    shape_dtypes: tuple

    def to_json(self) -> dict:
        return {"info": self.info.to_json(),
                "kernels": [{"name": k.name, "grid": list(k.grid), "block": list(k.block)}
                            for k in self.kernels],
                "workspace": [[name, nbytes] for name, nbytes in self.workspace],
                "shape_dtypes": list(self.shape_dtypes)}

    @staticmethod
    def from_json(obj, index: int) -> "FunctionPlan":
        """A plan from its JSON; SerializationError naming what is malformed."""
        where = f"CUDA function #{index}"
        if not isinstance(obj, dict) or not {"info", "kernels", "workspace", "shape_dtypes"} <= set(obj):
            raise SerializationError(f"{where}: expected info, kernels, workspace and shape_dtypes")
        info = FunctionInfo.from_json(obj["info"], index)
        names = set(info.shape_vars)
        kernels = []
        for k in _list(obj["kernels"], f"{where} kernels"):
            if not isinstance(k, dict) or not isinstance(k.get("name"), str) or not k["name"].isidentifier():
                raise SerializationError(f"{where} ({info.name}): a kernel needs an identifier name")
            grid = [_dim(d, names, f"{where} ({info.name}) grid") for d in _list(k.get("grid"), where)]
            block = _list(k.get("block"), where)
            if len(grid) != 3 or len(block) != 3 or not all(type(b) is int and 1 <= b <= 1024 for b in block):
                raise SerializationError(f"{where} ({info.name}): kernel {k['name']} needs a 3-d grid "
                                         f"and a 3-d block of 1..1024 threads, got {grid} / {block}")
            kernels.append(KernelLaunch(k["name"], tuple(grid), tuple(block)))
        workspace = []
        for row in _list(obj["workspace"], where):
            if not (isinstance(row, list) and len(row) == 2 and isinstance(row[0], str)):
                raise SerializationError(f"{where} ({info.name}): workspace rows are [name, bytes]")
            workspace.append((row[0], _dim(row[1], names, f"{where} ({info.name}) workspace")))
        dtypes = _list(obj["shape_dtypes"], where)
        if len(dtypes) != len(info.shape_vars) or any(d not in _SCALARS for d in dtypes):
            raise SerializationError(f"{where} ({info.name}): shape_dtypes must give int32/int64 "
                                     f"for each of {list(info.shape_vars)}")
        return FunctionPlan(info, tuple(kernels), tuple(workspace), tuple(dtypes))


def _list(value, where):
    if not isinstance(value, list):
        raise SerializationError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _dim(dim, names, where):
    """A dim that uses only the function's shape variables (checked by evaluating it)."""
    def check(d):
        if isinstance(d, bool):
            raise SerializationError(f"{where}: bad dim {d!r}")
        if isinstance(d, str) and d not in names:
            raise SerializationError(f"{where}: {d!r} is not a shape variable of the function")
        if isinstance(d, list):
            if len(d) != 3:
                raise SerializationError(f"{where}: bad dim {d!r}")
            check(d[1])
            check(d[2])
        return d
    check(dim)
    eval_dim(dim, {})                      # type errors surface as SerializationError

    def as_tuple(d):
        return (d[0], as_tuple(d[1]), as_tuple(d[2])) if isinstance(d, list) else d
    return as_tuple(dim)


class CUDAFunction(Function):
    """Launches one function's kernels on the CUDA device its arguments live on."""

    device_type = 2

    def __init__(self, plan: FunctionPlan, owner: "CUDAModule"):
        self.info = plan.info
        self.plan = plan
        self._owner = owner
        self._nargs = len(plan.info.params)
        self._local = threading.local()

    def __call__(self, *args):
        from .cuda_driver import backend
        values = self.check_args(args)
        devices = {a.device for a in args}
        if len(devices) != 1:
            raise InputError(f"{self.info.name}: the arguments are on {sorted(map(str, devices))}; "
                             f"a CUDA kernel reads and writes one device's memory")
        device = devices.pop()
        kernels = self._owner.kernels_on(device.device_id)[self.info.name]
        env = dict(zip(self.info.shape_vars, values))
        workspace = self._workspace(device, [max(eval_dim(nbytes, env), 1)
                                             for _, nbytes in self.plan.workspace])
        params = [np.uintp(a.data_ptr) for a in list(args) + workspace]
        params += [_SCALARS[t](v) for t, v in zip(self.plan.shape_dtypes, values)]
        api = backend()
        for kernel, spec in zip(kernels, self.plan.kernels):
            grid = [eval_dim(d, env) for d in spec.grid]
            if min(grid) > 0:              # an empty grid (a zero-size tensor) launches nothing
                api.launch(device.device_id, kernel, grid, spec.block, params)
        api.synchronize(device.device_id)

    def _workspace(self, device, sizes) -> list:
        """Device workspace buffers of `sizes` bytes, kept per thread for the next call."""
        from .cuda_driver import CudaNDArray
        cache = getattr(self._local, "workspace", None)
        if cache is None:
            cache = self._local.workspace = {}
        key = (device, tuple(sizes))
        if key not in cache:
            cache.clear()
            cache[key] = [CudaNDArray.empty((n,), "uint8", device) for n in sizes]
        return cache[key]

    def prepare(self, *args):
        self.check_args(args)
        return lambda: self(*args)

    def unchecked(self):
        return self.__call__

    def on_host(self, device):
        """A callable f(*cpu_ndarrays) running this function on CUDA `device`: the arguments are
        copied to the device, the kernels run, the outputs are copied back (for executors that
        keep their values in host memory, such as the VM)."""
        from .cuda_driver import CudaNDArray
        n_out = self.info.num_outputs or 1

        def staged(*args):
            on_device = [CudaNDArray.empty(a.shape, a.dtype, device) for a in args]
            for dst, src in zip(on_device[:len(args) - n_out], args):
                dst.copyfrom(src)
            self(*on_device)
            for dst, src in zip(args[len(args) - n_out:], on_device[len(args) - n_out:]):
                dst.copyfrom(src.numpy())
        staged.checked = self
        return staged


def host_function_on_device(function: Function, args):
    """A zero-argument callable running host (cpu) `function` on CUDA arrays `args` (inputs then
    outputs, fixed, as `prepare` takes them): each call copies the inputs into host buffers,
    runs the function, and copies its outputs back to the device. For the CPU functions an
    external codegen (relay.ext.*) adds to a cuda program: they never see a device pointer."""
    from .ndarray import empty
    n_in = len(args) - (function.info.num_outputs or 1)
    host = [empty(a.shape, a.dtype) for a in args]
    run = function.prepare(*host)

    def staged():
        for dst, src in zip(host[:n_in], args[:n_in]):
            dst.copyfrom(src)
        run()
        for dst, src in zip(args[n_in:], host[n_in:]):
            dst.copyfrom(src)
    return staged


class CUDAModule(Module):
    """CUDA kernels (type_key "cuda"): get_source("cu") / ("ptx"), launch plans,
    export_library; its functions run on a CUDA device (pycuda), loaded there on first use."""

    def __init__(self, plans, ptx: bytes, source: str, exporter=None):
        self.plans = {p.info.name: p for p in plans}
        self.ptx = bytes(ptx)
        super().__init__([p.info for p in plans], {}, sources={"cu": source, "ptx": self.ptx.decode(errors="replace")},
                         exporter=exporter, type_key="cuda", unrunnable="its kernels run on a CUDA device")
        self._functions = {name: CUDAFunction(plan, self) for name, plan in self.plans.items()}
        self._loaded = {}                  # device id -> {function name: [pycuda kernels]}

    @property
    def runnable(self) -> bool:
        from .ndarray import cuda_device_count
        return cuda_device_count()[0] > 0

    def get_function(self, name: str, query_imports: bool = False) -> Function:
        """A CUDA kernel launcher; with query_imports=True the imported modules (external
        codegens) are searched too."""
        if name in self._functions:
            return self._functions[name]
        return super().get_function(name, query_imports)

    def kernels_on(self, device_id: int) -> dict:
        """{function name: [kernels in launch order]} loaded on CUDA device `device_id`."""
        from .cuda_driver import backend, require_device
        from .device import cuda
        if device_id not in self._loaded:
            require_device(cuda(device_id))
            module = backend().load(device_id, self.ptx, self._sources["cu"])
            self._loaded[device_id] = {name: [module.get_function(k.name) for k in plan.kernels]
                                       for name, plan in self.plans.items()}
        return self._loaded[device_id]

    def get_source(self, fmt: str = "cu") -> str:
        key = {"cuda": "cu", "": "cu"}.get(fmt, fmt)
        if key not in ("cu", "ptx"):
            raise RelayError(f"get_source: a CUDA module has 'cu' (CUDA C) and 'ptx' sources, not {fmt!r}")
        return self._sources[key]

    def section(self) -> bytes:
        """This module as the bytes of its library section."""
        meta = json.dumps({"version": CUDA_FORMAT_VERSION, "source": self._sources["cu"],
                           "functions": [p.to_json() for p in self.plans.values()]}).encode()
        return len(meta).to_bytes(8, "little") + meta + self.ptx

    def _native_infos(self) -> list:
        return []                          # the shared object is a stub: kernels are in the section

    def export_library(self, path, fcompile=None, sections=None, cc=None, **kwargs) -> str:
        return super().export_library(path, fcompile, {CUDA_SECTION: self.section(), **(sections or {})},
                                      cc, **kwargs)


def load_cuda_section(data: bytes, exporter) -> CUDAModule:
    """The CUDAModule stored in a library's CUDA section (SerializationError when malformed)."""
    if len(data) < 8:
        raise SerializationError("load_module: the CUDA section is truncated")
    n = int.from_bytes(data[:8], "little")
    if n > len(data) - 8:
        raise SerializationError("load_module: the CUDA section's metadata length exceeds it")
    try:
        meta = json.loads(data[8:8 + n].decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise SerializationError(f"load_module: the CUDA section is unreadable: {str(err)[:200]}") from None
    if not isinstance(meta, dict) or meta.get("version") != CUDA_FORMAT_VERSION:
        raise SerializationError(f"load_module: CUDA section version {str(meta)[:40]}; this build "
                                 f"reads {CUDA_FORMAT_VERSION}")
    if not isinstance(meta.get("source"), str):
        raise SerializationError("load_module: the CUDA section has no source text")
    plans = [FunctionPlan.from_json(f, i) for i, f in enumerate(_list(meta.get("functions"), "CUDA functions"))]
    ptx = data[8 + n:]
    if not ptx.lstrip().startswith(b"//") and b".entry" not in ptx:
        raise SerializationError("load_module: the CUDA section does not hold PTX")
    return CUDAModule(plans, ptx, meta["source"], exporter)


__all__ = ["CUDAModule", "CUDAFunction", "FunctionPlan", "KernelLaunch", "CUDA_SECTION",
           "load_cuda_section", "host_function_on_device"]
