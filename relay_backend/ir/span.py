"""Source locations: `SourceName`, `Span` and how an error message shows one.

A Span says where a node came from: a text file the parser read (name, 1-based line and
column of the start and the end), or a model the ONNX frontend imported (the node's name, line
0). Spans ride along on expressions as an optional `span` field; passes that rebuild a node
keep its span, structural equality and hashing ignore it (as TVM's do).

The parser registers the text of each source it reads (`register_source`), so an error can
quote the offending line with a caret under the column; a span from elsewhere prints as its
name and position only.
"""
import threading

_SOURCES = {}                 # source name -> list of lines (the latest text read under that name)
_SOURCES_LOCK = threading.Lock()
_MAX_SOURCES = 256            # keep memory bounded: forget the oldest texts beyond this many


class SourceName:
    """The name of a source (tvm.ir.SourceName): a file path, "from_string", an ONNX node.

    Parameters
    ----------
    name : str
        The name.
    """

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = str(name)

    def __eq__(self, other) -> bool:
        return isinstance(other, SourceName) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("SourceName", self.name))

    def __repr__(self) -> str:
        return f"SourceName({self.name!r})"


class Span:
    """A region of a source (tvm.ir.Span).

    Lines and columns are 1-based; line 0 means "no position inside the source" (an imported
    model's node).

    Parameters
    ----------
    source_name : SourceName or str
        The source the region lies in.
    line : int
        The line the region starts on.
    end_line : int
        The line it ends on.
    column : int
        The column it starts at.
    end_column : int
        The column it ends at.
    """

    __slots__ = ("source_name", "line", "end_line", "column", "end_column")

    def __init__(self, source_name, line: int, end_line: int, column: int, end_column: int):
        if not isinstance(source_name, SourceName):
            source_name = SourceName(source_name)
        self.source_name = source_name
        self.line, self.end_line = int(line), int(end_line)
        self.column, self.end_column = int(column), int(end_column)

    def merge(self, other: "Span") -> "Span":
        """The smallest span covering this one and another of the same source.

        Parameters
        ----------
        other : Span or None
            The other span; None gives this span.

        Returns
        -------
        span : Span
            The covering span.
        """
        if other is None:
            return self
        start = min((self.line, self.column), (other.line, other.column))
        end = max((self.end_line, self.end_column), (other.end_line, other.end_column))
        return Span(self.source_name, start[0], end[0], start[1], end[1])

    def __eq__(self, other) -> bool:
        return isinstance(other, Span) and all(getattr(self, k) == getattr(other, k) for k in Span.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, k) for k in Span.__slots__))

    def __repr__(self) -> str:
        return f"Span({self.source_name.name!r}, {self.line}:{self.column}-{self.end_line}:{self.end_column})"

    def __str__(self) -> str:
        if self.line <= 0:
            return self.source_name.name
        return f"{self.source_name.name}:{self.line}:{self.column}"


def register_source(name: str, text: str) -> None:
    """Remember `text` under `name` so errors with spans into it can quote their line."""
    with _SOURCES_LOCK:
        _SOURCES.pop(name, None)
        _SOURCES[name] = text.split("\n")
        while len(_SOURCES) > _MAX_SOURCES:
            _SOURCES.pop(next(iter(_SOURCES)))


def source_line(name: str, line: int):
    """Line `line` (1-based) of the registered source `name`, or None."""
    lines = _SOURCES.get(name)
    if lines is None or not 1 <= line <= len(lines):
        return None
    return lines[line - 1]


def caret_excerpt(line_text: str, column: int, width: int = 1) -> str:
    """The offending line and a caret (or a run of carets `width` long) under `column`."""
    shown = line_text.expandtabs(1)
    if len(shown) > 200:   # a huge line (e.g. inline data): show the part around the column
        start = max(0, column - 80)
        shown, column = ("..." + shown[start:start + 160] + "..."), column - start + 3
    return f"    {shown}\n    {' ' * max(column - 1, 0)}{'^' * max(width, 1)}"


def describe_span(span: Span) -> str:
    """How an error names a span: `at file:line:col` plus the line and a caret when the source
    text is known; `at <name>` for a span without a position (e.g. an ONNX node)."""
    if span is None:
        return ""
    if span.line <= 0:
        return f"at {span.source_name.name}"
    text = f"at {span}"
    line = source_line(span.source_name.name, span.line)
    if line is not None:
        width = span.end_column - span.column if span.end_line == span.line else 1
        text += "\n" + caret_excerpt(line, span.column, width)
    return text


def attach_span(error: Exception, span: Span) -> Exception:
    """`error` with `span` recorded on it and named at the end of its message, once: the
    innermost location wins, so an error re-raised through enclosing nodes keeps it."""
    if span is None or getattr(error, "span", None) is not None:
        return error
    error.span = span
    if error.args and isinstance(error.args[0], str):
        error.args = (f"{error.args[0]}\n  {describe_span(span)}", *error.args[1:])
    return error


def spanned_ancestor(stack, span_of=lambda node: getattr(node, "span", None)):
    """The span of the innermost node on a traversal `stack` (innermost last) that has one."""
    for node in reversed(stack):
        span = span_of(node)
        if span is not None:
            return span
    return None


__all__ = ["SourceName", "Span", "register_source", "source_line", "caret_excerpt", "describe_span",
           "attach_span", "spanned_ancestor"]
