"""Keyword checking for operator constructors: a misspelled keyword names the valid ones.

`relay.nn.conv2d(x, w, stride=(2, 2))` would otherwise fail with Python's bare "unexpected
keyword argument"; `checked_keywords(fn)` turns that into an IRConstructionError (also a
TypeError) that suggests the closest valid keyword and lists them all. op/__init__.py and
op/nn/__init__.py apply it to every public constructor, so a new op is covered without new code.
"""
import difflib
import functools
import inspect

from ..errors import IRConstructionError


def checked_keywords(fn):
    """`fn` wrapped so an unknown keyword argument raises IRConstructionError naming the valid
    ones (functions taking **kwargs are returned unchanged). The wrapper has checks_keywords=True."""
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return fn
    valid = [p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                  inspect.Parameter.KEYWORD_ONLY)]
    valid_set = frozenset(valid)
    op_name = f"{_namespace(fn)}{fn.__name__}"

    @functools.wraps(fn)
    def constructor(*args, **kwargs):
        for key in kwargs:
            if key not in valid_set:
                raise IRConstructionError(_unknown_keyword_message(op_name, key, valid))
        return fn(*args, **kwargs)

    constructor.checks_keywords = True
    return constructor


def _namespace(fn) -> str:
    """"nn." for constructors defined under op/nn/, "" otherwise (the name a user typed)."""
    return "nn." if ".op.nn." in fn.__module__ else ""


def _unknown_keyword_message(op_name: str, key: str, valid: list) -> str:
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{op_name}: unknown keyword argument {key!r}{hint}; valid keywords: {', '.join(valid)}"


def check_namespace(namespace, names) -> None:
    """Replace each public constructor `names` of module `namespace` by its checked version."""
    for name in names:
        fn = getattr(namespace, name)
        if inspect.isfunction(fn) and not getattr(fn, "checks_keywords", False):
            setattr(namespace, name, checked_keywords(fn))


__all__ = ["checked_keywords", "check_namespace"]
