"""Symbolic dims survive the text format and the JSON form: what astext() prints for a program
over size variables (`n`, `(n + 2) // 3`, `min(n, m)`, `int64(n)`, `?`) parses back to the same
program, save_json/load_json keep the dims and the sharing of their variables, and a malformed
dim in text is a ParseError saying what is wrong."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te, tir
from relay_backend.errors import ParseError
from relay_backend.ir import load_json, save_json
from relay_backend.ir.dims import dim_vars
from relay_backend.ir.structural import structural_equal

HEADER = '#[version = "0.0.5"]\n'


def _symbolic_module():
    n, m = te.size_var("n"), te.size_var("m")
    x = relay.var("x", shape=(n, 3))
    y = relay.var("y", shape=((n + 2) // 3, relay.Any(), m * 2 + 1))
    z = relay.var("z", shape=(tir.min(n, m), tir.max(m, 4), n % (m + 1), tir.Cast("int64", n) * 2,
                              n - m + 1), dtype="int32")
    body = relay.Tuple([relay.nn.relu(x), relay.sum(y, axis=1), relay.shape_of(z)])
    return relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, y, z], body)))


def _size_var_of(mod, param: int, dim: int):
    return mod["main"].params[param].type_annotation.shape[dim]


def test_astext_of_a_symbolic_program_parses_back_to_the_same_program():
    mod = _symbolic_module()
    text = mod.astext()
    for shown in ("Tensor[(n, 3), float32]", "Tensor[((n + 2) // 3, ?, m * 2 + 1), float32]",
                  "min(n, m)", "int64(n) * 2", "n % (m + 1)"):
        assert shown in text, shown
    back = relay.transform.InferType()(relay.parse(text))
    relay.assert_structural_equal(back, mod)
    assert back.astext() == text
    # one size variable per name in a parse: x's n is the n inside y's first dim
    n, y0 = _size_var_of(back, 0, 0), _size_var_of(back, 1, 0)
    assert isinstance(n, tir.SizeVar) and n.name == "n" and any(v is n for v in dim_vars(y0))


def test_parsed_symbolic_program_runs_with_sizes_bound_at_run_time():
    mod = relay.parse(HEADER + """
def @main(%x: Tensor[(n, 3), float32], %y: Tensor[(n * 2 - 1, ?), float32]) {
  (nn.relu(%x), sum(%y, axis=[1]))
}""")
    rng = np.random.default_rng(0)
    for size in (1, 4):
        x = rng.standard_normal((size, 3)).astype("float32")
        y = rng.standard_normal((2 * size - 1, 5)).astype("float32")
        for kind in ("debug", "vm"):
            relu, total = relay.create_executor(kind, mod=mod).evaluate()(x, y)
            np.testing.assert_allclose(relu.numpy(), np.maximum(x, 0), rtol=1e-6)
            np.testing.assert_allclose(total.numpy(), y.sum(axis=1), rtol=1e-5)
    bad_y = np.zeros((4, 5), "float32")           # n = 2 from x, so y needs 3 rows
    with pytest.raises(relay.errors.InputError):
        relay.create_executor("vm", mod=mod).evaluate()(np.zeros((2, 3), "float32"), bad_y)


def test_dim_precedence_and_negative_operands_read_as_printed():
    parsed = relay.parse_expr(
        "free_var %a: Tensor[(n - 2 * m + 1, (n - 1) // 2 % 5, n + (-1), 12 // 4 * 2), int8];\n%a")
    n, m = te.size_var("n"), te.size_var("m")
    expected = relay.TensorType((n - 2 * m + 1, (n - 1) // 2 % 5, n - 1, 6), "int8")
    assert structural_equal(parsed.type_annotation, expected, map_free_vars=True)


@pytest.mark.parametrize("dim, match", [
    ("n + ?", r"`\?`.*cannot appear"),
    ("foo(n)", r"unknown dim function foo"),
    ("min(n)", r"unknown dim function min"),
    ("n // 0", r"divides by 0"),
    ("n - n - 1", r"must be >= 0"),
    ("-3", r"must be >= 0"),
])
def test_malformed_dims_are_parse_errors(dim, match):
    with pytest.raises(ParseError, match=match):
        relay.parse(HEADER + f"def @main(%x: Tensor[({dim}, 2), float32]) {{ %x }}")


def test_json_round_trip_keeps_symbolic_dims_and_shares_their_variables():
    mod = _symbolic_module()
    back = load_json(save_json(mod))
    relay.assert_structural_equal(back, mod)
    assert back.astext() == mod.astext()
    n_x, y0 = _size_var_of(back, 0, 0), _size_var_of(back, 1, 0)
    assert isinstance(n_x, tir.SizeVar) and any(v is n_x for v in dim_vars(y0)), "n in y's dim is the n of x's type"


def test_a_size_variable_that_is_not_int32_shows_its_dtype_and_parses_back():
    """Relay keeps a size variable's dtype (TVM's printer puts every tir.Var in the metadata, with its
    dtype; here the name is printed, so a non-int32 one carries `: dtype`). An int32 one prints
    bare, and a constant too big for int32 carries Relay's `i64` suffix, as TVM prints an int64
    IntImm."""
    n, m = te.var("n", "int64"), te.size_var("m")
    x = relay.var("x", shape=(n, m, 3))
    y = relay.var("y", shape=(n * 2, 3_000_000_000))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, y], relay.Tuple([x, y]))))
    text = mod.astext()
    assert "Tensor[(n: int64, m, 3), float32]" in text, text
    assert "Tensor[((n: int64) * 2i64, 3000000000i64), float32]" in text, text
    back = relay.parse(text)
    parsed = _size_var_of(back, 0, 0)
    assert parsed.dtype == "int64" and parsed.name == "n"
    assert _size_var_of(back, 0, 1).dtype == "int32"
    assert any(v is parsed for v in dim_vars(_size_var_of(back, 1, 0)))
    assert relay.transform.InferType()(back).astext() == text


def test_one_name_with_two_dtypes_is_a_parse_error():
    with pytest.raises(ParseError, match="size variable `n` is int32 here but int64 elsewhere"):
        relay.parse(HEADER + "def @main(%x: Tensor[(n: int64), float32], %y: Tensor[(n), float32]) { %x }")
