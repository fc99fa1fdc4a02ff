"""Parsing what the command line is given: input shapes and input arrays."""
import os
import re
import zipfile

import numpy as np

from ..errors import InputError
from ..runtime.limits import check_tensor_size

FILL_MODES = ("random", "zeros", "ones")
_SHAPE_ITEM = re.compile(r"^\s*([^:\s][^:]*?)\s*:\s*\[\s*([0-9,\s]*?)\s*\]\s*$")


def parse_input_shapes(text: str) -> dict:
    """"data:[1,3,224,224] mask:[1,16]" (items separated by spaces or ';') -> {name: (dims...)}."""
    shapes = {}
    if not text or not text.strip():
        return shapes
    items = re.findall(r"[^\s;:]+\s*:\s*\[[^\]]*\]", text)
    leftover = re.sub(r"[^\s;:]+\s*:\s*\[[^\]]*\]", "", text).replace(";", "").strip()
    if leftover or not items:
        raise InputError(f"--input-shapes {text!r}: expected NAME:[d0,d1,...] items separated by spaces, "
                         f"e.g. 'data:[1,3,224,224]'")
    for item in items:
        match = _SHAPE_ITEM.match(item)
        dims = [d for d in match.group(2).replace(" ", "").split(",") if d] if match else None
        if match is None or not all(d.isdigit() for d in dims):
            raise InputError(f"--input-shapes: {item!r} is not NAME:[d0,d1,...] with non-negative integers")
        shapes[match.group(1)] = tuple(int(d) for d in dims)
    return shapes


def load_inputs(path: str) -> dict:
    """{name: array} from an .npz file (read without pickle)."""
    if not os.path.isfile(path):
        raise InputError(f"--inputs {path!r}: no such file")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as err:
        raise InputError(f"--inputs {path!r} is not a readable .npz file ({err}); write one with "
                         f"numpy.savez(path, name=array, ...)") from None


def fill_inputs(specs, given: dict, mode: str, seed: int = 0) -> dict:
    """`given` completed with generated arrays for the inputs it lacks (specs: [{name, shape,
    dtype}]): uniform random in [0, 1), zeros or ones."""
    if mode not in FILL_MODES:
        raise InputError(f"--fill-mode {mode!r}: choose one of {list(FILL_MODES)}")
    rng = np.random.default_rng(seed)
    names = [spec["name"] for spec in specs]
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise InputError(f"--inputs names {unknown}, which the model does not have; its inputs are {names}")
    out = dict(given)
    for spec in specs:
        if spec["name"] in out:
            continue
        if any(d is None for d in spec["shape"]):
            raise InputError(f"input {spec['name']!r} has a dynamic shape {spec['shape']}; give it in "
                             f"--inputs (an .npz file)")
        shape, dtype = tuple(spec["shape"]), np.dtype(spec["dtype"])
        check_tensor_size(shape, dtype, f"input {spec['name']!r}")
        if mode == "zeros":
            out[spec["name"]] = np.zeros(shape, dtype)
        elif mode == "ones":
            out[spec["name"]] = np.ones(shape, dtype)
        elif dtype.kind == "f":
            out[spec["name"]] = rng.random(shape).astype(dtype)
        elif dtype.kind == "b":
            out[spec["name"]] = rng.integers(0, 2, shape).astype(dtype)
        else:
            out[spec["name"]] = rng.integers(0, 10, shape).astype(dtype)
    return out


def top_k(array: np.ndarray, k: int) -> list:
    """[(flat index, value)] of the k largest values of `array`, largest first."""
    flat = np.asarray(array).reshape(-1)
    k = max(0, min(int(k), flat.size))
    order = np.argsort(-flat, kind="stable")[:k]
    return [(int(i), flat[i].item()) for i in order]


__all__ = ["parse_input_shapes", "load_inputs", "fill_inputs", "top_k", "FILL_MODES"]
