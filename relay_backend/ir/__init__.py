"""Level 1: the Relay IR (expressions, types, modules, traversals, printing, structural equality)."""
from .types import (Any, FuncType, GlobalTypeVar, IncompleteType, RefType, TensorType, TupleType,
                    Type, TypeCall, TypeVar, scalar_type, type_to_str)
from .attrs import Attrs, DictAttrs
from .expr import (Call, Constant, Expr, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                   RefWrite, Tuple, TupleGetItem, TupleWrapper, Var, const, var)
from .adt import (Clause, Constructor, Match, Pattern, PatternConstructor, PatternTuple,
                  PatternVar, PatternWildcard, TypeData)
from .module import IRModule
from .functor import ExprFunctor, ExprMutator, ExprVisitor, post_order_visit
from .vars import all_vars, bound_vars, free_vars
from .structural import assert_structural_equal, structural_equal, structural_hash
from .scope_builder import ScopeBuilder
from .well_formed import check_well_formed, well_formed
from .printer import astext, module_astext
from .serialization import load_json, save_json
from .span import SourceName, Span
