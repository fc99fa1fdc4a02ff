"""External codegens: functions marked `Compiler="<name>"` are compiled by `relay.ext.<name>`.

As in Relay, partitioned functions carry `Compiler` (and usually `global_symbol`) attributes,
and the TECompiler hands them to the global function `relay.ext.<name>` (runtime.registry)
instead of lowering them itself:

    @relay_backend.register_func("relay.ext.mycc")
    def mycc(func):                   # the Relay function, Primitive=1, Compiler="mycc"
        return module                 # a runtime Module defining func's global_symbol

The function's symbol is its `global_symbol` attribute (else the kernel name the TECompiler
would give it); the module must define it with the destination-passing signature every kernel
has (inputs then outputs). The graph executor and the VM find it among the imported modules of
the kernel library. A missing codegen or a module without the symbol is a CompileError naming
the function and the fix.
"""
from ..errors import CompileError
from ..ir.excerpt import excerpt
from ..ir.expr import GlobalVar
from ..runtime.module import Module
from ..runtime.registry import get_global_func
from .cache import CachedFunc


def lower_external(key, compiler: str, default_name: str) -> CachedFunc:
    """The CachedFunc of `key.source_func`, compiled by `relay.ext.<compiler>`."""
    func = key.source_func
    name = f"relay.ext.{compiler}"
    codegen = get_global_func(name, allow_missing=True)
    if codegen is None:
        raise CompileError(f"`{excerpt(func)}` is marked Compiler={compiler!r}, but no external codegen "
                           f"{name!r} is registered: register one with relay_backend.register_func({name!r}, "
                           f"f), where f(func) returns a runtime Module defining the function, or drop "
                           f"the Compiler attribute to compile it with the TECompiler")
    symbol = str(func.attrs.get("global_symbol", default_name))
    try:
        module = codegen(func)
    except CompileError:
        raise
    except Exception as err:  # noqa: BLE001 - a user codegen failed: name it and the function
        raise CompileError(f"external codegen {name!r} failed on `{excerpt(func)}`: "
                           f"{type(err).__name__}: {err}") from err
    if not isinstance(module, Module) or not module.has_function(symbol, query_imports=True):
        what = (f"a module with {module.function_names}" if isinstance(module, Module)
                else type(module).__name__)
        raise CompileError(f"external codegen {name!r} must return a runtime Module defining "
                           f"{symbol!r} (the function's global_symbol), got {what}")
    return CachedFunc(key.target, symbol, GlobalVar(symbol), [], [], {}, external_module=module)


__all__ = ["lower_external"]
