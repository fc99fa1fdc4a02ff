"""Level 0 runtime: devices, NDArrays, containers, modules, params blobs, the global function registry."""
from .device import Device, cpu, cuda, device
from .ndarray import NDArray
from .container import ADT, tuple_object
from . import ndarray as nd
from .module import Module, load_module
from .params import save_param_dict, load_param_dict
from .registry import get_global_func, list_global_func_names, register_func, remove_global_func
from . import registry
from .thread_count import num_threads, set_num_threads
