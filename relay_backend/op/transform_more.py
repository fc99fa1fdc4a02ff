"""The issue-20 shape and indexing constructors under relay.op.transform, where tvm.relay keeps
them (`from tvm.relay.op.transform import gather_nd` ports unchanged); each lives in its own
family's module (gathering, scattering, like, ...)."""
from .contrib_reshape import reverse_reshape
from .coordinates import meshgrid, unravel_index
from .gathering import adv_index, gather, gather_nd
from .like import broadcast_to_like, collapse_sum_like, collapse_sum_to, full_like, reshape_like, slice_like
from .matrix import matrix_set_diag, trilu
from .one_hot_encoding import one_hot
from .scattering import scatter_elements, scatter_nd
from .search import argwhere
from .sequence import reverse_sequence, sequence_mask, sliding_window
from .slice_set import strided_set
from .sort_based import invert_permutation, unique
from .sparse import sparse_fill_empty_rows, sparse_reshape, sparse_to_dense

__all__ = ["reverse_reshape", "meshgrid", "unravel_index", "adv_index", "gather", "gather_nd",
           "broadcast_to_like", "collapse_sum_like", "collapse_sum_to", "full_like", "reshape_like", "slice_like",
           "matrix_set_diag", "trilu", "one_hot", "scatter_elements", "scatter_nd", "argwhere", "reverse_sequence",
           "sequence_mask", "sliding_window", "strided_set", "invert_permutation", "unique",
           "sparse_fill_empty_rows", "sparse_reshape", "sparse_to_dense"]
