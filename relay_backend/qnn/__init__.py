"""relay.qnn (tvm.relay.qnn): the QNN dialect's operators and passes, at the names TVM users
import them by:

    import relay_backend as relay
    q = relay.qnn.op.quantize(x, relay.const(0.1), relay.const(0), out_dtype="int8")
    mod = relay.qnn.transform.CanonicalizeOps()(mod)

The operators live in op/qnn (level 3), the passes in transform/legalize.py (level 4); this
package only gives them TVM's names.
"""
from . import op, transform
from .op import *  # noqa: F401,F403  (relay.qnn.quantize, as tvm.relay.qnn's `from .op.qnn import *`)

__all__ = ["op", "transform"] + op.__all__
