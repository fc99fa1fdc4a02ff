"""The tensor dtypes relay_backend supports, and the one check every entry point uses.

numpy knows many dtypes no executor can run (complex, strings, objects, datetimes) and spells
byte-swapped ones (">f4") as dtypes of their own. Relay types, constants and casts accept only
the native-order numeric dtypes below, so an unsupported one is reported where it enters
(relay.var, TensorType, relay.const, cast) rather than later in graph JSON or codegen.
"""
import numpy as np

from ..errors import IRConstructionError

SUPPORTED_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float16", "float32", "float64")
# each supported name and numpy dtype (native byte order) -> its name
_CANONICAL = {**{name: name for name in SUPPORTED_DTYPES}, **{np.dtype(name): name for name in SUPPORTED_DTYPES}}


def supported_dtype(dtype, what: str) -> str:
    """The name of `dtype` ("float32") when relay_backend supports it, else an
    IRConstructionError saying `what` was given it and what to use instead."""
    if isinstance(dtype, (str, np.dtype)):       # the common case, without parsing it again
        known = _CANONICAL.get(dtype)
        if known is not None:
            return known
    try:
        parsed = np.dtype(dtype)
    except (TypeError, ValueError) as err:
        raise IRConstructionError(f"{what}: unknown dtype {dtype!r}; use a numpy dtype name such as "
                                  f"'float32', 'int32', 'int64' or 'bool' (supported: "
                                  f"{', '.join(SUPPORTED_DTYPES)})") from err
    name = str(parsed)
    if name in SUPPORTED_DTYPES:
        return name
    if parsed.byteorder not in "=|" and str(parsed.newbyteorder("=")) in SUPPORTED_DTYPES:
        native = str(parsed.newbyteorder("="))
        raise IRConstructionError(
            f"{what}: dtype {name!r} has non-native byte order, which no executor runs; use "
            f"{native} (convert an array with arr.astype(arr.dtype.newbyteorder('=')))")
    raise IRConstructionError(f"{what}: dtype {name!r} is not supported (no executor runs it); use "
                              f"one of {', '.join(SUPPORTED_DTYPES)}")


__all__ = ["SUPPORTED_DTYPES", "supported_dtype"]
