"""Every public function, class and method a tvm.relay user reaches has a numpydoc Parameters section.

The walk starts from the namespaces a Relay user imports (relay, relay.nn, relay.transform, ...,
relay.frontend.onnx, relay.testing, relay.viz, relay.session) and reads each namespace's
`__all__` (else its public names); a submodule listed in `__all__` (testing.mlp, op.dyn.nn) is
walked too. Public means: no leading underscore, defined inside relay_backend. So an op another
branch adds to relay.nn is checked as soon as it is exported, with no change here.

A function passes when its docstring has a numpydoc section

    Parameters
    ----------
    name : type
        What it is, its default and effect.

with an entry (and a description) for each of its parameters, self/cls, *args/**kwargs and
underscore-prefixed parameters aside; a class passes when its docstring or its __init__'s
documents the parameters of its constructor. The docstrings are parsed with docstring_parser
(the numpydoc grammar TVM's docstrings follow).

The public methods of the classes the walk reaches are held to the same rule: every method
without a leading underscore (dunders aside) that a relay_backend class in the class's MRO
defines, checked once at the class that defines it, so an inherited method is not counted again
and a private base (`_Config` under `relay.backend.Executor`) is checked because its methods
reach the user through the public class. A static or class method is a method; a property needs
a docstring only (it takes no parameters).
"""
import enum
import functools
import importlib
import inspect

from docstring_parser import numpydoc

NAMESPACES = [
    "relay_backend", "relay_backend.op", "relay_backend.op.nn", "relay_backend.op.dyn",
    "relay_backend.op.annotation", "relay_backend.transform", "relay_backend.analysis",
    "relay_backend.graph_executor", "relay_backend.graph_executor.debug_executor",
    "relay_backend.vm", "relay_backend.aot", "relay_backend.frontend", "relay_backend.frontend.onnx",
    "relay_backend.backend", "relay_backend.ir", "relay_backend.target", "relay_backend.runtime",
    "relay_backend.cache", "relay_backend.testing", "relay_backend.viz", "relay_backend.session",
    "relay_backend.op.image", "relay_backend.op.vision", "relay_backend.op.random", "relay_backend.qnn",
    "relay_backend.qnn.op", "relay_backend.qnn.transform",
]
OPTIONAL_NAMESPACES = ["relay_backend.autotvm"]   # checked once it exists
SKIPPED_PARAMETERS = {"self", "cls"}


def _public_names(module):
    """(name, is_listed): the module's __all__ when it declares one, else its public names."""
    listed = getattr(module, "__all__", None)
    if listed is not None:
        return list(listed), True
    return [name for name in dir(module) if not name.startswith("_")], False


def _defined_here(obj) -> bool:
    return (getattr(obj, "__module__", None) or "").startswith("relay_backend")


def public_objects():
    """{qualified name: function or class} for every public callable in the namespaces."""
    modules = [importlib.import_module(name) for name in NAMESPACES]
    for name in OPTIONAL_NAMESPACES:
        try:
            modules.append(importlib.import_module(name))
        except ModuleNotFoundError:
            pass
    found, seen_ids, walked = {}, set(), set()
    while modules:
        module = modules.pop(0)
        if module.__name__ in walked:
            continue
        walked.add(module.__name__)
        names, listed = _public_names(module)
        for name in names:
            if name.startswith("_"):
                continue
            obj = getattr(module, name, None)
            if inspect.ismodule(obj):
                if listed and obj.__name__.startswith("relay_backend"):
                    modules.append(obj)
                continue
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or not _defined_here(obj):
                continue
            if id(obj) not in seen_ids:
                seen_ids.add(id(obj))
                found[f"{module.__name__}.{name}"] = obj
    return found


def parameters_to_document(obj) -> list:
    """The parameter names a caller passes by name (the constructor's, for a class)."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):   # a builtin without a signature: nothing to check
        return []
    return [p.name for p in signature.parameters.values()
            if p.name not in SKIPPED_PARAMETERS and not p.name.startswith("_")
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]


def documented_parameters(*docstrings) -> set:
    """Names with a described entry in the numpydoc Parameters sections of the docstrings
    ("a, b : int" documents both)."""
    names = set()
    for doc in docstrings:
        for param in numpydoc.parse(doc or "").params:
            if param.args[0] == "param" and (param.description or "").strip():
                names.update(part.strip() for part in param.arg_name.split(","))
    return names


def _docstrings(obj) -> list:
    docs = [inspect.getdoc(obj)]
    if inspect.isclass(obj) and "__init__" in vars(obj):
        docs.append(inspect.getdoc(obj.__init__))
    return docs


def undocumented(obj) -> list:
    """The parameters of `obj` its docstring does not describe (all of them when it has none)."""
    if inspect.isclass(obj) and issubclass(obj, (enum.Enum, BaseException)):
        return [] if inspect.getdoc(obj) else ["(no docstring)"]
    docs = _docstrings(obj)
    if not any(docs):
        return ["(no docstring)"]
    described = documented_parameters(*docs)
    return [name for name in parameters_to_document(obj) if name not in described]


def _method_kind(attribute):
    """("property" or "method", the underlying function) for a class attribute, else None."""
    if isinstance(attribute, (property, functools.cached_property)):
        return "property", attribute.fget if isinstance(attribute, property) else attribute.func
    if isinstance(attribute, (staticmethod, classmethod)):
        attribute = attribute.__func__
    if inspect.isfunction(attribute) and _defined_here(attribute):
        return "method", attribute
    return None


def public_methods(objects=None):
    """{qualified name: (kind, function)} for the public methods and properties of the walked
    classes, keyed by the class that defines each (so an inherited one is listed once)."""
    objects = public_objects() if objects is None else objects
    found, seen_ids = {}, set()
    for cls in (obj for obj in objects.values() if inspect.isclass(obj)):
        for owner in cls.__mro__:
            if not _defined_here(owner):
                continue
            for name, attribute in vars(owner).items():
                kind = None if name.startswith("_") else _method_kind(attribute)
                if kind is None or id(kind[1]) in seen_ids:
                    continue
                seen_ids.add(id(kind[1]))
                found[f"{owner.__module__}.{owner.__qualname__}.{name}"] = kind
    return found


def undocumented_member(kind: str, function) -> list:
    """What a method's docstring misses (as `undocumented`); for a property, only a docstring."""
    if kind == "property":
        return [] if inspect.getdoc(function) else ["(no docstring)"]
    return undocumented(function)


def test_the_walk_reaches_the_namespaces():
    objects = public_objects()
    for name in ("relay_backend.build", "relay_backend.op.nn.conv2d", "relay_backend.Var",
                 "relay_backend.graph_executor.GraphModule", "relay_backend.frontend.from_onnx",
                 "relay_backend.testing.resnet.get_workload", "relay_backend.add", "relay_backend.sum"):
        assert name in objects, f"{name} was not reached by the walk"


def test_the_check_reads_numpydoc():
    def documented(data, axis=None, *args, **kwargs):
        """Something.

        Parameters
        ----------
        data : relay.Expr
            The input.
        axis : int, optional
            The axis.
        """

    def half(data, axis=None):
        """Something.

        Parameters
        ----------
        data : relay.Expr
            The input.

        Returns
        -------
        axis : int
            Not a parameter: returns do not count.
        """

    def prose(data, axis=None):
        """Something of `data` over `axis` (names in prose are not a Parameters section)."""

    assert undocumented(documented) == []
    assert undocumented(half) == ["axis"]
    assert undocumented(prose) == ["data", "axis"]


def test_the_method_walk_reads_definitions_once():
    class Base:
        def shared(self, value):
            """Defined once, inherited below."""

        @property
        def size(self):
            return 1

        @staticmethod
        def make(count):
            """Make one.

            Parameters
            ----------
            count : int
                How many.
            """

        def _private(self, value):
            pass

        def __len__(self):
            return 1

    class Child(Base):
        def own(self):
            """No parameters: a docstring is enough."""

    for cls in (Base, Child):   # as if defined in relay_backend, functions included
        cls.__module__ = "relay_backend.example"
        for attribute in vars(cls).values():
            function = getattr(attribute, "fget", None) or getattr(attribute, "__func__", attribute)
            if inspect.isfunction(function):
                function.__module__ = "relay_backend.example"
    methods = public_methods({"Child": Child})
    prefix = f"relay_backend.example.{Base.__qualname__.rsplit('.', 1)[0]}"
    assert sorted(methods) == sorted(f"{prefix}.{name}" for name in
                                     ("Child.own", "Base.shared", "Base.size", "Base.make"))
    missing = {name.rsplit(".", 1)[1]: undocumented_member(*kind) for name, kind in methods.items()}
    assert missing == {"own": [], "shared": ["value"], "size": ["(no docstring)"], "make": []}


def test_every_public_function_and_class_documents_its_parameters():
    missing = {name: params for name, obj in public_objects().items() if (params := undocumented(obj))}
    listing = "\n".join(f"  {name}: {', '.join(params)}" for name, params in sorted(missing.items()))
    assert not missing, (f"{len(missing)} public functions/classes lack a numpydoc Parameters entry "
                         f"for these parameters:\n{listing}")


def test_every_public_method_documents_its_parameters():
    missing = {name: params for name, (kind, function) in public_methods().items()
               if (params := undocumented_member(kind, function))}
    listing = "\n".join(f"  {name}: {', '.join(params)}" for name, params in sorted(missing.items()))
    assert not missing, (f"{len(missing)} public methods lack a docstring or a numpydoc Parameters "
                         f"entry for these parameters:\n{listing}")
