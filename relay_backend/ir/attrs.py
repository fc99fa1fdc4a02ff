"""Operator attributes: each op's attrs are a frozen dataclass deriving from Attrs.

Frozen + tuple-valued fields make attrs hashable, so structural hashing and the kernel cache
can key on them. Validation lives in each class's __post_init__, using the helpers here.
"""
import dataclasses

from ..errors import AttrsError, TypeInferenceError
from .node import Node


# Every Attrs subclass by class name (its type key "relay.attrs.<name>" in JSON): how load_json
# finds the class of saved attrs, and what relay.op's set_attrs_type_key looks up.
ATTRS_TYPES = {}


@dataclasses.dataclass(frozen=True)
class Attrs(Node):
    """Base class for op attributes. Subclasses are frozen dataclasses with defaults."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        known = ATTRS_TYPES.get(cls.__name__)
        # the first class of a name keeps it (a test's stand-in never shadows an op's attrs),
        # unless the same module defines it again (a re-run notebook cell, a reload)
        if known is None or known.__module__ == cls.__module__:
            ATTRS_TYPES[cls.__name__] = cls

    def keys(self):
        """The names of the attributes, in field order (as a dict's keys).

        Returns
        -------
        names : list of str
            The field names of the dataclass.
        """
        return [f.name for f in dataclasses.fields(self)]

    def __getitem__(self, key):
        return getattr(self, key)

    def items(self):
        """The (name, value) pairs of the attributes, in field order (as a dict's items).

        Returns
        -------
        items : list of tuple
            One (name, value) pair per field.
        """
        return [(k, getattr(self, k)) for k in self.keys()]

    def with_(self, **changes) -> "Attrs":
        """A copy with some attributes changed (the attrs are frozen, so this is how to vary them).

        Parameters
        ----------
        **changes
            New values by attribute name; they are validated as the constructor validates them.

        Returns
        -------
        attrs : Attrs
            The copy, of the same class.
        """
        return dataclasses.replace(self, **changes)


ALWAYS_PRINTED = "always_printed"   # dataclass field metadata key


def always_printed(default):
    """A field Relay declares without a default (reshape's newshape, cast's dtype, ...): the text
    format shows it whatever its value. `default` only lets the dataclass be built without it;
    the printer otherwise omits a field equal to its default, which would drop e.g. newshape=()."""
    return dataclasses.field(default=default, metadata={ALWAYS_PRINTED: True})


class DictAttrs(Node, dict):
    """Function attributes (e.g. {"Primitive": 1}); a dict whose keys can be read as fields."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __hash__(self):
        return hash(tuple(sorted((k, _hashable(v)) for k, v in self.items())))


def _hashable(v):
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


def attr_error(op_name: str, msg: str) -> TypeInferenceError:
    return TypeInferenceError(f"{op_name}: {msg}")


def check_choice(name: str, value, choices) -> None:
    """Raise AttrsError unless value is one of choices."""
    if value not in choices:
        raise AttrsError(f"attribute {name}={value!r} must be one of {list(choices)}")


def as_int_tuple(value, length: int = None, name: str = "value") -> tuple:
    """Normalize an int or sequence of ints to a tuple of Python ints (broadcast a scalar)."""
    if value is None:
        return None
    if isinstance(value, (int,)) or hasattr(value, "__index__") and not hasattr(value, "__len__"):
        value = (int(value),) * (length or 1)
    try:
        out = tuple(int(v) for v in value)
    except (TypeError, ValueError) as err:
        raise AttrsError(f"attribute {name} must be an int or a sequence of ints, got {value!r}") from err
    if length is not None and len(out) != length:
        raise AttrsError(f"attribute {name} must have {length} values, got {out}")
    return out
