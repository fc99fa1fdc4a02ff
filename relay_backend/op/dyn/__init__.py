"""relay.dyn: operators whose shape arguments are Relay tensors known at run time (TVM v0.18's
`relay.op.dyn`): reshape, broadcast_to, tile, squeeze, expand_dims, strided_slice, full, zeros,
ones, arange and nn.pad. The static constructors (`relay.reshape(x, newshape)`, ...) build them when a
shape argument is a non-constant Relay expression; `transform.DynamicToStatic()` turns calls
whose shape arguments are constants back into the static ops. common.py says how one is built.
"""
from . import common, creation, nn, transform  # noqa: F401  (importing registers the ops)
from . import image  # noqa: F401  (dyn.image.resize2d)
from .transform import (broadcast_to, expand_dims, full, ones, reshape, squeeze, strided_slice,  # noqa: F401
                        tile, zeros)
from .creation import arange  # noqa: F401

__all__ = ["reshape", "broadcast_to", "tile", "squeeze", "expand_dims", "strided_slice", "full", "zeros",
           "ones", "arange", "nn"]
