"""relay.dyn: operators whose shape arguments are Relay tensors known at run time (TVM v0.18's
`relay.op.dyn`): reshape, broadcast_to, tile, squeeze, expand_dims, strided_slice, full, zeros,
ones, arange, nn.pad and topk. The static constructors (`relay.reshape(x, newshape)`, ...) build them when a
shape argument is a non-constant Relay expression; `transform.DynamicToStatic()` turns calls
whose shape arguments are constants back into the static ops. common.py says how one is built.
"""
from . import common, creation, nn, nn_upsampling, transform  # noqa: F401  (importing registers the ops)
from . import image  # noqa: F401  (dyn.image.resize2d, dyn.image.resize2d_scales)
from .transform import (broadcast_to, expand_dims, full, ones, reshape, squeeze, strided_slice,  # noqa: F401
                        tile, zeros)
from .creation import arange  # noqa: F401
from . import algorithm  # noqa: F401,E402  (dyn.topk)
from .algorithm import dyn_topk as topk  # noqa: F401
from . import indexing  # noqa: F401  (issue 20: dyn.one_hot, dyn.sparse_to_dense)
from .indexing import one_hot, sparse_to_dense  # noqa: F401

__all__ = ["reshape", "broadcast_to", "tile", "squeeze", "expand_dims", "strided_slice", "full", "zeros",
           "ones", "arange", "nn", "topk", "one_hot", "sparse_to_dense"]
