"""astext / module_astext: exact text of small programs (types via bind_type, no InferType needed)."""
import dataclasses

import numpy as np
import pytest

from relay_backend import ir
from relay_backend.ir import (Call, Clause, Constructor, Function, GlobalTypeVar, GlobalVar, If,
                              IRModule, Let, Match, Op, PatternConstructor, PatternVar,
                              PatternWildcard, RefCreate, RefRead, RefWrite, TensorType, Tuple,
                              TupleGetItem, TypeCall, TypeData, TypeVar, Var, const, var)
from relay_backend.ir.expr import bind_type

HEADER = '#[version = "0.0.5"]\n'


@dataclasses.dataclass(frozen=True)
class Conv2DAttrs(ir.Attrs):
    """Field order and defaults as tvm's Conv2DAttrs (a local stand-in: no registry needed)."""
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str = ""
    out_dtype: str = ""


def conv_relu_module():
    x = var("x", shape=(1, 3, 32, 32))
    w = var("w", shape=(16, 3, 3, 3))
    out_t = TensorType((1, 16, 32, 32))
    conv = bind_type(Call(Op("nn.conv2d"), [x, w], Conv2DAttrs(padding=(1, 1, 1, 1), channels=16,
                                                               kernel_size=(3, 3))), out_t)
    relu = bind_type(Call(Op("nn.relu"), [conv]), out_t)
    return IRModule.from_expr(Function([x, w], relu, ret_type=out_t))


CONV_RELU_TEXT = HEADER + """\
def @main(%x: Tensor[(1, 3, 32, 32), float32], %w: Tensor[(16, 3, 3, 3), float32]) -> Tensor[(1, 16, 32, 32), float32] {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]) /* ty=Tensor[(1, 16, 32, 32), float32] */;
  nn.relu(%0) /* ty=Tensor[(1, 16, 32, 32), float32] */
}"""


def test_conv_relu_module_text():
    mod = conv_relu_module()
    assert mod.astext() == CONV_RELU_TEXT
    assert str(mod) == CONV_RELU_TEXT
    assert conv_relu_module().astext() == CONV_RELU_TEXT  # deterministic across builds


def test_real_conv2d_op_prints_the_same_attrs():
    nn = pytest.importorskip("relay_backend.op.nn")
    if not hasattr(nn, "conv2d"):
        pytest.skip("op.nn.conv2d not registered yet")
    x, w = var("x", shape=(1, 3, 32, 32)), var("w", shape=(16, 3, 3, 3))
    text = nn.conv2d(x, w, padding=(1, 1), channels=16, kernel_size=(3, 3)).astext()
    assert "nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3])" in text


def test_untyped_shared_subexpressions_print_once():
    x = var("x", shape=(3,))
    a = Call(Op("add"), [x, x])
    text = Function([x], Call(Op("multiply"), [a, a])).astext()
    assert text == HEADER + ("fn (%x: Tensor[(3), float32]) {\n"
                             "  %0 = add(%x, %x);\n"
                             "  multiply(%0, %0)\n"
                             "}")


@pytest.mark.parametrize("value,dtype,expected", [
    (1.0, "float32", "1f"), (0.5, "float32", "0.5f"), (1, "int32", "1"), (1, "int64", "1i64"),
    (1.0, "float64", "1f64"), (1.0, "float16", "1f16"), (True, "bool", "True"), (-3, "int8", "-3i8"),
])
def test_scalar_constants_inline(value, dtype, expected):
    assert const(value, dtype).astext() == HEADER + expected


def test_tensor_constants_go_to_meta_unless_asked():
    x = var("x", shape=(2,))
    c = const(np.array([1.5, 2.5], "float32"))
    e = Call(Op("add"), [x, c])
    text = e.astext()
    assert text == HEADER + "add(%x, meta[relay.Constant][0] /* ty=Tensor[(2), float32] */)"
    assert "1.5" not in text
    full = e.astext(show_meta_data=True)
    assert full.startswith(text) and "#[metadata]" in full and "1.5, 2.5" in full


def test_let_if_tuple_getitem_refs():
    c, x = var("c", "bool"), var("x", shape=(2,))
    t = var("t")
    r = var("r")
    body = Let(t, Tuple([x, x]),
               Let(r, RefCreate(TupleGetItem(t, 0)),
                   If(c, RefRead(r), Tuple([RefWrite(r, x), x]))))
    text = Function([c, x], body).astext()
    assert text == HEADER + """\
fn (%c: bool, %x: Tensor[(2), float32]) {
  let %t = (%x, %x);
  %0 = %t.0;
  let %r = ref(%0);
  if (%c) {
    ref_read(%r)
  } else {
    %1 = ref_write(%r, %x);
    (%1, %x)
  }
}"""


def test_duplicate_names_get_suffixes_and_globals_print_with_at():
    x1, x2 = var("x", shape=(2,)), var("x", shape=(2,))
    f = GlobalVar("f")
    text = Function([x1, x2], Call(f, [x1, x2])).astext()
    assert "fn (%x: Tensor[(2), float32], %x1: Tensor[(2), float32])" in text
    assert "@f(%x, %x1)" in text


def test_nested_primitive_function_with_attrs():
    p = var("p0", shape=(4,))
    inner = Function([p], Call(Op("nn.relu"), [p])).with_attr("Primitive", 1)
    x = var("x", shape=(4,))
    text = Function([x], Call(inner, [x])).astext()
    assert text == HEADER + """\
fn (%x: Tensor[(4), float32]) {
  %0 = fn (%p0: Tensor[(4), float32], Primitive=1) {
    nn.relu(%p0)
  };
  %0(%x)
}"""


def test_adt_module_text():
    mod = IRModule()
    lst = GlobalTypeVar("List")
    a = TypeVar("A")
    cons = Constructor("Cons", [a, TypeCall(lst, [a])], lst)
    nil = Constructor("Nil", [], lst)
    mod.add_type_definition(TypeData(lst, [a], [cons, nil]))
    h, t, xs = Var("h"), Var("t"), Var("l")
    body = Match(xs, [Clause(PatternConstructor(cons, [PatternVar(h), PatternVar(t)]),
                             Call(Op("multiply"), [Call(Op("add"), [h, h]), h])),
                      Clause(PatternConstructor(nil), const(0.0)),
                      Clause(PatternWildcard(), const(1.0))])
    mod["f"] = Function([xs], body)
    assert mod.astext() == HEADER + """\
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @f(%l) {
  match (%l) {
    Cons(%h, %t) => {
      %0 = add(%h, %h);
      multiply(%0, %h)
    },
    Nil => 0f,
    _ => 1f,
  }
}"""


def test_nested_scopes_do_not_leak_temporaries():
    # A node first printed inside a function body must be printed again (not referenced by a
    # temporary of the closed inner scope) when the outer scope uses it.
    x = var("x", shape=(2,))
    shared = Call(Op("exp"), [x])
    y = var("y", shape=(2,))
    inner = Function([y], Call(Op("add"), [y, shared]))
    text = Function([x], Call(Op("add"), [Call(inner, [x]), shared])).astext()
    body_lines = text.split("\n")
    outer_defs = [ln for ln in body_lines if ln.startswith("  %") and "exp(%x)" in ln]
    assert outer_defs, text  # the outer scope defines its own exp(%x)
