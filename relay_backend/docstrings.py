"""Numpydoc Parameters entries written once for the functions that share a parameter.

Functions that take the same parameter with the same meaning (the pooling ops' window
arguments, the workloads' `dtype` and `seed`, the type-variable queries' `expr` and `mod`) would
repeat one entry in every docstring. Instead each docstring writes what is its own, and
`shared_parameters(meanings)` completes it from one table, name -> (type, meaning): every
parameter the docstring's Parameters section leaves out gets the table's entry, in signature
order, with the default read from the signature (and the type marked optional where there is
one). `help()` shows the whole section; the source holds each shared meaning once. A parameter
described neither by the docstring nor by the table is an error at import, so a completed
docstring never lacks an entry:

    SEED = {"seed": ("int", "The seed of the random parameter values.")}

    @shared_parameters(SEED)
    def get_workload(batch_size=1, seed=0):
        '''The network with seeded random parameters.

        Parameters
        ----------
        batch_size : int, optional
            The batch size. Defaults to 1.
        '''

documents `seed : int, optional` as "The seed of the random parameter values. Defaults to 0."
below `batch_size`. The layout is TVM's: `name : type`, the meaning indented below it.
"""
import inspect
import re
import textwrap

from .errors import RelayError

WIDTH = 88   # the wrap width of an entry's meaning (pydoc indents it by four more)
_UNDERLINE = re.compile(r"-{3,}")
_SKIPPED = {"self", "cls"}
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def entry(name: str, type_name: str, meaning: str) -> str:
    """One numpydoc entry: `name : type_name`, then the meaning wrapped and indented below it.

    Parameters
    ----------
    name : str
        The parameter (or result) name.
    type_name : str
        Its type, as the reader should read it ("relay.Expr", "int, optional").
    meaning : str
        What it is; wrapped at WIDTH columns.

    Returns
    -------
    text : str
        The entry, with no trailing newline.
    """
    body = textwrap.fill(meaning, width=WIDTH, initial_indent="    ", subsequent_indent="    ")
    return f"{name} : {type_name}\n{body}"


def section(title: str, entries) -> str:
    """A numpydoc section: `title`, its underline, then one entry per (name, type, meaning).

    Parameters
    ----------
    title : str
        The section's title ("Parameters", "Returns").
    entries : iterable of tuple
        The (name, type, meaning) of each entry, in order.

    Returns
    -------
    text : str
        The section, with no trailing newline.
    """
    body = "\n".join(entry(*item) for item in entries)
    return f"{title}\n{'-' * len(title)}\n{body}"


def default_note(parameter: inspect.Parameter) -> str:
    """" Defaults to <value>." for a parameter with a default, else "" (appended to a meaning).

    Parameters
    ----------
    parameter : inspect.Parameter
        The parameter, from the function's signature.

    Returns
    -------
    note : str
        The sentence, with a leading space, or the empty string.
    """
    if parameter.default is inspect.Parameter.empty:
        return ""
    return f" Defaults to {parameter.default!r}."


def _split_sections(doc: str):
    """(the text before the first section, [[title, body]...]) of a cleaned docstring."""
    lines = doc.splitlines()
    starts = [i for i in range(len(lines) - 1)
              if lines[i].strip() and not lines[i][0].isspace() and _UNDERLINE.fullmatch(lines[i + 1].strip())]
    head = "\n".join(lines[:starts[0] if starts else len(lines)]).strip()
    sections = []
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        sections.append([lines[start].strip(), "\n".join(lines[start + 2:end]).strip("\n")])
    return head, sections


def _written_entries(body: str) -> list:
    """[(names, text)] of a Parameters section's body: an entry starts at an unindented line,
    and "a, b : int" names both a and b (a leading * or ** is dropped from a name)."""
    entries = []
    for line in body.splitlines():
        if line and not line[0].isspace():
            names = [name.strip().lstrip("*") for name in line.split(" : ")[0].split(",")]
            entries.append((names, [line]))
        elif entries:
            entries[-1][1].append(line)
    return [(names, "\n".join(lines).rstrip()) for names, lines in entries]


def _optional_marked(type_name: str, has_default: bool) -> str:
    """The table's type with ", optional" exactly when the parameter has a default (one table
    serves constructors that give the parameter a default and ones that require it)."""
    bare = re.sub(r",\s*optional\b", "", type_name).strip()
    return f"{bare}, optional" if has_default else bare


def _parameter_entries(function, written: list, meanings: dict) -> list:
    """The entry texts of the completed Parameters section, in signature order."""
    by_name = {name: number for number, (names, _) in enumerate(written) for name in names}
    used, texts = set(), []
    for parameter in inspect.signature(function).parameters.values():
        name = parameter.name
        if name in _SKIPPED or name.startswith("_"):
            continue
        if name in by_name:
            if by_name[name] not in used:
                used.add(by_name[name])
                texts.append(written[by_name[name]][1])
        elif name in meanings:
            type_name, meaning = meanings[name]
            type_name = _optional_marked(type_name, parameter.default is not inspect.Parameter.empty)
            stars = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
            texts.append(entry(stars.get(parameter.kind, "") + name, type_name,
                               meaning + default_note(parameter)))
        elif parameter.kind not in _VARIADIC:
            raise RelayError(f"{function.__qualname__}: parameter {name!r} is described neither by its "
                        f"docstring's Parameters section nor by the shared meanings; add it to one "
                        f"of them")
    texts += [text for number, (_, text) in enumerate(written) if number not in used]
    return texts


def complete_doc(doc, function, meanings: dict, returns=None) -> str:
    """A docstring completed with the shared entries of the parameters it leaves out.

    Parameters
    ----------
    doc : str or None
        The docstring as written: a summary, and any sections of its own (a Parameters section
        with the entries that differ from the table's).
    function : callable
        The function or class; its signature gives the parameter names, order and defaults.
    meanings : dict
        name -> (type, meaning) for the shared parameters.
    returns : tuple of str, optional
        The (name, type, meaning) of a Returns entry, added when the docstring has no Returns
        section. Defaults to None (no entry added).

    Returns
    -------
    doc : str
        The completed docstring: the summary, then Parameters, Returns and the other sections.
    """
    head, sections = _split_sections(inspect.cleandoc(doc or ""))
    titles = [title for title, _ in sections]
    written = _written_entries(sections[titles.index("Parameters")][1]) if "Parameters" in titles else []
    parameters = ["Parameters", "\n".join(_parameter_entries(function, written, meanings))]
    if "Parameters" in titles:
        sections[titles.index("Parameters")] = parameters
    elif parameters[1]:
        sections.insert(0, parameters)
    if returns is not None and "Returns" not in titles:
        after = [title for title, _ in sections].index("Parameters") + 1 if parameters[1] else 0
        sections.insert(after, ["Returns", entry(*returns)])
    parts = [head] + [f"{title}\n{'-' * len(title)}\n{body}" for title, body in sections]
    return "\n\n".join(part for part in parts if part) + "\n"


def shared_parameters(meanings: dict, returns=None):
    """Decorator: complete a function's (or class's) docstring with the entries of `meanings`
    for the parameters it does not describe itself (see the module docstring).

    Parameters
    ----------
    meanings : dict
        name -> (type, meaning) for the shared parameters.
    returns : tuple of str, optional
        The (name, type, meaning) of a Returns entry for a docstring without one. Defaults to
        None.

    Returns
    -------
    decorate : callable
        Takes the function or class and returns it with its docstring completed.
    """
    def decorate(function):
        function.__doc__ = complete_doc(function.__doc__, function, meanings, returns)
        return function
    return decorate


__all__ = ["complete_doc", "default_note", "entry", "section", "shared_parameters", "WIDTH"]
