"""Interpreter: the "debug" executor, the numpy oracle every compiled executor is checked against.

It type-checks the module (transform.InferType), then walks the IR with interpreter.machine:
every operator call runs the op's numpy reference. It never imports the compiler (te_compiler,
te, tir, codegen), so a compiler bug cannot hide in both sides of a comparison.
"""
import contextlib
import itertools
import sys
import threading

from ..errors import ExecutionError, RelayError
from ..ir.expr import Function, GlobalVar
from ..ir.module import IRModule
from ..runtime.device import Device, cpu
from ..target import as_target
from ..transform import InferType
from ..runtime.device import device as _make_device
from ..executor import Executor, check_arguments, convert_args, to_value
from .machine import Machine
from ..runtime.values import Closure, RecClosure

# Relay recursion in non-tail position (e.g. `map` over a list) costs ~4 Python frames per
# level; the default limit of 1000 would cap lists at ~200 elements. Raised only while running.
# The limit is process-wide: the first running evaluation raises it and the last one to finish
# puts it back, so a short call in one thread never lowers it under a deep one in another.
_RECURSION_LIMIT = 20000
_fresh_names = itertools.count()
_deep_lock = threading.Lock()
_deep_state = {"running": 0, "saved": None}


@contextlib.contextmanager
def _deep_recursion():
    with _deep_lock:
        if _deep_state["running"] == 0 and sys.getrecursionlimit() < _RECURSION_LIMIT:
            _deep_state["saved"] = sys.getrecursionlimit()
            sys.setrecursionlimit(_RECURSION_LIMIT)
        _deep_state["running"] += 1
    try:
        yield
    except RecursionError:
        raise ExecutionError(
            "the program recursed too deeply for the interpreter (Relay calls in non-tail position "
            f"nest about {_RECURSION_LIMIT // 4} deep at most); make the recursion tail-recursive "
            "(e.g. foldl instead of foldr) or use the vm executor") from None
    finally:
        with _deep_lock:
            _deep_state["running"] -= 1
            if _deep_state["running"] == 0 and _deep_state["saved"] is not None:
                sys.setrecursionlimit(_deep_state["saved"])
                _deep_state["saved"] = None


def target_device_type(target) -> Device:
    """The device a target runs on: llvm / c -> cpu, cuda -> cuda (a TargetError for a target
    that does not parse)."""
    if target is None:
        return cpu(0)
    return Device(as_target(target).device_type, 0)


def infer_type(mod: IRModule) -> IRModule:
    """Type-check the module before evaluating it (ill-typed programs never run)."""
    return InferType()(mod)


class Interpreter(Executor):
    """tvm.relay.backend.interpreter.Interpreter: evaluate(expr) with numpy references."""

    def __init__(self, mod: IRModule = None, device: Device = None, target="llvm"):
        self.mod = mod if mod is not None else IRModule()
        self.target = target
        expected = target_device_type(target)
        if device is None:
            device = expected
        device = _make_device(device)
        if device.device_type != expected.device_type:
            raise RelayError(f"the debug interpreter was given device {device} but target {target!r} "
                             f"runs on {expected.name}; pass a matching device")
        self.device = device

    def _prepare(self, expr):
        """(typed module, function, name) for main, a GlobalVar, or a Function not in the module."""
        if expr is None or isinstance(expr, GlobalVar):
            name = "main" if expr is None else expr.name_hint
            if name not in self.mod:
                raise RelayError(f"the module has no function @{name} to evaluate; it has "
                                 f"{sorted(g.name_hint for g in self.mod.get_global_vars())}")
            mod = infer_type(self.mod)
            return mod, mod[name], name
        if not isinstance(expr, Function):
            raise RelayError(f"cannot make an executor for a {type(expr).__name__}; give a Function or GlobalVar")
        name = f"__interp_expr_{next(_fresh_names)}"
        mod = self.mod.copy()
        mod[name] = expr
        mod = infer_type(mod)
        return mod, mod[name], name

    def _make_executor(self, expr=None):
        mod, func, name = self._prepare(expr)
        machine = Machine(mod, self.device)
        device = self.device
        display = name if not name.startswith("__interp_expr_") else "function"

        def _interp_wrapper(*args, **kwargs):
            cargs = convert_args(func, args, kwargs, display)
            values = [to_value(a, device) for a in cargs]
            check_arguments(func, values, display)
            with _deep_recursion():
                result = machine.apply(Closure(func, {}), values)
            return _wrap(machine, result)

        return _interp_wrapper


class ClosureCallable:
    """A closure returned to Python: calling it applies it to converted arguments."""

    def __init__(self, machine: Machine, closure):
        self._machine = machine
        self.closure = closure

    def __call__(self, *args):
        values = [to_value(a, self._machine.device) for a in args]
        with _deep_recursion():
            return _wrap(self._machine, self._machine.apply(self.closure, values))

    def __repr__(self) -> str:
        return f"ClosureCallable({self.closure!r})"


def _wrap(machine, result):
    if isinstance(result, (Closure, RecClosure)):
        return ClosureCallable(machine, result)
    return result


__all__ = ["Interpreter", "ClosureCallable", "target_device_type", "infer_type"]
