"""Pass infrastructure (tvm.transform): PassInfo, Pass, module/function passes, Sequential,
PassContext and pass instruments (PassTiming, PrintIRBefore, PrintIRAfter).

A pass maps an IRModule to an IRModule. Gating follows TVM: inside a `Sequential`, a contained
pass runs when its opt_level <= PassContext.current().opt_level or its name is in required_pass,
and never when its name is in disabled_pass. Calling a pass directly (`InferType()(mod)`) runs it
whatever its opt_level (an explicit call is a request), but a disabled pass is still skipped so
`disabled_pass=[...]` works for bisection however the pass is invoked.
"""
import logging
import sys
import threading
import time

from .. import diagnostics
from ..docstrings import shared_parameters
from ..errors import RelayError
from ..ir.expr import Function
from ..ir.module import IRModule

_PASS_LOG = diagnostics.get_logger("passes")        # RB_DEBUG=1: one line per pass with its time


class PassInfo:
    """The metadata of a pass (tvm.transform.PassInfo).

    Parameters
    ----------
    opt_level : int
        The least PassContext opt_level at which Sequential runs the pass.
    name : str
        The pass's name (as required_pass / disabled_pass refer to it).
    required : list of str, optional
        The names of passes to run before it. Defaults to ().
    """

    def __init__(self, opt_level: int, name: str, required=()):
        self.opt_level = int(opt_level)
        self.name = str(name)
        self.required = tuple(required or ())

    def __repr__(self) -> str:
        return (f"PassInfo(name={self.name!r}, opt_level={self.opt_level}, "
                f"required={list(self.required)})")


# --------------------------------------------------------------------------------------------
# Instruments
# --------------------------------------------------------------------------------------------
# the pass a hook is called for (shared_parameters completes the hooks' docstrings)
_HOOK_PARAMETERS = {"info": ("PassInfo", "The pass's name, opt_level and required passes.")}


class PassInstrument:
    """Hooks called around every pass run under a PassContext (tvm.instrument.PassInstrument).
    Subclass it and override the hooks wanted; the defaults do nothing and let every pass run."""

    def enter_pass_ctx(self):
        """Called when a PassContext holding this instrument is entered (`with ctx:`)."""
        pass

    def exit_pass_ctx(self):
        """Called when that PassContext is left, even after an error."""
        pass

    @shared_parameters(_HOOK_PARAMETERS)
    def should_run(self, mod, info) -> bool:
        """Whether a pass runs: a pass runs only if every instrument of the context says so.

        Parameters
        ----------
        mod : IRModule
            The module the pass would run on.

        Returns
        -------
        run : bool
            True (the default) to run it; False skips it, leaving the module as it is.
        """
        return True

    @shared_parameters(_HOOK_PARAMETERS)
    def run_before_pass(self, mod, info):
        """Called just before a pass runs.

        Parameters
        ----------
        mod : IRModule
            The module the pass is about to run on.
        """
        pass

    @shared_parameters(_HOOK_PARAMETERS)
    def run_after_pass(self, mod, info):
        """Called just after a pass ran.

        Parameters
        ----------
        mod : IRModule
            The module the pass returned.
        """
        pass


class PassTiming(PassInstrument):
    """Collects the wall time of every pass run (nested passes indented); `render()` is a table."""

    def __init__(self):
        self.records = []   # (depth, name, seconds), in completion order
        self._starts = []

    def enter_pass_ctx(self):
        self.records, self._starts = [], []

    def run_before_pass(self, mod, info):
        self._starts.append((info.name, time.perf_counter()))

    def run_after_pass(self, mod, info):
        name, start = self._starts.pop()
        self.records.append((len(self._starts), name, time.perf_counter() - start))

    def render(self) -> str:
        """One row per pass run in start order: name (indented by nesting) and milliseconds."""
        rows = _start_order(self.records)
        width = max([len("pass")] + [2 * d + len(n) for d, n, _ in rows])
        lines = [f"{'pass':<{width}}  {'time (ms)':>10}", "-" * (width + 12)]
        for depth, name, secs in rows:
            lines.append(f"{'  ' * depth + name:<{width}}  {secs * 1e3:>10.3f}")
        total = sum(s for d, _, s in rows if d == 0)
        lines.append("-" * (width + 12))
        lines.append(f"{'total':<{width}}  {total * 1e3:>10.3f}")
        return "\n".join(lines)


def _start_order(records):
    """Records arrive children-first (completion order); reorder so each parent precedes its
    children, as a reader expects."""
    out, pending = [], []   # pending: list of (depth, [rows]) groups awaiting their parent
    for depth, name, secs in records:
        children = []
        while pending and pending[-1][0] > depth:
            children = pending.pop()[1] + children
        pending.append((depth, [(depth, name, secs)] + children))
    for _, rows in pending:
        out.extend(rows)
    return out


class _PrintIR(PassInstrument):
    def __init__(self, names, when: str, file=None):
        self.names = {names} if isinstance(names, str) else set(names)
        self.when = when
        self.file = file

    def _print(self, mod, info):
        if info.name in self.names:
            print(f"# IR {self.when} {info.name}", file=self.file or sys.stdout)
            print(_module_text(mod), file=self.file or sys.stdout)


# what the two printing instruments share (shared_parameters completes their docstrings)
PRINT_IR_PARAMETERS = {
    "name": ("str or list of str", "The pass name(s) to watch."),
    "file": ("file-like", "Where to print; None is stdout."),
}


@shared_parameters(PRINT_IR_PARAMETERS)
class PrintIRBefore(_PrintIR):
    """A pass instrument that prints the module before each run of the named pass(es)."""

    def __init__(self, name, file=None):
        super().__init__(name, "before", file)

    def run_before_pass(self, mod, info):
        self._print(mod, info)


@shared_parameters(PRINT_IR_PARAMETERS)
class PrintIRAfter(_PrintIR):
    """A pass instrument that prints the module after each run of the named pass(es)."""

    def __init__(self, name, file=None):
        super().__init__(name, "after", file)

    def run_after_pass(self, mod, info):
        self._print(mod, info)


def _module_text(mod) -> str:
    try:
        return mod.astext()
    except Exception as err:  # noqa: BLE001 - printing is diagnostics; never fail the pass on it
        return f"<module: {len(mod.functions)} function(s); astext failed: {err}>"


# --------------------------------------------------------------------------------------------
# PassContext
# --------------------------------------------------------------------------------------------
class PassContext:
    """The settings passes run under (tvm.transform.PassContext); use it as a context manager:

        with relay.transform.PassContext(opt_level=3, disabled_pass=["FoldConstant"]):
            factory = relay.build(mod, "llvm")

    Parameters
    ----------
    opt_level : int, optional
        Passes whose opt_level is higher are skipped by Sequential. Defaults to 2.
    required_pass : list of str, optional
        Names of passes that always run, whatever their opt_level. Defaults to None.
    disabled_pass : list of str, optional
        Names of passes that never run. Defaults to None.
    config : dict, optional
        Options read by passes, e.g. {"relay.FuseOps.max_depth": 10}. Defaults to None.
    instruments : list of PassInstrument, optional
        Objects called around every pass run (timing, printing). Defaults to None.
    """

    _local = threading.local()

    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, config=None,
                 instruments=None):
        if not isinstance(opt_level, int) or isinstance(opt_level, bool):
            raise RelayError(f"PassContext: opt_level must be an int, got {opt_level!r}")
        self.opt_level = opt_level
        self.required_pass = _names("required_pass", required_pass)
        self.disabled_pass = _names("disabled_pass", disabled_pass)
        if config is not None and not isinstance(config, dict):
            raise RelayError(f"PassContext: config must be a dict, got {type(config).__name__}")
        self.config = dict(config or {})
        self.instruments = list(instruments or ())
        for inst in self.instruments:
            if not isinstance(inst, PassInstrument):
                raise RelayError(f"PassContext: {inst!r} is not a PassInstrument "
                                 f"(use PassTiming(), PrintIRBefore(name), PrintIRAfter(name))")
        self._depth = 0   # nesting of running passes, for debug output

    @staticmethod
    def _stack() -> list:
        stack = getattr(PassContext._local, "stack", None)
        if stack is None:
            stack = PassContext._local.stack = [PassContext()]
        return stack

    @staticmethod
    def current() -> "PassContext":
        """The innermost entered context, or the default one (opt_level=2)."""
        return PassContext._stack()[-1]

    def __enter__(self) -> "PassContext":
        for inst in self.instruments:
            inst.enter_pass_ctx()
        PassContext._stack().append(self)
        return self

    def __exit__(self, *exc):
        stack = PassContext._stack()
        if stack[-1] is self:
            stack.pop()
        for inst in self.instruments:
            inst.exit_pass_ctx()
        return False

    def pass_enabled(self, info: PassInfo) -> bool:
        """Whether a pass runs under this context, by TVM's rule: a disabled pass never does, a
        required one always does, any other when its opt_level is at most the context's.

        Parameters
        ----------
        info : PassInfo
            The pass's name and opt_level.

        Returns
        -------
        enabled : bool
            True when it runs.
        """
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return info.opt_level <= self.opt_level

    def __repr__(self) -> str:
        return (f"PassContext(opt_level={self.opt_level}, required_pass={sorted(self.required_pass)}, "
                f"disabled_pass={sorted(self.disabled_pass)})")


def _names(what: str, names) -> frozenset:
    if names is None:
        return frozenset()
    if isinstance(names, str):
        names = [names]
    for n in names:
        if not isinstance(n, str):
            raise RelayError(f"PassContext: {what} must hold pass names (str), got {n!r}")
    return frozenset(names)


# --------------------------------------------------------------------------------------------
# Passes
# --------------------------------------------------------------------------------------------
# Pass factories by name, used to run a pass's `required` list (e.g. "InferType").
_PASS_FACTORIES = {}


def register_pass_factory(name: str, factory) -> None:
    """Make `name` resolvable in a pass's `required` list (factory() builds the pass)."""
    _PASS_FACTORIES[name] = factory


class Pass:
    """The base of all passes: pass_obj(mod) returns the transformed module, under the current
    PassContext (a disabled pass returns `mod`).

    Parameters
    ----------
    info : PassInfo
        The pass's name, opt_level and required passes.
    """

    def __init__(self, info: PassInfo):
        self.info = info

    @property
    def name(self) -> str:
        """The pass's name, as required_pass, disabled_pass and the instruments see it."""
        return self.info.name

    def __call__(self, mod: IRModule) -> IRModule:
        if not isinstance(mod, IRModule):
            raise RelayError(f"pass {self.info.name}: expected an IRModule, got {type(mod).__name__} "
                             f"(wrap an expression with IRModule.from_expr)")
        ctx = PassContext.current()
        if self.info.name in ctx.disabled_pass:
            return mod
        return _run_instrumented(self, mod, ctx)

    def _run(self, mod: IRModule, ctx: PassContext) -> IRModule:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.info.name!r}, opt_level={self.info.opt_level})"


def _run_instrumented(p: Pass, mod: IRModule, ctx: PassContext) -> IRModule:
    """Run one pass with the context's instruments and RB_DEBUG timing output."""
    info = p.info
    if not all(inst.should_run(mod, info) for inst in ctx.instruments):
        return mod
    for inst in ctx.instruments:
        inst.run_before_pass(mod, info)
    debug = diagnostics.wants(1) or _PASS_LOG.isEnabledFor(logging.DEBUG)
    start = time.perf_counter()
    ctx._depth += 1
    try:
        new_mod = p._run(mod, ctx)
    finally:
        ctx._depth -= 1
    if not isinstance(new_mod, IRModule):
        raise RelayError(f"pass {info.name} returned {type(new_mod).__name__}, expected an IRModule")
    if debug:
        ms = (time.perf_counter() - start) * 1e3
        _PASS_LOG.debug("[pass] %s%s: %.3f ms", "  " * ctx._depth, info.name, ms)
    if diagnostics.dumping() and not isinstance(p, Sequential):
        diagnostics.dump("relay", f"after_{info.name}", new_mod.astext)
    for inst in ctx.instruments:
        inst.run_after_pass(new_mod, info)
    return new_mod


class ModulePass(Pass):
    """A pass given as a function of a whole module (tvm.transform.ModulePass); made by
    module_pass.

    Parameters
    ----------
    pass_func : callable
        pass_func(mod, ctx) -> IRModule.
    info : PassInfo
        The pass's name, opt_level and required passes.
    """

    def __init__(self, pass_func, info: PassInfo):
        super().__init__(info)
        self.pass_func = pass_func

    def _run(self, mod, ctx):
        return self.pass_func(mod, ctx)


def function_pass_skips(func: Function) -> bool:
    """Functions a function pass leaves alone (as TVM): fused primitives, external, opted out."""
    attrs = func.attrs
    return (int(attrs.get("Primitive", 0)) == 1 or attrs.get("Compiler") is not None
            or int(attrs.get("SkipOptimization", 0)) == 1)


class FunctionPass(Pass):
    """A pass given as a function of one function (tvm.relay.transform.FunctionPass), applied to
    every global function except primitive (Primitive=1), external (Compiler) and
    SkipOptimization ones; made by function_pass.

    Parameters
    ----------
    pass_func : callable
        pass_func(func, mod, ctx) -> Function.
    info : PassInfo
        The pass's name, opt_level and required passes.
    """

    def __init__(self, pass_func, info: PassInfo):
        super().__init__(info)
        self.pass_func = pass_func

    def _run(self, mod, ctx):
        new_mod = mod.copy()
        for gv, func in list(mod.functions.items()):
            if not isinstance(func, Function) or function_pass_skips(func):
                continue
            new_func = self.pass_func(func, new_mod, ctx)
            if not isinstance(new_func, Function):
                raise RelayError(f"function pass {self.info.name} returned {type(new_func).__name__} "
                                 f"for @{gv.name_hint}, expected a relay Function")
            new_mod[gv] = new_func
        return new_mod


def _still_typed(mod, typed) -> bool:
    """True when `mod` holds exactly the function objects an InferType run typed."""
    return typed is not None and len(typed) == len(mod.functions) and \
        all(typed.get(gv) is fn for gv, fn in mod.functions.items())


class Sequential(Pass):
    """Run passes in order (tvm.transform.Sequential), each gated by the current PassContext
    (opt_level, required and disabled names), after the passes it lists as required.

    Parameters
    ----------
    passes : list of Pass, optional
        The passes. Defaults to None (none).
    opt_level : int, optional
        The least opt_level at which an enclosing Sequential runs this one. Defaults to 0.
    name : str, optional
        The name of the sequence. Defaults to "sequential".
    required : list of str, optional
        Passes to run before the sequence. Defaults to None.
    """

    def __init__(self, passes=None, opt_level=0, name="sequential", required=None):
        super().__init__(PassInfo(opt_level, name, required or ()))
        self.passes = list(passes or ())
        for p in self.passes:
            if not isinstance(p, Pass):
                raise RelayError(f"Sequential {name!r}: {p!r} is not a Pass")

    def _run(self, mod, ctx):
        typed = None    # the functions InferType last typed (it types them in place)
        for p in self.passes:
            if not ctx.pass_enabled(p.info):
                continue
            for req in p.info.required:
                factory = _PASS_FACTORIES.get(req)
                if factory is None:
                    raise RelayError(f"pass {p.info.name} requires {req!r}, which is not a known pass "
                                     f"(known: {sorted(_PASS_FACTORIES)})")
                if req == "InferType" and _still_typed(mod, typed):
                    continue    # nothing changed since the last InferType
                mod = factory()(mod)
                typed = dict(mod.functions) if req == "InferType" else typed
            mod = p(mod)
            typed = dict(mod.functions) if p.info.name == "InferType" else typed
        return mod

    def __repr__(self) -> str:
        head = f"Sequential(name={self.info.name!r}, opt_level={self.info.opt_level})"
        body = "".join(f"\n  {line}" for p in self.passes for line in repr(p).splitlines())
        return head + (" [" + body + "\n]" if self.passes else " []")


# --------------------------------------------------------------------------------------------
# Decorators
# --------------------------------------------------------------------------------------------
def _make_decorator(kind: str, pass_cls, method: str, pass_func, opt_level, name, required):
    if opt_level is None:
        raise RelayError(f"{kind}: please provide opt_level, e.g. @{kind}(opt_level=1)")

    def create(target):
        pass_name = name or target.__name__
        info = PassInfo(opt_level, pass_name, required or ())
        if isinstance(target, type):
            return _wrap_class(target, pass_cls, method, info)
        if not callable(target):
            raise RelayError(f"{kind}: expected a function or a class, got {type(target).__name__}")
        return pass_cls(target, info)

    return create(pass_func) if pass_func is not None else create


def _wrap_class(klass, pass_cls, method: str, info: PassInfo):
    """A class whose instances are passes calling the user's `method` (TVM's class decorator)."""
    if not callable(getattr(klass, method, None)):
        raise RelayError(f"class {klass.__name__} used as a pass must define {method}()")

    class PyPass(pass_cls):
        def __init__(self, *args, **kwargs):
            inst = klass(*args, **kwargs)
            super().__init__(getattr(inst, method), info)
            self._inst = inst

        def __getattr__(self, attr):
            # Only called for attributes the pass itself lacks: forward to the user's object.
            if attr == "_inst":
                raise AttributeError(attr)
            return getattr(self._inst, attr)

    PyPass.__name__ = PyPass.__qualname__ = klass.__name__
    PyPass.__doc__ = klass.__doc__
    return PyPass


# what module_pass and function_pass share (shared_parameters completes their docstrings)
PASS_MAKER_PARAMETERS = {
    "name": ("str", "The pass's name; None uses the function's or class's name."),
    "required": ("list of str", "The names of passes to run before it."),
}


@shared_parameters(PASS_MAKER_PARAMETERS)
def module_pass(pass_func=None, opt_level=None, name=None, required=None):
    """Make a module pass (tvm.transform.module_pass), as a call or a decorator.

    Parameters
    ----------
    pass_func : callable or type, optional
        f(mod, ctx) -> IRModule, or a class with transform_module(mod, ctx); None (the
        default) returns a decorator.
    opt_level : int
        The least PassContext opt_level at which the pass runs; required.

    Returns
    -------
    result : ModulePass or callable
        The pass (for a class, a class whose instances are passes), or a decorator.
    """
    return _make_decorator("module_pass", ModulePass, "transform_module", pass_func, opt_level,
                           name, required)


@shared_parameters(PASS_MAKER_PARAMETERS)
def function_pass(pass_func=None, opt_level=None, name=None, required=None):
    """Make a function pass (tvm.relay.transform.function_pass), as a call or a decorator; it is
    applied to each non-primitive global function.

    Parameters
    ----------
    pass_func : callable or type, optional
        f(func, mod, ctx) -> Function, or a class with transform_function(func, mod, ctx);
        None (the default) returns a decorator.
    opt_level : int
        The least PassContext opt_level at which the pass runs; required.

    Returns
    -------
    result : FunctionPass or callable
        The pass (for a class, a class whose instances are passes), or a decorator.
    """
    return _make_decorator("function_pass", FunctionPass, "transform_function", pass_func,
                           opt_level, name, required)
