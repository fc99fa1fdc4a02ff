"""Level 4: analyses over Relay programs (tvm.relay.analysis names).

Variable queries, post-order visiting and the well-formedness check live in ir/ (level 1) so that
lower layers can use them; they are re-exported here under the names a Relay user expects.
Also here: type-variable queries, kind checking, feature detection, call statistics (MACs,
layers), match exhaustiveness, the fused kernels of a module, and the dataflow graph,
post-dominators and graph partitioner behind transform.FuseOps.
"""
from ..ir.functor import post_order_visit
from ..ir.vars import all_vars, bound_vars, free_vars
from ..ir.well_formed import check_well_formed, well_formed
from .call_stats import check_constant, count_layers, get_total_mac_number, search_fc_transpose
from .dataflow_graph import create_dataflow_graph
from .dominators import post_dominator_tree
from .feature import Feature, check_feature, detect_feature
from .fused_functions import extract_fused_functions
from .graph_partitioner import GraphPartitioner
from .kind import KindCheckError, TypeKind, check_kind
from .match_exhaustion import unmatched_cases
from .type_vars import all_type_vars, bound_type_vars, free_type_vars

__all__ = ["free_vars", "bound_vars", "all_vars", "free_type_vars", "bound_type_vars",
           "all_type_vars", "post_order_visit", "well_formed", "check_well_formed", "check_kind",
           "TypeKind", "KindCheckError", "check_constant", "detect_feature", "check_feature",
           "Feature", "get_total_mac_number", "count_layers", "search_fc_transpose",
           "extract_fused_functions", "unmatched_cases", "create_dataflow_graph",
           "post_dominator_tree", "GraphPartitioner"]
