"""The exception hierarchy: every error relay_backend raises on purpose is a RelayError.

Messages name the expression, the types or values involved and, where known, the fix.
"""


class RelayError(Exception):
    """Base class of every error raised on purpose by relay_backend."""


class TypeInferenceError(RelayError):
    """A program is ill-typed: an op's type relation or unification failed."""


class OpNotImplemented(RelayError, NotImplementedError):
    """An operator (or an attribute value of one) is not supported."""


class OpDefinitionError(RelayError):
    """An operator declaration is incomplete or duplicated (raised at import time)."""


class InputError(RelayError, ValueError):
    """Wrong inputs to an executor or a compiled function: names, shapes, dtypes, arity."""


class SerializationError(RelayError):
    """A saved artifact (params, executable, library) is corrupt, truncated or foreign."""


class CompileError(RelayError):
    """Lowering or native code generation failed."""


class TargetError(CompileError, ValueError):
    """A target string or dict is malformed: unknown kind or option, a value of the wrong type
    (also a ValueError, which tvm.target.Target raises)."""


class ExecutionError(RelayError):
    """A program failed while running (e.g. no Match clause applied, a VM Fatal)."""


class AttrsError(RelayError, ValueError):
    """An operator attribute has an invalid value (raised when the attrs are constructed)."""


class IRConstructionError(RelayError, TypeError, ValueError):
    """An IR node or type was built from a wrong value (e.g. `Function([const(1.0)], ...)`,
    `TensorType((2,), "floaty")`). Also a TypeError/ValueError, which such mistakes raised before."""


class AllocationError(RelayError, MemoryError):
    """A tensor (or a sum of them) is larger than the stated size limit
    (`runtime.limits.max_tensor_bytes()`), detected before anything is allocated."""


class CacheError(RelayError):
    """The on-disk kernel cache cannot be used as configured (e.g. RB_CACHE_DIR names a file)."""


class TuningError(RelayError, ValueError):
    """AutoTVM-style tuning was misused: an unknown space policy or knob, a task whose template is
    not registered, a tuner or measurement option out of range (autotvm/)."""


class GlobalFuncError(RelayError, ValueError):
    """A global function name is missing from the registry, registered twice, or not a string
    (runtime.registry: register_func / get_global_func)."""


class ParseError(RelayError):
    """Relay text that cannot be read: a syntax error, an undefined name, a bad literal. The
    message gives the source name, line and column, the offending line and a caret; the
    position is also in `source_name`, `line` and `column`."""

    def __init__(self, message: str, source_name: str = None, line: int = 0, column: int = 0):
        super().__init__(message)
        self.source_name, self.line, self.column = source_name, line, column


class ModuleLookupError(RelayError, KeyError):
    """An IRModule (or the Prelude) has no function, type or constructor of the name asked for.
    Also a KeyError, so `mod[name]` behaves as a mapping lookup."""

    def __str__(self) -> str:   # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
