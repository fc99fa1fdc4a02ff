"""Executor and Runtime configurations (tvm.relay.backend.Executor / Runtime).

`relay.build(mod, target, executor=Executor("aot"), runtime=Runtime("crt"))` names the executor
and the runtime it is built for, each with options. Both are small registries with typed options
and defaults, as in TVM v0.18: `Executor.list_registered()`, `Executor.list_registered_options
("aot")`. An option relay_backend cannot honour is an error naming what it does instead, never
silently ignored.
"""
from ..errors import OpNotImplemented, RelayError


class _Option:
    """One option: its type name (as TVM lists it), its default, and the values we support."""

    def __init__(self, type_key: str, default=None, check=None):
        self.type_key = type_key
        self.default = default
        self.check = check       # value -> None or the reason it is not supported


def _is_alignment_up_to_64(value):
    if value <= 0 or value & (value - 1):
        return f"must be a positive power of two, got {value}"
    if value > 64:
        return f"{value} is not supported: relay_backend aligns every buffer to 64 bytes"
    return None


_TYPES = {"runtime.BoxBool": bool, "runtime.String": str, "runtime.BoxInt": int}


class _Config:
    """Base of Executor and Runtime: a registered name with a dict of checked options."""

    registry: dict = {}
    what = "config"

    def __init__(self, name, options=None):
        if name not in self.registry:
            raise RelayError(f"{self.what} {name!r} is not registered; valid {self.what}s are "
                             f"{self.list_registered()}")
        known = self.registry[name]
        options = dict(options or {})
        for key, value in options.items():
            if key not in known:
                raise RelayError(f"{self.what} {name!r} has no option {key!r}; its options are "
                                 f"{sorted(known)}")
            want = _TYPES[known[key].type_key]
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                raise RelayError(f"{self.what} {name!r}: option {key!r} must be a "
                                 f"{want.__name__}, got {type(value).__name__} {value!r}")
            reason = known[key].check(value) if known[key].check else None
            if reason:
                raise OpNotImplemented(f"{self.what} {name!r}: option {key}={value!r}: {reason}")
        self.name = name
        self._attrs = {k: o.default for k, o in known.items() if o.default is not None}
        self._attrs.update(options)

    @property
    def attrs(self) -> dict:
        """A copy of the options: the registered defaults, updated with those given."""
        return dict(self._attrs)

    def __contains__(self, key) -> bool:
        return key in self._attrs

    def __getitem__(self, key):
        return self._attrs[key]

    def get(self, key, default=None):
        """One option's value, as dict.get.

        Parameters
        ----------
        key : str
            The option's name, e.g. "interface-api".
        default : object, optional
            What to return when the option is not set. Defaults to None.

        Returns
        -------
        value : object
            The option's value, or `default`.
        """
        return self._attrs.get(key, default)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.name == self.name and other._attrs == self._attrs

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name, tuple(sorted(self._attrs.items()))))

    def __str__(self) -> str:
        opts = "".join(f" -{k}={v}" for k, v in sorted(self._attrs.items()))
        return f"{self.name}{opts}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self._attrs!r})"

    @classmethod
    def list_registered(cls) -> list:
        """The registered names."""
        return list(cls.registry)

    @classmethod
    def list_registered_options(cls, name) -> dict:
        """The options a registered name accepts, with their types.

        Parameters
        ----------
        name : str or Executor or Runtime
            The registered name (e.g. "aot"), or a config whose name to look up.

        Returns
        -------
        options : dict of str to str
            {option name: type name}.
        """
        name = getattr(name, "name", name)
        if name not in cls.registry:
            raise RelayError(f"{cls.what} {name!r} is not registered; valid {cls.what}s are "
                             f"{cls.list_registered()}")
        return {key: opt.type_key for key, opt in cls.registry[name].items()}


def _only(expected, reason):
    return lambda value: None if value == expected else reason


class Executor(_Config):
    """Which executor relay.build generates code for (tvm.relay.backend.Executor).

    Parameters
    ----------
    name : str
        "graph" or "aot".
    options : dict, optional
        Options of that executor, checked against what it supports: for "aot",
        "interface-api" ("c"), "unpacked-api" (True), "link-params" (True),
        "workspace-byte-alignment" and "constant-byte-alignment" (powers of two up to 64);
        for "graph", "link-params" (False). Defaults to None.
    """

    what = "executor"
    registry = {
        "graph": {
            "link-params": _Option("runtime.BoxBool", False, _only(
                False, "the graph executor keeps params outside the kernels (factory.get_params(); "
                       "export_library stores them in the same file)")),
        },
        "aot": {
            "link-params": _Option("runtime.BoxBool", True, _only(
                True, "the AOT executor always links params into its program (model_params.bin)")),
            "unpacked-api": _Option("runtime.BoxBool", None, _only(
                True, "the AOT entry point takes its tensors unpacked, as plain pointers in structs")),
            "interface-api": _Option("runtime.String", None, _only(
                "c", "the AOT executor emits the C interface (tvmgen_default_run with input and "
                     "output structs); use interface-api='c'")),
            "workspace-byte-alignment": _Option("runtime.BoxInt", None, _is_alignment_up_to_64),
            "constant-byte-alignment": _Option("runtime.BoxInt", None, _is_alignment_up_to_64),
        },
    }


class Runtime(_Config):
    """Which runtime a built artifact runs under (tvm.relay.backend.Runtime).

    Parameters
    ----------
    name : str
        "cpp" (the Python runtime of this package) or "crt" (none at all: the AOT C
        program).
    options : dict, optional
        Options of that runtime: "system-lib" (False for "cpp"). Defaults to None.
    """

    what = "runtime"
    registry = {
        "cpp": {"system-lib": _Option("runtime.BoxBool", None, _only(
            False, "built libraries are loaded with dlopen (load_module); use the AOT executor's "
                   "C export to link a model statically"))},
        "crt": {"system-lib": _Option("runtime.BoxBool", None)},
    }


def resolve_executor(executor) -> Executor:
    """`executor` as an Executor: a name or an Executor (build()'s argument)."""
    if isinstance(executor, Executor):
        return executor
    if isinstance(executor, str):
        return Executor(executor)
    raise RelayError(f"build: executor must be 'graph', 'aot' or relay.backend.Executor(...), got "
                     f"{type(executor).__name__}")


def resolve_runtime(runtime, executor: Executor) -> Runtime:
    """`runtime` (None, a name or a Runtime) checked against `executor`: the crt runtime has no
    graph executor here (its C output is the AOT program)."""
    if runtime is None:
        runtime = Runtime("cpp")
    elif isinstance(runtime, str):
        runtime = Runtime(runtime)
    elif not isinstance(runtime, Runtime):
        raise RelayError(f"build: runtime must be 'cpp', 'crt' or relay.backend.Runtime(...), got "
                         f"{type(runtime).__name__}")
    if runtime.name == "crt" and executor.name != "aot":
        raise OpNotImplemented(f"build: Runtime('crt') needs Executor('aot') here: the {executor.name} "
                               f"executor runs under the cpp runtime")
    return runtime


__all__ = ["Executor", "Runtime", "resolve_executor", "resolve_runtime"]
