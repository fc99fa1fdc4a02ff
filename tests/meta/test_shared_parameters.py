"""relay_backend.docstrings: a docstring completed from a shared table of parameter meanings keeps
its own entries, gains the table's for the rest in signature order (with the signature's
defaults), and an undescribed parameter is refused at import."""
import inspect

import pytest
from docstring_parser import numpydoc

from relay_backend.docstrings import complete_doc, shared_parameters
from relay_backend.errors import RelayError

SHARED = {"dtype": ("str", "The dtype of the weights."),
          "seed": ("int", "The seed of the random values.")}


def _params(doc):
    """(name, type as written, meaning) per entry (the parser reads ", optional" off the type)."""
    return [(p.arg_name, (p.type_name or "") + (", optional" if p.is_optional else ""), p.description)
            for p in numpydoc.parse(doc).params]


def test_left_out_parameters_get_the_shared_entry_in_signature_order():
    @shared_parameters(SHARED)
    def workload(batch_size=1, dtype="float32", layers=18, seed=0):
        """A network.

        Parameters
        ----------
        batch_size : int, optional
            The batch size. Defaults to 1.
        layers : int, optional
            The depth. Defaults to 18.

        Returns
        -------
        workload : tuple
            (module, params).
        """

    assert _params(workload.__doc__) == [
        ("batch_size", "int, optional", "The batch size. Defaults to 1."),
        ("dtype", "str, optional", "The dtype of the weights. Defaults to 'float32'."),
        ("layers", "int, optional", "The depth. Defaults to 18."),
        ("seed", "int, optional", "The seed of the random values. Defaults to 0.")]
    parsed = numpydoc.parse(workload.__doc__)
    assert parsed.short_description == "A network."
    assert parsed.returns.type_name == "tuple"


def test_a_docstring_without_parameters_gets_the_section_before_its_other_sections():
    def make(seed):
        """Make one.

        Returns
        -------
        thing : object
            The thing.

        Notes
        -----
        Something to know.
        """

    doc = complete_doc(make.__doc__, make, SHARED)
    assert [line for line in doc.splitlines() if line in ("Parameters", "Returns", "Notes")] == [
        "Parameters", "Returns", "Notes"]
    assert _params(doc) == [("seed", "int", "The seed of the random values.")]
    assert "Something to know." in doc


def test_returns_is_added_only_when_missing():
    returns = ("result", "relay.Expr", "The call.")

    def bare(seed=0):
        """Bare."""

    def own(seed=0):
        """Own.

        Returns
        -------
        value : int
            Its own result.
        """

    assert numpydoc.parse(complete_doc(bare.__doc__, bare, SHARED, returns)).returns.type_name == "relay.Expr"
    assert numpydoc.parse(complete_doc(own.__doc__, own, SHARED, returns)).returns.type_name == "int"


def test_variadic_and_combined_entries_are_kept():
    def call(func_name, *args, dtype=None, **kwargs):
        """Call.

        Parameters
        ----------
        func_name, other : str
            Names.
        *args
            Positional inputs.
        **kwargs
            Inputs by name.
        """

    names = [name for name, _, _ in _params(complete_doc(call.__doc__, call, SHARED))]
    assert names == ["func_name, other", "*args", "dtype", "**kwargs"]


def test_a_shared_variadic_entry_keeps_its_stars():
    def run(*args, **kwargs):
        """Run."""

    shared = {"args": ("NDArray", "Inputs in order."), "kwargs": ("NDArray", "Inputs by name.")}
    assert _params(complete_doc(run.__doc__, run, shared)) == [
        ("*args", "NDArray", "Inputs in order."), ("**kwargs", "NDArray", "Inputs by name.")]


def test_a_class_is_completed_from_its_constructor():
    @shared_parameters(SHARED)
    class Network:
        """A network."""

        def __init__(self, dtype="float16"):
            self.dtype = dtype

    assert _params(inspect.getdoc(Network)) == [
        ("dtype", "str, optional", "The dtype of the weights. Defaults to 'float16'.")]


def test_an_undescribed_parameter_is_refused_naming_it():
    def widget(seed, colour):
        """A widget."""

    with pytest.raises(RelayError, match="widget: parameter 'colour'"):
        complete_doc(widget.__doc__, widget, SHARED)


def test_a_required_parameter_is_not_marked_optional_by_the_table():
    # one table serves constructors where the parameter has a default and where it has none
    shared = {"pool_size": ("int or tuple of int, optional", "The window.")}

    def with_default(pool_size=(1, 1)):
        """Pool."""

    def required(pool_size):
        """Pool."""

    assert _params(complete_doc(with_default.__doc__, with_default, shared)) == [
        ("pool_size", "int or tuple of int, optional", "The window. Defaults to (1, 1).")]
    assert _params(complete_doc(required.__doc__, required, shared)) == [
        ("pool_size", "int or tuple of int", "The window.")]
