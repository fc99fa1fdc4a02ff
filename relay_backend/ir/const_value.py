"""relay.const's conversion of a Python or numpy value to the array a Constant holds.

Default dtypes follow tvm.relay.const: a Python int becomes int32, a float float32, a bool bool,
and int64 / float64 numpy values int32 / float32 unless `dtype` is given. Unlike a bare numpy
cast the conversion never changes a value silently: an integer outside the target's range (2**40
in int32, which numpy wraps to 0), a finite float that overflows to inf (1e300 in float32) or a
nan / inf meant for an integer dtype raises an IRConstructionError naming the value and a dtype
that holds it. (Float -> int truncates toward zero and float64 -> float32 rounds, as in numpy
and TVM: those are the conversions asked for, not range errors.)
"""
import numpy as np

from ..errors import IRConstructionError
from ..runtime.dtypes import supported_dtype

_WHAT = "relay.const"


def constant_array(value, dtype=None) -> np.ndarray:
    """The numpy array relay.const(value, dtype) holds, range-checked against its dtype."""
    source = _source_array(value)
    target = supported_dtype(dtype if dtype is not None else _default_dtype(value, source), _WHAT)
    _check_fits(source, target, defaulted=dtype is None)
    with np.errstate(all="ignore"):
        return source.astype(target, copy=False)   # relay.const copies it into an NDArray


def _source_array(value) -> np.ndarray:
    """`value` as numpy sees it; an object array only when it holds ints too large for int64."""
    try:
        source = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as err:
        raise IRConstructionError(f"{_WHAT}: cannot make a tensor of {_describe(value)}: {err}") from None
    if source.dtype == object:
        for item in source.flat:
            if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
                raise IRConstructionError(f"{_WHAT}: the value holds {_describe(item)}, which is not a "
                                          f"number; give ints, floats or bools")
        return source
    if source.dtype.kind not in "biuf":
        supported_dtype(source.dtype, _WHAT)   # raises, naming the dtype
    return source


def _default_dtype(value, source) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, int):
        return "int32"
    if isinstance(value, float):
        return "float32"
    if source.dtype == object:
        return "int32"   # Python ints, as tvm.relay would have made them
    return {"int64": "int32", "float64": "float32"}.get(str(source.dtype), source.dtype)


def _check_fits(source, target: str, defaulted: bool) -> None:
    if source.size == 0:
        return
    kind = np.dtype(target).kind
    if kind in "iu":
        bad = _outside_int_range(source, target)
    elif kind == "f":
        bad = _overflowing_float(source, target)
    else:
        return
    if bad is None:
        return
    default_note = (" (relay.const makes ints int32 and floats float32 unless dtype is given, as "
                    "tvm.relay does)") if defaulted else ""
    raise IRConstructionError(f"{_WHAT}: the value {bad!r} does not fit in {target}{default_note}; "
                              f"{_fix(bad, kind)}")


def _outside_int_range(source, target: str):
    """The first value of `source` outside `target`'s integer range (or not finite), else None."""
    info = np.iinfo(target)
    if source.dtype.kind == "b":
        return None
    if source.dtype.kind == "f":
        finite = np.isfinite(source)
        if not finite.all():
            return _python(source[~finite].flat[0])
        integral = np.trunc(source)          # what the cast keeps
    else:
        integral = source
    for value, original in ((integral.min(), source), (integral.max(), source)):
        if not info.min <= int(value) <= info.max:   # exact: Python ints
            return _python(original.flat[_index_of(integral, value)])
    return None


def _overflowing_float(source, target: str):
    """The first finite value of `source` that would become inf in `target`, else None."""
    if source.dtype == object:                        # Python ints beyond int64
        for value in source.flat:
            try:
                if np.isinf(np.array(float(value), target)):
                    return value
            except OverflowError:                     # beyond float64 itself
                return value
        return None
    with np.errstate(all="ignore"):
        mask = np.isfinite(source) & np.isinf(source.astype(target))
    return _python(source[mask].flat[0]) if mask.any() else None


def _index_of(values, value) -> int:
    return int(np.flatnonzero(values == value)[0])


def _python(value):
    return value.item() if isinstance(value, np.generic) else value


def _fix(bad, kind: str) -> str:
    if isinstance(bad, float) and not np.isfinite(bad):
        return f"{bad} has no integer value; use a float dtype such as dtype=\"float32\""
    if kind == "f" or isinstance(bad, float) and abs(bad) > np.iinfo("uint64").max:
        return "pass dtype=\"float64\" to keep it"
    if np.iinfo("int64").min <= bad <= np.iinfo("int64").max:
        return "pass dtype=\"int64\" to keep it"
    if 0 <= bad <= np.iinfo("uint64").max:
        return "pass dtype=\"uint64\" to keep it"
    return "no integer dtype holds it; pass dtype=\"float64\" for an approximation"


def _describe(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:60] + '...'}"


__all__ = ["constant_array"]
