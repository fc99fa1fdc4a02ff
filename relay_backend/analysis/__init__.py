"""Level 4: analyses over Relay programs (tvm.relay.analysis names).

Variable queries, post-order visiting and the well-formedness check live in ir/ (level 1) so that
lower layers can use them; they are re-exported here under the names a Relay user expects.
Also here: the dataflow graph, post-dominators and graph partitioner behind transform.FuseOps.
"""
from ..ir.functor import post_order_visit
from ..ir.vars import all_vars, bound_vars, free_vars
from ..ir.well_formed import check_well_formed, well_formed
from .dataflow_graph import create_dataflow_graph
from .dominators import post_dominator_tree
from .graph_partitioner import GraphPartitioner

__all__ = ["free_vars", "bound_vars", "all_vars", "post_order_visit", "well_formed", "check_well_formed",
           "create_dataflow_graph", "post_dominator_tree", "GraphPartitioner"]
