"""Level 6: the reference interpreter (kind="debug"), the oracle for the compiled executors.

primitive: running an op's numpy reference; machine: the evaluation rules; evaluator: the
Interpreter. Its runtime values live in runtime/values.py and the Executor base shared by all
four executors in executor.py; no compiled executor imports this package.
"""
from ..runtime.values import Closure, ConstructorValue, RecClosure, RefValue
from ..executor import Executor, check_arguments, convert_args, to_ast, to_value
from .machine import Machine
from .evaluator import ClosureCallable, Interpreter

__all__ = ["Closure", "RecClosure", "ConstructorValue", "RefValue", "Executor", "Interpreter",
           "ClosureCallable", "Machine", "convert_args", "to_value", "to_ast", "check_arguments"]
