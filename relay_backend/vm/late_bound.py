"""Late-bound constants of a VM Executable (TVM's executable.cc): big weights kept out of the code.

    exe.move_late_bound_consts("consts.params", byte_limit=1024)   # constants >= 1 KiB -> file
    code, lib = exe.save()                                         # the code blob no longer holds them
    exe = Executable.load_exec(code, lib)
    exe.load_late_bound_consts("consts.params")                    # before making a VirtualMachine

A constant of at least `byte_limit` bytes is named "const_<index>" and moved out: the executable
keeps its name, shape and dtype (written into the saved metadata), and its slot in the pool is
empty until the constants are loaded back from a params file or a {name: array} map. Loading
checks every name is given, nothing extra is, and each array has the recorded shape and dtype,
so a params file of another model or another byte limit is a clear SerializationError.
"""
import numpy as np

from ..errors import SerializationError
from ..runtime import ndarray as _nd
from ..runtime.ndarray import NDArray
from .bytecode import SUPPORTED_DTYPES

_MAX_DIM = (1 << 63) - 1


def is_late_bound(exe, index: int) -> bool:
    names = exe.late_bound_constant_names
    return bool(names) and names[index] is not None


def take_late_bound(exe, byte_limit) -> dict:
    """Move the constants of >= byte_limit bytes out of `exe`; returns {name: NDArray}."""
    if isinstance(byte_limit, bool) or not isinstance(byte_limit, (int, np.integer)) or byte_limit < 0:
        raise SerializationError(f"late-bound constants: byte_limit must be an int >= 0, got {byte_limit!r}")
    if exe.late_bound_constant_names:
        raise SerializationError("late-bound constants: this executable's constants are already "
                                 "late-bound; load them back before moving them again")
    names, moved = [], {}
    for i, const in enumerate(exe.constant_pool):
        if const.view_numpy().nbytes < byte_limit:
            names.append(None)
            continue
        name = f"const_{i}"
        moved[name] = const
        names.append(name)
        exe.late_bound_types[i] = (tuple(const.shape), str(const.dtype))
        exe.constant_pool[i] = None
    exe.late_bound_constant_names = names if moved else []
    return moved


def fill_late_bound(exe, values) -> None:
    """Put the late-bound constants back from {name: array}; every name needed, none extra."""
    if not hasattr(values, "items"):
        raise SerializationError(f"late-bound constants: expected a map of name -> array, got "
                                 f"{type(values).__name__}")
    if not exe.late_bound_constant_names:
        if values:
            raise SerializationError(f"late-bound constants: this executable has none, but "
                                     f"{sorted(values)[:5]} were given")
        return
    left = dict(values)
    loaded = {}
    for i, name in enumerate(exe.late_bound_constant_names):
        if name is None:
            continue
        if name not in left:
            raise SerializationError(f"late-bound constants: no value for {name!r} (constant {i}); the "
                                     f"map has {sorted(left)[:10]}")
        value = left.pop(name)
        array = value if isinstance(value, NDArray) else _nd.array(np.asarray(value))
        shape, dtype = exe.late_bound_types[i]
        if tuple(array.shape) != tuple(shape) or str(array.dtype) != dtype:
            raise SerializationError(f"late-bound constant {name!r} must be Tensor[{tuple(shape)}, {dtype}], "
                                     f"got Tensor[{tuple(array.shape)}, {array.dtype}] (a file of "
                                     f"another model?)")
        loaded[i] = array
    if left:
        raise SerializationError(f"late-bound constants: {sorted(left)[:10]} are not constants of this "
                                 f"executable (a file of another model or byte limit?)")
    for i, array in loaded.items():
        exe.constant_pool[i] = array
    exe.late_bound_constant_names = []
    exe.late_bound_types = {}


def late_bound_metadata(exe) -> list:
    """[[index, name, shape, dtype], ...] of the late-bound constants, for the saved metadata."""
    return [[i, name, list(exe.late_bound_types[i][0]), exe.late_bound_types[i][1]]
            for i, name in enumerate(exe.late_bound_constant_names) if name is not None]


def read_late_bound_metadata(rows) -> dict:
    """{index: (name, shape, dtype)} from saved metadata; SerializationError if malformed."""
    out = {}
    ok = isinstance(rows, list)
    for row in rows if ok else ():
        ok = (isinstance(row, list) and len(row) == 4 and type(row[0]) is int and row[0] >= 0
              and isinstance(row[1], str) and isinstance(row[2], list)
              and all(type(d) is int and 0 <= d <= _MAX_DIM for d in row[2])
              and row[3] in SUPPORTED_DTYPES and row[0] not in out)
        if not ok:
            break
        out[row[0]] = (row[1], tuple(row[2]), row[3])
    if not ok:
        raise SerializationError(f"VM executable: malformed late_bound_constants {str(rows)[:200]} "
                                 f"(expected [[index, name, shape, dtype], ...])")
    return out


def restore_late_bound(exe, late: dict) -> None:
    """Mark the constants named in saved metadata as late-bound (not loaded) in a loaded `exe`."""
    if not late:
        return
    exe.late_bound_constant_names = [late[i][0] if i in late else None for i in range(len(exe.constant_pool))]
    exe.late_bound_types = {i: (shape, dtype) for i, (_, shape, dtype) in late.items()}


def describe_constants(exe) -> str:
    """`exe.constants`: one line per constant, late-bound ones marked."""
    lines = []
    for i, const in enumerate(exe.constant_pool):
        if const is None:
            shape, dtype = exe.late_bound_types[i]
            lines.append(f"VM Const[{i}]: Tensor[{tuple(shape)}, {dtype}] late-bound as "
                         f"'{exe.late_bound_constant_names[i]}' (not loaded) on device index 0")
        else:
            late = f" late-bound as '{exe.late_bound_constant_names[i]}'" if is_late_bound(exe, i) else ""
            lines.append(f"VM Const[{i}]: Tensor[{tuple(const.shape)}, {const.dtype}]{late} on device index 0")
    return "".join(line + "\n" for line in lines)


__all__ = ["take_late_bound", "fill_late_bound", "late_bound_metadata", "read_late_bound_metadata",
           "restore_late_bound", "describe_constants", "is_late_bound"]
