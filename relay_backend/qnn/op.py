"""relay.qnn.op (tvm.relay.qnn.op): the constructors of the qnn operators."""
from ..op.qnn import *  # noqa: F401,F403
from ..op.qnn import __all__  # noqa: F401
