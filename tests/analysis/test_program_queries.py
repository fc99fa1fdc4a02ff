"""relay.analysis queries: type variables, kinds, features, constants, MAC counts, layer
counts, the dense(x, transpose(w)) search and the fused kernels of a module. Expected values are
worked out by hand from the programs (e.g. MACs = output size x kernel area x channels)."""
import pytest

import relay_backend as relay
from relay_backend.analysis import (Feature, KindCheckError, TypeKind, all_type_vars,
                                    bound_type_vars, check_constant, check_kind, count_layers,
                                    detect_feature, extract_fused_functions, free_type_vars,
                                    get_total_mac_number, search_fc_transpose)
from relay_backend.ir.types import (FuncType, GlobalTypeVar, RefType, TensorType, TupleType,
                                    TypeCall, TypeVar)

T = TensorType((2, 3), "float32")


# --- type variables ------------------------------------------------------------------------------
def test_type_vars_of_a_polymorphic_function():
    a, b = TypeVar("a"), TypeVar("b")
    x = relay.Var("x", a)
    y = relay.Var("y", b)
    inner = relay.Function([x], x, type_params=[a])
    outer = relay.Function([y], relay.Call(inner, [y]))
    assert free_type_vars(outer) == [b]
    assert bound_type_vars(outer) == [a]
    assert all_type_vars(outer) == [b, a]


def test_type_vars_of_a_type():
    a, b = TypeVar("a"), TypeVar("b")
    ft = FuncType([a, TupleType([b, T])], b, type_params=[a])
    assert free_type_vars(ft) == [b]
    assert bound_type_vars(ft) == [a]
    assert set(all_type_vars(ft)) == {a, b}


def test_constructor_binds_its_adt_type_vars():
    mod = relay.IRModule()
    relay.Prelude(mod)
    _, cons, nil = mod.get_type("List")
    expr = relay.Function([], nil())
    (bound,) = bound_type_vars(expr, mod)
    assert bound is mod.type_definitions[mod.get_global_type_var("List")].type_vars[0]
    assert free_type_vars(expr, mod) == []


# --- kinds ---------------------------------------------------------------------------------------
def test_check_kind_of_well_kinded_types():
    a = TypeVar("a")
    lst = GlobalTypeVar("List")
    assert check_kind(T) == TypeKind.Type
    assert check_kind(TupleType([T, FuncType([T], T)])) == TypeKind.Type
    assert check_kind(RefType(T)) == TypeKind.Type
    assert check_kind(a) == TypeKind.Type
    assert check_kind(lst) == TypeKind.AdtHandle
    assert check_kind(TypeCall(lst, [T])) == TypeKind.Type


def test_check_kind_rejects_ill_kinded_types():
    shape_var = TypeVar("s", kind="ShapeVar")
    lst = GlobalTypeVar("List")
    with pytest.raises(KindCheckError, match="field 1"):
        check_kind(TupleType([T, shape_var]))
    with pytest.raises(KindCheckError, match="only an ADT"):
        check_kind(TypeCall(TypeVar("f"), [T]))
    with pytest.raises(KindCheckError, match="the result"):
        check_kind(FuncType([T], lst))


def test_check_kind_counts_adt_arguments():
    mod = relay.IRModule()
    relay.Prelude(mod)
    lst = mod.get_global_type_var("List")
    with pytest.raises(KindCheckError, match="takes 1"):
        check_kind(TypeCall(lst, [T, T]), mod)


# --- features and constants ----------------------------------------------------------------------
def test_detect_feature_tree_graph_and_letrec():
    x = relay.var("x", shape=(2,))
    y = relay.exp(x)
    tree = relay.Function([x], relay.add(relay.exp(x), x))
    graph = relay.Function([x], relay.add(y, y))
    assert detect_feature(tree) == {Feature.fVar, Feature.fOp, Feature.fCall, Feature.fFunction}
    assert Feature.fGraph in detect_feature(graph)
    # a let-bound function calling itself
    f = relay.Var("f")
    n = relay.var("n", shape=(), dtype="int32")
    rec = relay.Let(f, relay.Function([n], relay.Call(f, [n])), f)
    assert {Feature.fLet, Feature.fLetRec} <= detect_feature(rec)


def test_detect_feature_of_a_module_and_expr():
    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.If(relay.const(True), x, x)))
    ref = relay.RefCreate(relay.const(1.0))
    features = detect_feature(ref, mod)
    assert {Feature.fIf, Feature.fRefCreate, Feature.fConstant} <= features
    assert detect_feature(mod, ref) == features


def test_check_constant():
    c = relay.const(1.0)
    assert check_constant(c)
    assert check_constant(relay.Tuple([c, relay.Tuple([c])]))
    assert not check_constant(relay.Tuple([c, relay.var("x")]))
    assert not check_constant(relay.exp(c))


# --- counts --------------------------------------------------------------------------------------
def test_mac_count_conv_dense_batch_matmul():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    conv = relay.nn.conv2d(x, w, padding=(1, 1))          # out 1x4x8x8, kernel 3x3, 3 channels
    d = relay.var("d", shape=(5, 6))
    dw = relay.var("dw", shape=(7, 6))
    dense = relay.nn.dense(d, dw)                           # 5 x 7 outputs, 6 each
    a = relay.var("a", shape=(2, 3, 4))
    b = relay.var("b", shape=(2, 5, 4))
    bmm = relay.nn.batch_matmul(a, b)                      # 2x3x5 outputs, 4 each
    func = relay.Function([x, w, d, dw, a, b], relay.Tuple([conv, dense, bmm]))
    expected = 4 * 8 * 8 * 9 * 3 + 5 * 7 * 6 + 2 * 3 * 5 * 4
    assert get_total_mac_number(func) == expected


def test_mac_count_grouped_conv():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(8, 2, 3, 3))
    func = relay.Function([x, w], relay.nn.conv2d(x, w, groups=2))   # out 1x8x4x4
    assert get_total_mac_number(func) == 8 * 4 * 4 * 9 * 2


def test_count_layers_takes_the_deepest_chain():
    x = relay.var("x", shape=(1, 2, 6, 6))
    w = relay.var("w", shape=(2, 2, 1, 1))
    a = relay.nn.conv2d(x, w)
    b = relay.nn.conv2d(x, w)              # parallel to a: the same layer
    c = relay.nn.relu(relay.nn.conv2d(relay.add(a, b), w))
    d = relay.nn.conv2d(c, w)
    func = relay.Function([x, w], d)
    assert count_layers(func, ["nn.conv2d"]) == 3
    assert count_layers(relay.IRModule.from_expr(func), ["nn.conv2d", "nn.relu"]) == 4
    assert count_layers(func, ["nn.dense"]) == 0


def test_search_fc_transpose():
    x = relay.var("x", shape=(1, 4))
    w1 = relay.var("w1", shape=(4, 3))
    w2 = relay.var("w2", shape=(3, 2))
    y = relay.nn.dense(x, relay.transpose(w1, [1, 0]))
    z = relay.nn.dense(y, relay.transpose(w2, [1, 0]))
    other = relay.nn.dense(x, relay.transpose(w1))          # any transpose of a variable counts
    # as Relay: the calls in pre-order from the result (a consumer before its arguments), once
    # per dense call (a shared one once), so a weight used by two dense calls is named twice
    func = relay.Function([x, w1, w2], relay.Tuple([z, other, other]))
    assert search_fc_transpose(func) == ["w2", "w1", "w1"]


def test_extract_fused_functions():
    x = relay.var("x", shape=(1, 2, 4, 4))
    w = relay.var("w", shape=(2, 2, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))
    z = relay.nn.softmax(relay.exp(y))
    mod = relay.IRModule.from_expr(relay.Function([x, w], z))
    funcs = extract_fused_functions(mod)
    op_sets = sorted(tuple(sorted(n.op.name for n in relay.ir.functor.all_nodes_post_order(f.body)
                                  if isinstance(n, relay.Call)))
                     for f in funcs.values())
    assert op_sets == [("exp", "nn.conv2d", "nn.relu"), ("nn.softmax",)]
    assert all(f.is_primitive for f in funcs.values())


def test_kernel_mac_count_of_the_blocked_forms_opt_level_3_makes():
    """kernel_summary.mac_count (the profiles' GFLOP/s) counts the packed dense and the NCHWc
    convolutions AlterOpLayout makes as their plain forms count: out elements x terms each."""
    from relay_backend.analysis.kernel_summary import mac_count
    d = relay.var("d", shape=(5, 6))
    wp = relay.var("wp", shape=(2, 6, 4))                  # 8 units packed in blocks of 4
    dense = relay.nn.contrib_dense_pack(d, wp, "NC4n")     # 5 x 8 outputs, 6 each
    x = relay.var("x", shape=(1, 2, 8, 8, 4))              # 8 channels as NCHW4c
    w = relay.var("w", shape=(3, 2, 3, 3, 4, 4))           # 12 out channels: OIHW4i4o
    conv = relay.nn.contrib_conv2d_nchwc(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1, data_layout="NCHW4c",
                                         kernel_layout="OIHW4i4o", out_layout="NCHW4c")   # 1x3x8x8x4
    dwk = relay.var("dwk", shape=(2, 1, 3, 3, 1, 4))
    dw = relay.nn.contrib_depthwise_conv2d_nchwc(x, dwk, (1, 1), (1, 1, 1, 1), (1, 1), groups=8,
                                                 data_layout="NCHW4c", kernel_layout="OIHW1i4o",
                                                 out_layout="NCHW4c")                       # 1x2x8x8x4
    func = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([d, wp, x, w, dwk], relay.Tuple([dense, conv, dw]))))["main"]
    assert mac_count(func) == 5 * 8 * 6 + 12 * 8 * 8 * (8 * 9) + 8 * 8 * 8 * 9
