"""gradient (tvm.relay.transform.gradient): a function computing f's value together with the
gradients of (the sum of) its outputs with respect to each parameter.

mode="higher_order" (the default, as Relay) handles closures, control flow and recursion with
references (transform/higher_order_gradient.py; the debug interpreter runs the result);
mode="first_order" gives a plain dataflow program every executor compiles
(transform/first_order_gradient.py, also the FirstOrderGradient pass). Both return
fn(x1, ..., xn) -> (T, (T1, ..., Tn)).
"""
import warnings

from ..errors import RelayError
from ..ir.expr import GlobalVar
from ..ir.module import IRModule
from .first_order_gradient import first_order_gradient
from .higher_order_gradient import higher_order_gradient

MODES = ("higher_order", "first_order")


def gradient(expr, mod=None, mode: str = "higher_order"):
    """The gradient function of a function (tvm.relay.transform.gradient): it returns the
    original result and the gradients of (the sum of) its outputs with respect to each
    parameter.

    Parameters
    ----------
    expr : Function or GlobalVar
        The function to differentiate (a GlobalVar of `mod` for higher-order mode).
    mod : IRModule, optional
        The module the function lives in. Defaults to None.
    mode : str, optional
        "higher_order" (the default, as Relay) handles closures, control flow and recursion;
        "first_order" (deprecated here as in TVM) gives a plain dataflow program.

    Returns
    -------
    func : Function
        A function returning (result, (gradient for each parameter)).
    """
    if mode == "first_order":
        warnings.warn("using transform.gradient for first-order AD is deprecated, please use the "
                      "FirstOrderGradient module pass", DeprecationWarning, stacklevel=2)
        if mod is not None:
            raise RelayError("to run first-order AD on a module, please use the FirstOrderGradient "
                             "module pass")
        if isinstance(expr, GlobalVar):
            raise RelayError("first-order gradient of a GlobalVar: pass the function itself")
        return first_order_gradient(IRModule.from_expr(expr)["main"])
    if mode == "higher_order":
        return higher_order_gradient(expr, mod)
    raise RelayError(f"gradient: unknown mode {mode!r}; use one of {list(MODES)}")


__all__ = ["gradient", "MODES"]
