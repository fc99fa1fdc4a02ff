"""relay_backend: a Python reproduction of the backend of a Relay-style deep-learning compiler.

The public names follow tvm.relay, so Relay programs port by changing imports:

    import relay_backend as relay
    x = relay.var("x", shape=(1, 3, 32, 32))
    ...
    relay.create_executor("debug", mod=mod).evaluate()(data)
"""
from .config import VERSION as __version__

from . import errors, cache
from .errors import (CompileError, ExecutionError, InputError, OpNotImplemented, RelayError,
                     SerializationError, TypeInferenceError)
from .runtime import Device, cpu, cuda, device
from .runtime import get_global_func, list_global_func_names, register_func, remove_global_func
from .runtime import load_param_dict, save_param_dict
from . import target
from .target import Target
from .runtime import ndarray as nd
from . import ir
from .ir import (Any, Call, Clause, Constant, Constructor, Expr, FuncType, Function, GlobalTypeVar,
                 GlobalVar, If, IncompleteType, IRModule, Let, Match, PatternConstructor,
                 PatternTuple, PatternVar, PatternWildcard, RefCreate, RefRead, RefType, RefWrite,
                 ScopeBuilder, TensorType, Tuple, TupleGetItem, TupleType, TupleWrapper, Type,
                 TypeCall, TypeData, TypeVar, Var, const, scalar_type, var)
from .ir import ExprFunctor, ExprMutator, ExprVisitor
from .ir.structural import assert_structural_equal, structural_equal, structural_hash
from . import op
from .op import *  # noqa: F401,F403  (relay_backend.add, relay_backend.sum, ...)
from .op import nn, annotation, dyn, random
from .op import image, vision  # noqa: F401  (relay.image, relay.vision)
from . import transform, analysis
from . import qnn  # noqa: E402  (relay.qnn.op / relay.qnn.transform)
from .build_module import create_executor
from .prelude import Prelude
from .parser import fromtext, parse, parse_expr
from . import parser
from . import build_module, prelude, loops

from . import graph_executor, vm, aot, frontend, backend, _ffi
from .build_module import build, optimize
from .session import InferenceSession
from .op.op_attrs import mark_library_defined as _mark_library_defined
_mark_library_defined()      # every operator of the package is defined now (disk_records.py)

# `relay_backend.abs`/`round`/... shadow builtins inside this namespace only, as in tvm.relay.
