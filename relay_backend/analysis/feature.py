"""detect_feature (tvm.relay.analysis.detect_feature): which language features a program uses,
and check_feature, which passes use to reject programs they cannot handle.

Features are one per expression kind (fVar ... fMatch), plus fGraph (a non-atomic expression is
used more than once, so the program is a DAG rather than a tree: graph normal form) and fLetRec
(a let binds a function that refers to its own variable). Atomic expressions (variables, global
variables, constants, operators, constructors) may be shared freely.
"""
from collections import Counter
from enum import IntEnum

from ..errors import RelayError
from ..ir.adt import Constructor, Match
from ..ir.expr import (Call, Constant, Expr, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                       RefWrite, Tuple, TupleGetItem, Var)
from ..ir.functor import all_children, all_nodes_post_order
from ..ir.module import IRModule
from ..ir.vars import free_vars


class Feature(IntEnum):
    """The features a program might contain (tvm.relay.feature.Feature)."""

    fVar = 0
    fGlobalVar = 1
    fConstant = 2
    fTuple = 3
    fTupleGetItem = 4
    fFunction = 5
    fOp = 6
    fCall = 7
    fLet = 8
    fIf = 9
    fRefCreate = 10
    fRefRead = 11
    fRefWrite = 12
    fConstructor = 13
    fMatch = 14
    fGraph = 15
    fLetRec = 16


# Checked in this order: Constructor and Op before their common base class Expr.
_KIND_FEATURE = [
    (Var, Feature.fVar), (GlobalVar, Feature.fGlobalVar), (Constant, Feature.fConstant),
    (Tuple, Feature.fTuple), (TupleGetItem, Feature.fTupleGetItem), (Function, Feature.fFunction),
    (Op, Feature.fOp), (Call, Feature.fCall), (Let, Feature.fLet), (If, Feature.fIf),
    (RefCreate, Feature.fRefCreate), (RefRead, Feature.fRefRead), (RefWrite, Feature.fRefWrite),
    (Constructor, Feature.fConstructor), (Match, Feature.fMatch),
]
ATOMIC = (Var, GlobalVar, Constant, Op, Constructor)


def is_atomic(expr) -> bool:
    """Variables, global variables, constants, operators and constructors (TVM's IsAtomic)."""
    return isinstance(expr, ATOMIC)


def _expr_features(expr: Expr) -> set:
    features = set()
    uses = Counter()
    for node in all_nodes_post_order(expr):
        for klass, feature in _KIND_FEATURE:
            if isinstance(node, klass):
                features.add(feature)
                break
        for child in all_children(node):
            uses[child] += 1
        if isinstance(node, Let) and isinstance(node.value, Function) and \
                node.var in free_vars(node.value):
            features.add(Feature.fLetRec)
    if any(n > 1 and not is_atomic(e) for e, n in uses.items()):
        features.add(Feature.fGraph)
    return features


def detect_feature(a, b=None) -> set:
    """The language features an expression and/or a module uses (tvm.relay.analysis.
    detect_feature): let, if, closures, references, ADTs, recursion, ...

    Parameters
    ----------
    a : Expr or IRModule
        An expression or a module.
    b : Expr or IRModule, optional
        The other of the two (at most one of each kind). Defaults to None.

    Returns
    -------
    features : set of Feature
        The features found.
    """
    if isinstance(a, IRModule):
        a, b = b, a
    if a is not None and not isinstance(a, Expr) or b is not None and not isinstance(b, IRModule):
        raise RelayError("detect_feature takes an expression and/or an IRModule (not two of one kind)")
    features = set()
    if a is not None:
        features |= _expr_features(a)
    if b is not None:
        for fn in b.functions.values():
            features |= _expr_features(fn)
    return features


def check_feature(program, allowed, what: str) -> None:
    """Raise RelayError naming `what` and the features of a program outside those allowed
    (e.g. the graph executor refuses control flow).

    Parameters
    ----------
    program : Expr or IRModule
        The program.
    allowed : iterable of Feature
        The features the caller supports.
    what : str
        The caller's name, used in the message.
    """
    extra = detect_feature(program) - set(allowed)
    if extra:
        names = ", ".join(sorted(f.name for f in extra))
        raise RelayError(f"{what} does not support programs using {names}")


__all__ = ["Feature", "detect_feature", "check_feature", "is_atomic"]
