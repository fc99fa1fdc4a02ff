"""Level 6: the reference interpreter (kind="debug"), the oracle for the compiled executors.

values: runtime values; primitive: running an op's numpy reference; machine: the evaluation
rules; executor: the Executor base shared by all executors; evaluator: Interpreter.
"""
from ..runtime.values import Closure, ConstructorValue, RecClosure, RefValue
from ..executor import Executor, check_arguments, convert_args, to_ast, to_value
from .machine import Machine
from .evaluator import ClosureCallable, Interpreter

__all__ = ["Closure", "RecClosure", "ConstructorValue", "RefValue", "Executor", "Interpreter",
           "ClosureCallable", "Machine", "convert_args", "to_value", "to_ast", "check_arguments"]
