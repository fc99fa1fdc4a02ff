"""PackedModule: a runtime module whose functions are Python callables (TVM's executor modules).

TVM's graph executor, AOT executor, VM and VM executable are runtime Modules holding packed
functions ("run", "set_input", "invoke", "save", ...); Python wrappers reach them by name
(`gmod.module["run"]`) and time them with `module.time_evaluator("run", dev)()`. Here those
executors are Python objects, and `.module` gives this view of them: the same functions by
their TVM names, the same `time_evaluator`, and `imported_modules` (e.g. the kernel library).
"""
from ..errors import RelayError
from .benchmark import module_time_evaluator


class PackedModule:
    """Named Python functions as a runtime Module (`type_key` says which kind, as TVM's)."""

    def __init__(self, type_key: str, functions: dict, imported_modules=(), owner=None):
        self.type_key = type_key
        self.owner = owner                 # the Python object these functions belong to
        self._functions = dict(functions)
        self.imported_modules = [m for m in imported_modules if m is not None]

    @property
    def function_names(self) -> list:
        return list(self._functions)

    def get_function(self, name: str, query_imports: bool = False):
        """The function `name` (searching imported modules too with query_imports=True)."""
        func = self._functions.get(name)
        if func is not None:
            return func
        if query_imports:
            for mod in self.imported_modules:
                if hasattr(mod, "__contains__") and name in mod:
                    return mod.get_function(name, query_imports=True) \
                        if isinstance(mod, PackedModule) else mod[name]
        raise RelayError(f"{self.type_key} module has no function {name!r}; it has "
                         f"{sorted(self._functions)}")

    def __getitem__(self, name: str):
        if not isinstance(name, str):
            raise RelayError(f"{self.type_key} module: look a function up by name, got "
                             f"{type(name).__name__} {name!r}")
        return self.get_function(name)

    def __contains__(self, name) -> bool:
        return name in self._functions

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: int = 0, limit_zero_time_iterations: int = 100,
                       cooldown_interval_ms: int = 0, repeats_to_cooldown: int = 1,
                       cache_flush_bytes: int = 0, f_preproc: str = ""):
        """tvm.runtime.Module.time_evaluator over one of these functions (runtime.benchmark)."""
        return module_time_evaluator(self, func_name, dev, number, repeat, min_repeat_ms,
                                     limit_zero_time_iterations, cooldown_interval_ms,
                                     repeats_to_cooldown, cache_flush_bytes, f_preproc)

    def __repr__(self) -> str:
        return f"<Module {self.type_key}: {', '.join(self._functions)}>"


__all__ = ["PackedModule"]
