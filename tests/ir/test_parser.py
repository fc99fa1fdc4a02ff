"""relay.parse / parse_expr read TVM v0.18's text format and everything astext() prints.

Each case writes a program by hand (as a Relay user would, in TVM's syntax), parses it, and
checks what it means: the IR it builds (against the same program built in Python, structurally)
and what it computes (debug interpreter against numpy)."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.ir import Constructor, TypeCall, TypeVar
from relay_backend.ir.parser.literals import make_dim

HEADER = '#[version = "0.0.5"]\n'


def run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def test_conv_relu_with_call_attrs_matches_the_python_build():
    mod = relay.parse(HEADER + """
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  nn.relu(%0)
}""")
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    expected = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(
        x, w, padding=(1, 1, 1, 1), channels=4, kernel_size=(3, 3))),
        ret_type=relay.TensorType((1, 4, 8, 8)))
    relay.assert_structural_equal(mod["main"], expected)
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 4, 8, 8))   # type-checked


def test_infix_operators_follow_tvm_precedence():
    expr = relay.parse_expr("%a + %b * %c - %d / %e < %f == %g")
    a, b, c, d, e, f, g = (relay.var(n) for n in "abcdefg")
    expected = relay.equal(relay.less(relay.subtract(relay.add(a, relay.multiply(b, c)),
                                                     relay.divide(d, e)), f), g)
    relay.assert_structural_equal(expr, expected, map_free_vars=True)


def test_literals_carry_their_dtypes():
    cases = {"1": ("int32", 1), "3000000000": ("int64", 3000000000), "-7i64": ("int64", -7),
             "200u8": ("uint8", 200), "1f": ("float32", 1.0), "2.5": ("float32", 2.5),
             "-1e-05f": ("float32", -1e-05), "0.5f64": ("float64", 0.5), "3f16": ("float16", 3.0),
             "True": ("bool", True), "False": ("bool", False)}
    for text, (dtype, value) in cases.items():
        data = relay.parse_expr(text).data.numpy()
        assert str(data.dtype) == dtype and data == np.array(value, dtype), text
    assert np.isinf(relay.parse_expr("-inff").data.numpy()) and np.isnan(relay.parse_expr("nanf").data.numpy())


def test_let_if_tuples_projection_and_closures():
    mod = relay.parse(HEADER + """
def @main(%x: Tensor[(3), float32], %flag: bool) -> Tensor[(3), float32] {
  let %double = fn (%v: Tensor[(3), float32]) { %v * 2f };
  let %pair: (Tensor[(3), float32], Tensor[(3), float32]) = (%x, %double(%x));
  if (%flag) {
    %pair.1
  } else {
    let %t = (%pair.0,);
    %t.0 - 1f
  }
}""")
    x = np.array([1.0, -2.0, 3.5], "float32")
    np.testing.assert_allclose(run(mod, x, True).numpy(), x * 2)
    np.testing.assert_allclose(run(mod, x, False).numpy(), x - 1)


def test_adt_definitions_match_with_nested_patterns_and_recursion():
    mod = relay.parse(HEADER + """
type Tree[A] {
  Leaf,
  Node(A, Tree[A], Tree[A]),
}

def @total(%t: Tree[int32]) -> int32 {
  match (%t) {
    Leaf => 0,
    Node(%v, Leaf, Leaf) => %v,
    Node(%v, %l, %r) => %v + @total(%l) + @total(%r),
  }
}

def @main() -> int32 {
  @total(Node(1, Node(2, Leaf, Leaf), Node(3, Node(4, Leaf, Leaf), Leaf)))
}""")
    tree, leaf, node = mod.get_type("Tree")
    assert isinstance(leaf, Constructor) and [c.name_hint for c in (leaf, node)] == ["Leaf", "Node"]
    assert isinstance(mod.type_definitions[tree].type_vars[0], TypeVar)
    assert run(mod).numpy() == 10


def test_match_without_parentheses_partial_match_and_tuple_patterns():
    mod = relay.parse(HEADER + """
type Option[A] { Some(A), None }

def @first_some(%p: (Option[int32], Option[int32])) -> int32 {
  match %p {
    (Some(%a), _) => %a,
    (None, Some(%b: int32)) => %b,
    _ => -1
  }
}

def @unwrap(%o: Option[int32]) -> int32 {
  match? (%o) {
    Some(%v) => %v
  }
}

def @main() -> (int32, int32, int32) {
  (@first_some((None, Some(5))), @first_some((None, None)), @unwrap(Some(9)))
}""")
    assert [int(v.numpy()) for v in run(mod)] == [5, -1, 9]
    assert mod["unwrap"].body.complete is False and mod["first_some"].body.complete is True
    # an annotated pattern variable keeps its annotation through printing
    assert "Some(%b: int32)" in mod.astext()
    relay.assert_structural_equal(relay.parse(mod.astext()), mod)


def test_references_and_sequencing():
    mod = relay.parse(HEADER + """
def @main(%x: float32) -> float32 {
  let %r = ref(%x);
  ref_write(%r, ref_read(%r) + 1f);
  ref_write(%r, ref_read(%r) * 3f);
  ref_read(%r)
}""")
    assert run(mod, np.float32(2)).numpy() == 9


def test_type_annotations_any_tuples_functions_and_polymorphism():
    mod = relay.parse(HEADER + """
def @apply[A, B](%f: fn (A) -> B, %x: A) -> B {
  %f(%x)
}

def @main(%x: Tensor[(?, 2), float32]) -> Tensor[(?, 2), float32] {
  @apply(fn (%y: Tensor[(?, 2), float32]) { nn.relu(%y) }, %x)
}""")
    apply_t = mod["apply"]
    a, b = apply_t.type_params
    assert apply_t.params[0].type_annotation == relay.FuncType([a], b)
    assert mod["main"].params[0].type_annotation == relay.TensorType((relay.Any(), 2))
    x = np.array([[1, -1], [-2, 3], [0.5, -0.5]], "float32")
    np.testing.assert_allclose(run(mod, x).numpy(), np.maximum(x, 0))


def test_symbolic_dims_share_one_size_var_per_name():
    size_vars = {}
    n1, n2, m = make_dim("n", size_vars), make_dim("n", size_vars), make_dim("m", size_vars)
    assert n1 is n2 and n1 is not m and type(n1).__name__ == "SizeVar" and n1.name == "n"
    assert make_dim("?", size_vars) == relay.Any() and make_dim("7", size_vars) == 7
    text = HEADER + "def @main(%x: Tensor[(n, 3), float32], %y: Tensor[(n), int32]) { %x }"
    try:
        mod = relay.parse(text)
    except relay.errors.ParseError as err:   # tensor types without size variables: say where
        assert err.line == 2 and "dimension" in str(err)
    else:
        xdim = mod["main"].params[0].type_annotation.shape[0]
        assert xdim is mod["main"].params[1].type_annotation.shape[0]


def test_function_attrs_free_vars_and_tvm_parser_forms():
    fn = relay.parse_expr("fn (%x: float32, Primitive=1, Composite=\"mine\") { %x }")
    assert dict(fn.attrs) == {"Primitive": 1, "Composite": "mine"}
    expr = relay.parse_expr("free_var %y: Tensor[(2), float32];\nadd(%y, %y)")
    assert expr.args[0] is expr.args[1] and expr.args[0].type_annotation == relay.TensorType((2,))
    text = HEADER + "def @main(%x: int32) { %x }"
    for reader in (relay.parse, relay.fromtext, relay.parser.parse):
        assert reader(text)["main"].params[0].type_annotation == relay.TensorType((), "int32")


def test_comments_and_trailing_commas():
    mod = relay.parse(HEADER + """
// a line comment
def @main(%x: Tensor[(2,), float32], /* a block comment */) {
  (%x, %x,).1 /* ty=Tensor[(2), float32] */
}""")
    x = np.array([1, 2], "float32")
    np.testing.assert_allclose(run(mod, x).numpy(), x)


def test_metadata_section_round_trips_constant_values():
    values = np.array([[0.1, -2.5e-8, np.float32(1) / 3], [np.inf, -np.inf, 7]], "float32")
    ints = np.array([-(2 ** 63), 2 ** 63 - 1], "int64")
    x = relay.var("x", shape=(2, 3))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(
        [x], relay.Tuple([relay.add(x, relay.const(values)), relay.const(ints, "int64")]))))
    text = mod.astext(show_meta_data=True)
    assert "#[metadata]" in text
    back = relay.parse(text)
    relay.assert_structural_equal(back, mod)   # constants compare by their bytes
    np.testing.assert_array_equal(back["main"].body.fields[1].data.numpy(), ints)


def test_text_without_its_metadata_can_take_a_meta_table():
    const = relay.const(np.arange(6, dtype="float32").reshape(2, 3))
    x = relay.var("x", shape=(2, 3))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], relay.add(x, const))))
    text = mod.astext()   # no metadata section
    with pytest.raises(relay.errors.ParseError, match=r"meta\[relay.Constant\]\[0\].*show_meta_data"):
        relay.parse(text)
    back = relay.parse(text, init_meta_table={"relay.Constant": [const]})
    relay.assert_structural_equal(back, mod)


def test_init_module_names_are_visible():
    base = relay.parse(HEADER + """
type Box[A] { Box(A) }
def @unbox[A](%b: Box[A]) -> A { match (%b) { Box(%v) => %v } }""")
    mod = relay.parse(HEADER + "def @main() -> int32 { @unbox(Box(41)) + 1 }", init_module=base)
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == ["main", "unbox"]
    assert run(mod).numpy() == 42
    assert isinstance(mod["main"].checked_type.ret_type, relay.TensorType)
    assert isinstance(base["unbox"].params[0].type_annotation, TypeCall)


def test_deeply_nested_text_parses_without_recursion_limits():
    depth = 1500   # past Python's recursion limit
    body = "%x"
    for _ in range(depth):
        body = f"if (%c) {{ {body} }} else {{ %x }}"
    expr = relay.parse_expr(body)
    for _ in range(depth):
        assert isinstance(expr, relay.If)
        expr = expr.true_branch
    chain = ";\n".join(f"%{i + 1} = add(%{i}, 1f)" for i in range(2000))
    mod = relay.parse(HEADER + f"def @main(%a: float32) {{\n%0 = %a;\n{chain};\n%2000\n}}")
    assert run(mod, np.float32(0)).numpy() == 2000
