"""PrintIR (tvm.transform.PrintIR): a pass that prints the module and returns it unchanged.

Put it anywhere in a Sequential to see the program at that point:
`Sequential([FoldConstant(), PrintIR("after folding"), FuseOps()])`. It is an opt_level-0
module pass, so it always runs inside a Sequential (unless disabled by name, "PrintIR").
"""
import sys

from .pass_infra import module_pass


def PrintIR(header: str = "", show_meta_data: bool = False):  # noqa: N802 - tvm naming
    """A pass that prints `PrintIR(<header>):` and the module's text to stdout and returns the
    module unchanged (tvm.transform.PrintIR).

    Parameters
    ----------
    header : str, optional
        A label printed before the module. Defaults to "".
    show_meta_data : bool, optional
        Whether to print the metadata section (large constants). Defaults to False.

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """

    def print_module(mod, ctx):
        print(f"PrintIR({header}):", file=sys.stdout)
        print(mod.astext(show_meta_data=show_meta_data), file=sys.stdout)
        return mod

    return module_pass(print_module, opt_level=0, name="PrintIR")


__all__ = ["PrintIR"]
