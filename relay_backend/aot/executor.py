"""create_executor("aot"): build main ahead of time once per evaluate, then run it per call.

Returns an NDArray for a tensor result and a runtime tuple for a tuple result, as the debug
interpreter does, so the two compare directly.
"""
from ..errors import InputError
from ..interpreter.executor import Executor, convert_args, to_value
from ..ir.expr import Function
from ..ir.types import TensorType
from .factory import flatten_result


class AotExecutor(Executor):
    """The executor behind create_executor(kind="aot")."""

    def __init__(self, mod, device, target, build):
        self.mod = mod
        self.device = device
        self.target = target
        self.build = build          # build_module.build, passed down (it is a level above)

    def _make_executor(self, expr=None):
        from ..transform import InferType
        mod = self.mod
        if expr is not None:
            mod = self.mod.copy()
            mod["main"] = expr if isinstance(expr, Function) else self.mod[expr.name_hint]
        mod = InferType()(mod)
        func = mod["main"]
        factory = self.build(mod, target=self.target, executor="aot")
        amod = factory["default"](self.device)
        ret_type = func.body.checked_type
        names = [p.name_hint for p in func.params]

        def run(*args, **kwargs):
            args = convert_args(func, args, kwargs)
            if len(args) != len(names):
                raise InputError(f"{'insufficient' if len(args) < len(names) else 'too many'} arguments, "
                                 f"expected {len(names)}, provided {len(args)} (main takes ({', '.join(names)}))")
            flat = [t for p, arg in zip(func.params, args) for t in _flatten_arg(p, to_value(arg, self.device))]
            for i, value in enumerate(flat):
                amod.set_input(i, value)
            amod.run()
            outputs = iter([amod.get_output(i).copyto(self.device) for i in range(amod.get_num_outputs())])
            return flatten_result(ret_type, outputs)
        run.factory = factory
        run.module = amod
        return run


def _flatten_arg(param, value) -> list:
    """A tuple argument feeds one input per field, nested fields in order (x_0, x_1, ...)."""
    if isinstance(param.checked_type, TensorType):
        return [value]
    if getattr(value, "fields", None) is None:
        raise InputError(f"main: parameter '{param.name_hint}' expects a tuple {param.checked_type}, "
                         f"got {type(value).__name__}")
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        fields = getattr(v, "fields", None)
        if fields is None:
            out.append(v)
        else:
            stack.extend(reversed(list(fields)))
    return out
