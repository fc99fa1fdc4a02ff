"""Runtime values of the reference interpreter (tvm.relay.interpreter's value kinds).

Tensors are runtime NDArrays and tuples are runtime ADTs with tag 0 (shared with the VM), so
these classes cover only what the compiled runtimes have no equivalent for: closures, let-bound
recursive closures, constructor values and mutable references.
"""
from ..runtime.container import ADT
from ..runtime.ndarray import NDArray


class Closure:
    """A Relay Function together with the values of its free variables at creation time."""

    __slots__ = ("func", "env")

    def __init__(self, func, env):
        self.func = func
        self.env = dict(env)  # Var -> value

    def __repr__(self) -> str:
        names = [p.name_hint for p in self.func.params]
        return f"Closure(fn({', '.join(names)}), captures={[v.name_hint for v in self.env]})"


class RecClosure:
    """A closure bound by `let f = fn ...` whose body refers to `f`: invoking it binds `bind`
    (the let variable) to the RecClosure itself, so the body can call itself."""

    __slots__ = ("clos", "bind")

    def __init__(self, clos: Closure, bind):
        self.clos = clos
        self.bind = bind

    @property
    def func(self):
        return self.clos.func

    @property
    def env(self):
        return self.clos.env

    def __repr__(self) -> str:
        return f"RecClosure({self.bind.name_hint} = {self.clos!r})"


class ConstructorValue:
    """A value built by an ADT constructor: its tag, its field values and the Constructor."""

    __slots__ = ("tag", "fields", "constructor")

    def __init__(self, tag: int, fields, constructor=None):
        self.tag = int(tag)
        self.fields = tuple(fields)
        self.constructor = constructor

    def __repr__(self) -> str:
        name = self.constructor.name_hint if self.constructor is not None else f"tag{self.tag}"
        return f"{name}({', '.join(repr(f) for f in self.fields)})"


class RefValue:
    """A mutable reference cell (RefCreate makes one, RefWrite updates `value`)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return f"RefValue({self.value!r})"


def empty_tuple() -> ADT:
    """The unit value `()` that RefWrite returns."""
    return ADT(0, ())


def is_closure(value) -> bool:
    return isinstance(value, (Closure, RecClosure))


def describe(value) -> str:
    """A short description of a runtime value for error messages (shape/dtype, not data)."""
    if isinstance(value, NDArray):
        return f"a tensor of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, ADT):
        return f"a tuple of {len(value)} field(s)" if value.tag == 0 else f"an ADT with tag {value.tag}"
    if isinstance(value, ConstructorValue):
        name = value.constructor.name_hint if value.constructor is not None else f"tag {value.tag}"
        return f"an ADT value built by {name}"
    if isinstance(value, RefValue):
        return "a reference"
    if is_closure(value):
        return "a closure"
    return f"a {type(value).__name__}"


__all__ = ["Closure", "RecClosure", "ConstructorValue", "RefValue", "ADT", "NDArray", "empty_tuple",
           "is_closure", "describe"]
