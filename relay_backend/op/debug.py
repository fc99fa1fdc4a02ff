"""debug (TVM's relay.op.debug): pass a value through unchanged, calling a Python callback on it
when the debug interpreter evaluates the call.

`debug(expr, debug_func)` registers the callback under a generated name (TVM's
"debugger_func<N>", an EnvFunc there) and the call carries only that name, so a program with a
debug call still prints, parses and serializes. The `debug` executor runs the op's reference,
which looks the name up and calls the callback with the value (a numpy array). A compiled
executor cannot call back into Python: compiling a debug call that names a callback is a
CompileError saying so; without a callback the op is the identity everywhere. The op is
stateful, so FoldConstant never runs a callback at compile time.
"""
import dataclasses
import itertools

import numpy as np

from ..errors import CompileError, ExecutionError
from ..ir.attrs import Attrs
from . import index_math as IM
from . import samples as S
from .op import register_stateful
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import identity_rel

_CALLBACKS = {}
_COUNTER = itertools.count()


@dataclasses.dataclass(frozen=True)
class DebugAttrs(Attrs):
    debug_func: str = ""


def register_debug_func(name: str, func) -> str:
    """Make `func(value)` the callback debug calls naming `name` run (returns the name)."""
    if not callable(func):
        raise CompileError(f"debug: the callback for {name!r} must be callable, got {func!r}")
    _CALLBACKS[name] = func
    return name


def _debug_ref(value, attrs):
    if attrs.debug_func:
        func = _CALLBACKS.get(attrs.debug_func)
        if func is None:
            raise ExecutionError(f"debug: no callback is registered under {attrs.debug_func!r} in this process; "
                                 f"register one with register_debug_func(name, func) from relay_backend.op.debug")
        func(np.array(value, copy=True))
    return value


def _debug_compute(attrs, inputs, out_type):
    if attrs.debug_func:
        raise CompileError(f"debug: the call names the Python callback {attrs.debug_func!r}, which compiled code "
                           f"cannot call; run the program on the debug executor (relay.create_executor('debug')) "
                           f"or remove the debug call")
    x, = inputs
    return [IM.compute(DEBUG, IM.te_dims(x), lambda *i: x[i])]


DEBUG = defop("debug", inputs=("program",), attrs=DebugAttrs, rel=identity_rel, pattern=OpPattern.OPAQUE,
              ref=_debug_ref, compute=_debug_compute, level=1,
              samples=lambda rng: [Sample([S.rand(rng, (2, 3))], DebugAttrs()),
                                   Sample([S.rand(rng, (4,), "int32")], DebugAttrs())],
              doc="the value, after calling a Python callback on it in the interpreter")
register_stateful("debug", True)


def debug(expr, debug_func=None):
    """relay.op.debug: `expr`, calling debug_func(value) when the debug interpreter gets there.

    Parameters
    ----------
    expr : relay.Expr
        The value passed through.
    debug_func : None or callable, optional
        Called with the value (a numpy array) when the debug executor evaluates the call; a
        compiled executor refuses a call that names one. None makes the op the identity.
        Defaults to None.
    Returns
    -------
    result : relay.Expr
        `expr`'s value, unchanged.
    """
    name = register_debug_func(f"debugger_func{next(_COUNTER)}", debug_func) if debug_func else ""
    return DEBUG(expr, attrs=DebugAttrs(name))


__all__ = ["debug", "register_debug_func", "DebugAttrs"]
