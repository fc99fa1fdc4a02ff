"""Level 0 runtime: devices, NDArrays, containers."""
from .device import Device, cpu, cuda, device
from .ndarray import NDArray
from .container import ADT, tuple_object
from . import ndarray as nd
from .module import Module, load_module
from .params import save_param_dict, load_param_dict
from .thread_count import num_threads, set_num_threads
