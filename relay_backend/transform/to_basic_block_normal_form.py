"""ToBasicBlockNormalForm (tvm.relay.transform): let-bind exactly the expressions that are
shared across scopes.

Guarantee: no non-atomic expression is used in a scope (function body, If branch, Match clause,
let block) deeper than the one it is bound in (analysis.check_basic_block_normal_form holds).
A value used by both branches of an If, or by a branch and the code around it, is bound once
before the If, in the innermost scope enclosing its uses; everything else stays in graph form
and existing lets are kept in place. Meaning is unchanged for pure programs (a shared value is
computed where its uses meet, as Relay does). Idempotent; rebuilt expressions keep their types.
"""
from ..analysis.scope_tree import ScopeTree
from .to_a_normal_form import Fill, normal_form_pass


def to_basic_block_normal_form(expr):
    """The basic block normal form of one expression or function."""
    return Fill(ScopeTree(expr), bind_all=False).run()


def ToBasicBlockNormalForm():  # noqa: N802 - tvm.relay naming
    """Module pass (opt_level 1): every global function in basic block normal form."""
    return normal_form_pass(to_basic_block_normal_form, "ToBasicBlockNormalForm")


__all__ = ["ToBasicBlockNormalForm", "to_basic_block_normal_form"]
