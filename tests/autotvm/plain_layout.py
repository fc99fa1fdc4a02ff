"""Task extraction with AlterOpLayout off, for the tests of the plain-layout templates
(dense_pack.x86 / dense_dot.x86, conv2d_nchw.x86) that a build at opt_level 2 selects;
extract_from_program itself extracts at opt_level 3, after the layouts are altered."""
from relay_backend.autotvm.task.relay_integration import extract_from_program
from relay_backend.transform import PassContext


def extract_plain_layout(mod, target="llvm", params=None) -> list:
    """The tuning tasks of `mod` with AlterOpLayout disabled (one per tunable implementation and
    shape)."""
    with PassContext(opt_level=3, disabled_pass=["AlterOpLayout"]):
        return extract_from_program(mod, params or {}, target)
