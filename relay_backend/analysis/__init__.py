"""Level 4: analyses over Relay programs (tvm.relay.analysis names).

Variable queries, post-order visiting and the well-formedness check live in ir/ (level 1) so that
lower layers can use them; they are re-exported here under the names a Relay user expects.
"""
from ..ir.functor import post_order_visit
from ..ir.vars import all_vars, bound_vars, free_vars
from ..ir.well_formed import check_well_formed, well_formed

__all__ = ["free_vars", "bound_vars", "all_vars", "post_order_visit", "well_formed", "check_well_formed"]
