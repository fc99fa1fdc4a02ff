"""The global function registry (tvm._ffi.registry): named Python callables any layer can reach.

    @relay_backend.register_func("my.callback")
    def callback(x):
        ...
    relay_backend.get_global_func("my.callback")(x)
    relay_backend.list_global_func_names()

Relay looks callbacks up here by name instead of importing them, so a compiler or runtime can
call back into user code without knowing it: an external codegen is `relay.ext.<compiler>`, and
TVM's runtime helpers live under their TVM names (`runtime.SaveParams`, ...). It is level 0 so
every layer may look names up; a layer registers only its own functions.

Rules (as TVM's): a name is registered once unless `override=True`; `register_func` with only a
name returns a decorator, and used bare as `@register_func` it registers the function under its
`__name__`; looking up a missing name raises GlobalFuncError naming it (or returns None with
`allow_missing=True`).
"""
import threading

from ..errors import GlobalFuncError

_FUNCS = {}
_LOCK = threading.Lock()


def register_func(func_name, f=None, override=False):
    """Register a Python function as a global function (tvm.register_func), also usable as a
    decorator: `@register_func("my.name")` or a bare `@register_func`.

    Parameters
    ----------
    func_name : str or callable
        The name to register under; a callable here (bare decorator use) registers under its
        own __name__.
    f : callable, optional
        The function to register; None (the default) returns a decorator instead.
    override : bool, optional
        If True, replace a function already registered under the name; if False (the
        default), that is a GlobalFuncError.

    Returns
    -------
    result : callable
        `f`, or without `f` a decorator that registers and returns its function.
    """
    if callable(func_name) and f is None:          # bare @register_func
        f, func_name = func_name, func_name.__name__
    if not isinstance(func_name, str) or not func_name:
        raise GlobalFuncError(f"register_func: the name must be a non-empty string, got "
                              f"{type(func_name).__name__} {func_name!r}")

    def register(func):
        if not callable(func):
            raise GlobalFuncError(f"register_func({func_name!r}): expected a callable, got "
                                  f"{type(func).__name__}")
        with _LOCK:
            if func_name in _FUNCS and not override:
                raise GlobalFuncError(f"Global function {func_name!r} is already registered; pass "
                                      f"override=True to replace it")
            _FUNCS[func_name] = func
        return func

    return register(f) if f is not None else register


def get_global_func(name, allow_missing=False):
    """The global function registered under a name (tvm.get_global_func).

    Parameters
    ----------
    name : str
        The registered name, as "relay.ext.ccompiler".
    allow_missing : bool, optional
        If True, return None when nothing is registered under `name`; if False (the default),
        raise GlobalFuncError listing registered names with the same prefix.

    Returns
    -------
    func : callable or None
        The function.
    """
    if not isinstance(name, str):
        raise GlobalFuncError(f"get_global_func: a name is a string, got {type(name).__name__} {name!r}")
    with _LOCK:
        func = _FUNCS.get(name)
    if func is None and not allow_missing:
        near = sorted(n for n in list_global_func_names() if n.split(".")[0] == name.split(".")[0])
        hint = f"; registered names with that prefix: {near[:10]}" if near else ""
        raise GlobalFuncError(f"Cannot find global function {name!r}: register it with "
                              f"relay_backend.register_func({name!r}, f){hint}")
    return func


def list_global_func_names() -> list:
    """The names of every registered global function, sorted."""
    with _LOCK:
        return sorted(_FUNCS)


def remove_global_func(name) -> None:
    """Unregister a global function (tvm._ffi.registry.remove_global_func).

    Parameters
    ----------
    name : str
        The registered name; GlobalFuncError when nothing is registered under it.
    """
    with _LOCK:
        if name not in _FUNCS:
            raise GlobalFuncError(f"remove_global_func: {name!r} is not registered")
        del _FUNCS[name]


__all__ = ["register_func", "get_global_func", "list_global_func_names", "remove_global_func"]
