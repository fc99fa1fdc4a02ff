"""relay.qnn.transform (tvm.relay.qnn.transform): the QNN passes."""
from ..transform.legalize import qnn_canonicalize, QNN_LEGALIZE
from ..transform.legalize import Legalize as _legalize_by


def CanonicalizeOps():  # noqa: N802 - tvm naming
    """Rewrite every qnn op with basic integer / float ops (TVM's QnnCanonicalize): int32
    accumulation, zero-point terms, fixed-point requantization. The default pipeline runs it,
    so a program needs it only to inspect or transform the lowered form."""
    return qnn_canonicalize()


def Legalize():  # noqa: N802 - tvm naming
    """Apply the target-specific "FTVMQnnLegalize" rules to qnn ops (none are registered here:
    the canonical forms already run well on every target)."""
    return _legalize_by(QNN_LEGALIZE)


__all__ = ["CanonicalizeOps", "Legalize"]
