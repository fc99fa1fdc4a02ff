"""The `pass_instrument` decorator (tvm.instrument.pass_instrument): turn a plain class into a
PassInstrument.

The class may define any of enter_pass_ctx(), exit_pass_ctx(), should_run(mod, info),
run_before_pass(mod, info) and run_after_pass(mod, info); the hooks it leaves out do nothing
(should_run defaults to True). Instances are accepted by PassContext(instruments=[...]).

    @pass_instrument
    class CountRuns:
        def __init__(self):
            self.count = 0
        def run_after_pass(self, mod, info):
            self.count += 1
"""
from ..errors import RelayError
from .pass_infra import PassInstrument

HOOKS = ("enter_pass_ctx", "exit_pass_ctx", "should_run", "run_before_pass", "run_after_pass")


def pass_instrument(pi_cls=None):
    """Class decorator making a class's instances PassInstruments, whose hooks (enter_pass_ctx,
    exit_pass_ctx, should_run, run_before_pass, run_after_pass) are called around pass runs.
    Both `@pass_instrument` and `@pass_instrument()` work, as in TVM.

    Parameters
    ----------
    pi_cls : type, optional
        The class (given when used bare). Defaults to None.

    Returns
    -------
    result : type or callable
        The instrument class, or a decorator making one.
    """

    def create(cls):
        if not isinstance(cls, type):
            raise RelayError(f"pass_instrument decorates a class, got {type(cls).__name__}")
        for hook in HOOKS:
            method = cls.__dict__.get(hook)
            if method is not None and not callable(method):
                raise RelayError(f"pass_instrument: {cls.__name__}.{hook} must be a method")
        # The user's class first, so its hooks win; PassInstrument supplies the rest.
        return type(cls.__name__, (cls, PassInstrument),
                    {"__doc__": cls.__doc__, "__module__": cls.__module__,
                     "__qualname__": cls.__qualname__})

    return create(pi_cls) if pi_cls is not None else create


__all__ = ["pass_instrument"]
