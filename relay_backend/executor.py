"""The Executor base class shared by every executor (debug interpreter, graph, vm, aot).

It owns what is common to all of them and follows tvm.relay.backend.interpreter.Executor:
`evaluate(expr=None, binds=None)`, keyword-argument conversion (positional first, then
keywords), conversion of Python arguments to runtime values, and checking those values against
the function's parameter types *before* anything runs, so a wrong input names the parameter.
`CompiledExecutor` adds what the graph and AOT executors share: main is built once per
evaluate into a module with flat tensor inputs and outputs; each call flattens the arguments
into it and regroups its outputs by main's return type. The function evaluate returns is safe
to call from many threads: the module's one set of buffers is used by one call at a time.
"""
import threading

import numpy as np

from .errors import InputError, RelayError
from .ir.expr import Call, Constant, Expr, Function, GlobalVar, Let, RefCreate, Tuple, const
from .ir.shape_math import bind_shape, shape_mismatch
from .ir.types import TensorType, TupleType, regroup_by_type, type_to_str
from .ir.vars import free_vars
from .runtime import ndarray as _nd
from .runtime.container import ADT, tuple_object
from .runtime.ndarray import NDArray
from .runtime.values import Closure, ConstructorValue, RecClosure, RefValue, describe


def convert_args(func: Function, args, kwargs, name: str = "main") -> tuple:
    """Order `args` and `kwargs` by `func`'s parameters (TVM's _convert_args).

    Arity is checked by check_arguments. A parameter given both ways, an unknown keyword, or a
    wrong count is an InputError naming the parameters. Python lists and ints are then adapted
    to the parameter types (see adapt_python_arg), for every executor alike.
    """
    if not kwargs:
        return adapt_python_args(func, tuple(args), name)
    if not isinstance(func, Function):
        raise InputError(f"can only supply keyword parameters for a relay.Function, found {func!r}")
    names = [p.name_hint for p in func.params]
    unknown = sorted(set(kwargs) - set(names))
    if unknown:
        raise InputError(f"{name}: unknown keyword argument(s) {unknown}; the parameters are {names}")
    check_unambiguous_keywords(names, kwargs, name)
    cargs = list(args)
    for i, pname in enumerate(names):
        if i < len(args):
            if pname in kwargs:
                raise InputError(f"duplicate argument supplied in both positional args (at position: {i}), "
                                 f"and keyword argument (with name: {pname})")
        elif pname in kwargs:
            cargs.append(kwargs[pname])
    if len(cargs) != len(names):
        _arity_error(name, names, len(cargs))
    return adapt_python_args(func, tuple(cargs), name)


def check_unambiguous_keywords(names, kwargs, name: str = "main") -> None:
    """InputError if a keyword names a parameter that several parameters share (Relay allows
    two parameters with one name hint; only passing them by position says which is which)."""
    shared = sorted({key for key in kwargs if names.count(key) > 1})
    if shared:
        where = {key: [i for i, n in enumerate(names) if n == key] for key in shared}
        raise InputError(f"{name}: several parameters are named {', '.join(map(repr, shared))} "
                         f"(positions {where}), so a keyword cannot say which; pass them by position")


_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1


def adapt_python_args(func, args: tuple, name: str = "main") -> tuple:
    """`args` with Python lists and ints adapted to `func`'s parameter types (adapt_python_arg);
    unchanged where a parameter's type is unknown."""
    if not isinstance(func, Function):
        return args
    out = list(args)   # extra arguments stay, for the arity check to report
    for i, (param, arg) in enumerate(zip(func.params, args)):
        out[i] = adapt_python_arg(arg, param_type(param), f"{name}: parameter '{param.name_hint}'")
    return tuple(out)


def adapt_python_arg(value, ty, where: str):
    """A Python argument adapted to the parameter type `ty`, or an InputError saying `where`
    (e.g. "main: parameter 'x'") what was expected.

    A list becomes a tuple only for a tuple type (field by field) and a tensor (as relay.const
    converts it) only for a tensor type; a Python int must fit int32, the dtype it is passed
    as. Anything else is returned unchanged and checked later against the type."""
    if isinstance(value, list):
        if isinstance(ty, TupleType):
            if len(value) != len(ty.fields):
                raise InputError(f"{where} expects a tuple of {len(ty.fields)} field(s) "
                                 f"{type_to_str(ty)}, got a list of {len(value)}")
            return tuple(adapt_python_arg(v, t, f"{where} field {i}")
                         for i, (v, t) in enumerate(zip(value, ty.fields)))
        if isinstance(ty, TensorType):
            try:
                return const(value).data
            except (ValueError, TypeError, OverflowError) as err:
                raise InputError(f"{where} expects {type_to_str(ty)}, got a list that is not a "
                                 f"rectangular array of numbers ({err}); pass a numpy array") from None
        if ty is not None:
            raise InputError(f"{where} expects {type_to_str(ty)}, got a Python list; a list is "
                             f"accepted only for a tensor or a tuple parameter")
        return value
    if isinstance(value, tuple) and isinstance(ty, TupleType) and len(value) == len(ty.fields):
        return tuple(adapt_python_arg(v, t, f"{where} field {i}")
                     for i, (v, t) in enumerate(zip(value, ty.fields)))
    if isinstance(value, int) and not isinstance(value, bool) and \
            not _INT32_MIN <= value <= _INT32_MAX:
        want = f" expects {type_to_str(ty)}:" if ty is not None else ":"
        hint = (f"; pass np.{ty.dtype}({value})" if isinstance(ty, TensorType) and ty.dtype != "int32"
                else "")
        raise InputError(f"{where}{want} value {value} is out of range for int32 (a Python int is "
                         f"passed as int32, range [{_INT32_MIN}, {_INT32_MAX}]){hint}")
    return value


def _arity_error(name, names, provided):
    word = "insufficient" if provided < len(names) else "too many"
    raise InputError(f"{word} arguments, expected {len(names)}, provided {provided} "
                     f"({name} takes ({', '.join(names)}))")


def to_value(arg, device=None):
    """A Python argument as a runtime value (TVM's _arg_to_ast, without the detour via AST).

    numpy arrays and numpy scalars keep their dtype; Python bool/int/float become bool/int32/
    float32 and lists become tensors as relay.const does; tuples and tuple ADTs become tuples;
    NDArrays, constructor values, refs and closures pass through.
    """
    if isinstance(arg, NDArray):
        return arg if device is None or arg.device == device else _nd.array(arg, device=device)
    if isinstance(arg, (np.ndarray, np.generic)):
        return _nd.array(np.asarray(arg), device=device)
    if isinstance(arg, Constant):
        return arg.data
    if isinstance(arg, ADT):
        return ADT(arg.tag, [to_value(f, device) for f in arg.fields])
    if isinstance(arg, tuple):
        return ADT(0, [to_value(f, device) for f in arg])
    if isinstance(arg, (ConstructorValue, RefValue, Closure, RecClosure)):
        return arg
    if isinstance(getattr(arg, "closure", None), (Closure, RecClosure)):  # a ClosureCallable
        return arg.closure
    if isinstance(arg, (bool, int, float, list)):
        try:
            data = const(arg).data
        except (ValueError, TypeError, OverflowError) as err:
            text = repr(arg)
            raise InputError(f"cannot pass {type(arg).__name__} {text[:60]}{'...' if len(text) > 60 else ''} "
                             f"to a relay function: {err}") from None
        return _nd.array(data, device=device)
    raise InputError(f"cannot pass a {type(arg).__name__} to a relay function: use a numpy array, "
                     f"an NDArray, a Python scalar or a tuple of these")


def to_ast(arg) -> Expr:
    """A Python/runtime value as a relay expression (TVM's _arg_to_ast), for `binds`."""
    if isinstance(arg, Expr):
        return arg
    if isinstance(arg, (ADT, tuple)) and not (isinstance(arg, ADT) and arg.tag != 0):
        return Tuple([to_ast(f) for f in arg])
    if isinstance(arg, RefValue):
        return RefCreate(to_ast(arg.value))
    if isinstance(arg, ConstructorValue):
        if arg.constructor is None:
            raise InputError(f"cannot rebuild a constructor value with tag {arg.tag}: its constructor is unknown")
        return Call(arg.constructor, [to_ast(f) for f in arg.fields])
    if isinstance(arg, (Closure, RecClosure)):
        raise InputError("a closure cannot be bound as an expression; pass it as a call argument instead")
    return Constant(to_value(arg))


def type_mismatch(value, ty, sizes: dict = None) -> str:
    """Why `value` does not have type `ty` ("" if it does; only tensors and tuples are checked).

    Symbolic dims: `sizes` ({Var: int}) binds the size variables across the values checked
    together (a call's arguments); a variable already bound must get the same size again, and
    an expression dim (`n * 2`) is checked once its variables are bound (check twice, as
    check_arguments does, so a later input can bind what an earlier one uses)."""
    sizes = {} if sizes is None else sizes
    if isinstance(ty, TensorType):
        if not isinstance(value, NDArray) or value.dtype != ty.dtype:
            return f"expected {type_to_str(ty)}, got {describe(value)}"
        why = bind_shape(ty.shape, value.shape, sizes) or shape_mismatch(ty.shape, value.shape, sizes)
        if why:
            return f"expected {type_to_str(ty)}, got {describe(value)}: {why}"
        return ""
    if isinstance(ty, TupleType):
        if not isinstance(value, ADT) or value.tag != 0 or len(value) != len(ty.fields):
            return f"expected {type_to_str(ty)}, got {describe(value)}"
        for i, (v, t) in enumerate(zip(value.fields, ty.fields)):
            why = type_mismatch(v, t, sizes)
            if why:
                return f"field {i}: {why}"
    return ""


def param_type(param):
    """The best known type of a parameter: inferred if available, else its annotation."""
    return getattr(param, "_checked_type_", None) or param.type_annotation


def check_arguments(func: Function, values, name: str = "main") -> None:
    """InputError unless `values` fit `func`'s parameters in number, shape and dtype."""
    names = [p.name_hint for p in func.params]
    if len(values) != len(names):
        _arity_error(name, names, len(values))
    sizes = {}    # size variables bound by the arguments: two inputs sharing `n` must agree
    for _ in range(2):      # the second pass checks expression dims bound by later inputs
        for param, value in zip(func.params, values):
            ty = param_type(param)
            if ty is None:
                continue
            why = type_mismatch(value, ty, sizes)
            if why:
                raise InputError(f"{name}: parameter '{param.name_hint}' expects {type_to_str(ty)}, "
                                 f"{why.replace('expected ' + type_to_str(ty) + ', ', '')}")


class Executor:
    """Base of all executors: subclasses implement `_make_executor(expr=None)` -> callable."""

    mod = None

    def _make_executor(self, expr=None):
        raise NotImplementedError

    def _convert_args(self, expr, args, kwargs) -> tuple:
        """TVM-compatible keyword conversion against a Function (or a GlobalVar of self.mod)."""
        func = expr
        if isinstance(expr, GlobalVar):
            func = self.mod[expr.name_hint]
        return convert_args(func, args, kwargs)

    def evaluate(self, expr=None, binds=None):
        """Evaluate an expression, or make a callable of a function (tvm's Executor.evaluate).

        Parameters
        ----------
        expr : Expr, optional
            None (the default): a callable running the module's main. A Function or GlobalVar: a
            callable running it. Any other expression: its value, computed now.
        binds : dict, optional
            {Var: value} let-bound around `expr` first, to give its free variables values. Defaults
            to None.

        Returns
        -------
        result : callable or NDArray or ADT
            The callable (arguments positional, then by keyword), or the value.
        """
        if binds:
            scope = expr
            for bvar, bval in reversed(list(binds.items())):
                scope = Let(bvar, to_ast(bval), scope)
            expr = scope
        if expr is None:
            return self._make_executor()
        if isinstance(expr, GlobalVar):
            return self._make_executor(expr)
        if isinstance(expr, Function):
            fv = free_vars(expr)
            if fv:
                raise InputError(f"cannot evaluate a function with free variables "
                                 f"{['%' + v.name_hint for v in fv]}: bind them with binds= or make them parameters")
            return self._make_executor(expr)
        if not isinstance(expr, Expr):
            raise RelayError(f"evaluate expects a relay expression, got {type(expr).__name__}")
        fv = free_vars(expr)
        if fv:
            raise InputError(f"cannot evaluate an expression with free variables "
                             f"{['%' + v.name_hint for v in fv]}: bind them with binds= or wrap it in a Function")
        return self._make_executor(Function([], expr))()


def flatten_value(value) -> list:
    """The leaves of a (nested) runtime tuple in order; a tensor is its own single leaf."""
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        fields = getattr(v, "fields", None)
        if fields is None:
            out.append(v)
        else:
            stack.extend(reversed(list(fields)))
    return out


def flatten_arg(param, value) -> list:
    """A main argument as flat module inputs: a tuple feeds one input per field, nested fields in
    order (the codegen names them x_0, x_1, ...)."""
    if isinstance(param.checked_type, TensorType):
        return [value]
    if getattr(value, "fields", None) is None:
        raise InputError(f"main: parameter '{param.name_hint}' expects a tuple {param.checked_type}, "
                         f"got {type(value).__name__}")
    return flatten_value(value)


def regroup_outputs(ty, outputs, executor: str = "compiled"):
    """Regroup flat outputs (an iterator) by the return type `ty`: a tuple becomes a runtime tuple
    (iteratively: a tuple nested thousands deep is fine)."""
    def leaf(t):
        if not isinstance(t, TensorType):
            raise RelayError(f"the {executor} executor cannot return a value of type {t}")
        return next(outputs)
    return regroup_by_type(ty, leaf, tuple_object)


class CompiledExecutor(Executor):
    """Base of create_executor("graph") and ("aot"): subclasses implement `_build(mod)` -> factory.

    Each call returns an NDArray for a tensor result and a runtime tuple (ADT, tag 0) for a
    tuple result, as the debug interpreter does, so the two compare directly.
    """

    executor_name = "compiled"     # in error messages: "the graph executor cannot return ..."

    def __init__(self, mod, device, target):
        self.mod = mod
        self.device = device
        self.target = target

    def _build(self, mod):
        raise NotImplementedError

    def _make_executor(self, expr=None):
        from .transform import InferType
        mod = self.mod
        if expr is not None:
            mod = self.mod.copy()
            mod["main"] = expr if isinstance(expr, Function) else self.mod[expr.name_hint]
        mod = InferType()(mod)
        func = mod["main"]
        factory = self._build(mod)
        module = factory["default"](self.device)
        ret_type = func.body.checked_type
        names = [p.name_hint for p in func.params]

        lock = threading.Lock()         # one set of buffers: one call at a time

        def run(*args, **kwargs):
            args = convert_args(func, args, kwargs)
            if len(args) != len(names):
                _arity_error("main", names, len(args))
            flat = [t for p, arg in zip(func.params, args) for t in flatten_arg(p, to_value(arg, self.device))]
            with lock:
                for i, value in enumerate(flat):
                    module.set_input(i, value)
                module.run()
                outputs = [module.get_output(i).copyto(self.device) for i in range(module.get_num_outputs())]
            return regroup_outputs(ret_type, iter(outputs), self.executor_name)
        run.factory = factory
        run.module = module
        return run


__all__ = ["Executor", "CompiledExecutor", "convert_args", "check_unambiguous_keywords", "adapt_python_args", "adapt_python_arg", "to_value", "to_ast", "check_arguments",
           "param_type", "type_mismatch", "flatten_value", "flatten_arg", "regroup_outputs"]
