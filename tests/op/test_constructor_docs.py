"""The docstrings op/constructor_docs.py builds for table-made constructors: numpydoc sections
from the signature, a default noted, an unknown parameter refused at import."""
import inspect

import pytest
from docstring_parser import numpydoc

import relay_backend as relay
from relay_backend.errors import OpDefinitionError
from relay_backend.op.constructor_docs import constructor_doc, documented


def test_a_new_row_gets_parameters_and_returns_from_its_signature():
    def ctor(lhs, rhs):
        return None

    parsed = numpydoc.parse(constructor_doc("Elementwise something.", ctor))
    assert parsed.short_description == "Elementwise something."
    assert [(p.arg_name, p.type_name) for p in parsed.params] == [("lhs", "relay.Expr"), ("rhs", "relay.Expr")]
    assert all("broadcast" in p.description for p in parsed.params)
    assert parsed.returns.type_name == "relay.Expr"


def test_defaults_are_read_from_the_signature():
    @documented({"unbiased": ("bool", "Divide by N - 1.")})
    def ctor(data, axis=(1, 2), unbiased=True):
        """A reduction."""

    params = {p.arg_name: p.description for p in numpydoc.parse(ctor.__doc__).params}
    assert params["axis"].endswith("Defaults to (1, 2).")
    assert params["unbiased"] == "Divide by N - 1. Defaults to True."
    assert "Defaults" not in params["data"]


def test_a_parameter_without_a_meaning_is_refused():
    def ctor(data, widget=3):
        return None

    with pytest.raises(OpDefinitionError, match="widget"):
        constructor_doc("Something.", ctor)


@pytest.mark.parametrize("constructor", [relay.exp, relay.add, relay.sum, relay.argmax, relay.nn.relu,
                                         relay.logical_and, relay.mean_std])
def test_table_constructors_carry_the_generated_sections(constructor):
    parsed = numpydoc.parse(constructor.__doc__)
    assert [p.arg_name for p in parsed.params] == list(inspect.signature(constructor).parameters)
    assert parsed.returns is not None
