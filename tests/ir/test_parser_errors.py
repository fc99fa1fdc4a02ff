"""Parse errors say where: source name, line and column, the offending line and a caret under it.

Every case is a small program with one mistake at a known position; the ParseError (or, for a
type error, the TypeInferenceError naming the expression's span) must point at it."""
import pytest

import relay_backend as relay
from relay_backend.errors import ParseError, TypeInferenceError

HEADER = '#[version = "0.0.5"]\n'


def _module(body: str) -> str:
    return HEADER + "def @main(%x: Tensor[(2, 3), float32]) {\n" + body + "\n}"


# (text, line, column, message fragment); line 1 is the version header
CASES = {
    "missing close paren": (_module("  add(%x, %x\n"), 5, 1, "unexpected `}`"),
    "unknown op": (_module("  nn.relux(%x)"), 3, 3, "operator `nn.relux` not found"),
    "undefined variable": (_module("  %0 = nn.relu(%x);\n  add(%0, %y)"), 4, 11,
                           "undefined variable `%y`"),
    "undefined graph binding": (_module("  add(%x, %3)"), 3, 11, "undefined graph binding `%3`"),
    "undefined global": (_module("  @helper(%x)"), 3, 3, "undefined global function `@helper`"),
    "undefined constructor": (_module("  match (%x) {\n    Nope(%a) => %a,\n  }"), 4, 5,
                              "undefined constructor `Nope`"),
    "undefined type": (HEADER + "def @main(%x: Lst[int32]) {\n  %x\n}", 2, 15, "undefined type `Lst`"),
    "literal out of range": (_module("  add(%x, 300u8)"), 3, 11, "does not fit in uint8"),
    "unknown attribute": (_module("  nn.softmax(%x, axes=1)"), 3, 3,
                          "`nn.softmax` has no attribute 'axes'"),
    "invalid attribute value": (_module('  nn.max_pool2d(%x, layout="NCHWx")'), 3, 3,
                                "invalid attributes for `nn.max_pool2d`"),
    "bad character": (_module("  add(%x, $)"), 3, 11, "unexpected character `$`"),
    "bad version": ('#[version = "0.0.4"]\ndef @main() { 1 }', 1, 1, "invalid semantic version"),
    "bad dtype": (HEADER + "def @main(%x: Tensor[(2), floaty]) { %x }", 2, 15, "unknown dtype"),
    "duplicate def": (HEADER + "def @f() { 1 }\ndef @f() { 2 }", 3, 5, "`@f` is defined twice"),
    "metadata values": (_module("  %x") + "\n#[metadata]\nmeta[relay.Constant][0] = float32[2] [1, 2, 3]",
                        6, 1, "needs 2 value(s), found 3"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_names_line_and_column(name):
    text, line, column, fragment = CASES[name]
    with pytest.raises(ParseError) as info:
        relay.parse(text, source_name="model.rly")
    err = info.value
    assert fragment in str(err)
    assert (err.source_name, err.line, err.column) == ("model.rly", line, column), str(err)
    message = str(err)
    assert message.startswith(f"model.rly:{line}:{column}: ")
    quoted, caret = message.split("\n")[1:3]
    assert quoted.strip() == text.split("\n")[line - 1].strip()
    assert caret.index("^") - quoted.index(quoted.strip()[0]) == column - 1 - (
        len(text.split("\n")[line - 1]) - len(text.split("\n")[line - 1].lstrip()))


def test_type_error_in_parsed_text_names_its_span():
    text = _module("  %0 = nn.relu(%x);\n  %1 = nn.dense(%0, %0);\n  add(%1, 1f)").replace(
        "%x: Tensor[(2, 3), float32]", "%x: Tensor[(2, 3), float32], %y: Tensor[(4), float32]")
    text = text.replace("add(%1, 1f)", "add(%1, %y)")
    with pytest.raises(TypeInferenceError) as info:
        relay.parse(text, source_name="typed.rly")
    err = info.value
    assert (err.span.source_name.name, err.span.line, err.span.column) == ("typed.rly", 5, 3)
    assert "at typed.rly:5:3" in str(err) and "add(%1, %y)\n" in str(err) and "^^^" in str(err)
    assert "Incompatible broadcast" in str(err)


def test_errors_are_relay_errors_not_lark_exceptions():
    for text in ("", "def", "#[version", "def @main( {", "fn (%x) { %x ", "meta[relay.Constant][0]"):
        with pytest.raises(ParseError):
            relay.parse_expr(text) if not text.startswith("def") else relay.parse(text)
