"""Counting analyses over operator calls (tvm.relay.analysis names):

get_total_mac_number(expr): multiply-accumulates of the conv2d, dense, batch_matmul (and, as an
  extension TVM lacks, nn.matmul) calls, from their inferred types: conv2d counts
  output size x kernel area x input channels per group, the matrix products output size x the
  contracted length. The rule for each op is the op attribute "FMacCount" (so a new op adds
  its own); types are inferred first if the expression has none.
count_layers(expr, valid_ops): the length of the longest chain of calls to `valid_ops` (two
  parallel convolutions are one layer).
search_fc_transpose(expr): the names of the weight variables w in nn.dense(x, transpose(w,
  [1, 0])), the pattern SimplifyFCTranspose rewrites.
check_constant(expr): whether expr is a Constant or a (nested) Tuple of them.
"""
import math

from ..errors import RelayError
from ..ir.expr import Call, Constant, Expr, Function, Tuple, Var
from ..ir.functor import all_children, all_nodes_post_order, all_nodes_pre_order
from ..ir.module import IRModule
from ..ir.dims import is_static_shape, shape_to_str
from ..ir.types import TensorType
from ..op.registry import OpDef, get as get_op, register_op_attr


def _size(shape) -> int:
    if not is_static_shape(shape):
        raise RelayError(f"get_total_mac_number needs static shapes, got {shape_to_str(shape)}")
    return math.prod(int(d) for d in shape)


def _conv2d_macs(call) -> int:
    data, weight = (a.checked_type for a in call.args)
    channel_axis = call.attrs.data_layout.index("C")
    kernel = call.attrs.kernel_layout
    kernel_area = weight.shape[kernel.index("H")] * weight.shape[kernel.index("W")]
    per_group = data.shape[channel_axis] // call.attrs.groups
    return _size(call.checked_type.shape) * kernel_area * per_group


def _matrix_macs(contracted_axis):
    """MACs of a product: output size x the length of tensor_a's contracted axis."""
    def count(call) -> int:
        a = call.args[0].checked_type
        return _size(call.checked_type.shape) * int(a.shape[contracted_axis(call.attrs, a)])
    return count


register_op_attr("nn.conv2d", "FMacCount", _conv2d_macs)
register_op_attr("nn.dense", "FMacCount", _matrix_macs(lambda attrs, a: -1))
register_op_attr("nn.matmul", "FMacCount",
                 _matrix_macs(lambda attrs, a: -2 if attrs.transpose_a else -1))
register_op_attr("nn.batch_matmul", "FMacCount",
                 _matrix_macs(lambda attrs, a: 1 if attrs.transpose_a else 2))


def _typed(expr: Expr) -> Expr:
    if expr._checked_type_ is None:
        from ..transform.infer_type import InferTypeLocal
        InferTypeLocal(expr)
    return expr


def get_total_mac_number(expr) -> int:
    """The total multiply-accumulate operations of a program, summed over the calls of ops that
    declare an FMacCount rule (conv2d, dense, batch_matmul, ...)
    (tvm.relay.analysis.get_total_mac_number).

    Parameters
    ----------
    expr : Expr or IRModule
        The program (a module's main).

    Returns
    -------
    macs : int
        The count.
    """
    if isinstance(expr, IRModule):
        expr = expr["main"]
    total = 0
    for node in all_nodes_post_order(_typed(expr)):
        if isinstance(node, Call) and isinstance(node.op, OpDef):
            rule = node.op.get_attr("FMacCount")
            if rule is not None and isinstance(node._checked_type_, TensorType):
                total += int(rule(node))
    return total


def count_layers(expr, valid_ops) -> int:
    """The number of calls to the given ops on the deepest chain of the dataflow graph
    (tvm.relay.analysis.count_layers).

    Parameters
    ----------
    expr : Expr or IRModule
        The program (a module's main).
    valid_ops : list of str
        The op names that count as layers, e.g. ["nn.conv2d", "nn.dense"].

    Returns
    -------
    layers : int
        The count.
    """
    if isinstance(expr, IRModule):
        expr = expr["main"]
    wanted = {get_op(name) for name in valid_ops}
    depth, deepest = {}, 0
    for node in all_nodes_post_order(expr):
        if isinstance(node, Call):
            below = max((depth.get(a, 0) for a in node.args), default=0)
            depth[node] = below + (1 if node.op in wanted else 0)
        elif isinstance(node, Function):
            depth[node] = depth.get(node.body, 0)
        else:
            depth[node] = max((depth.get(c, 0) for c in all_children(node)), default=0)
        deepest = max(deepest, depth[node])
    return deepest


def search_fc_transpose(expr) -> list:
    """The names of the weight variables w in nn.dense(x, transpose(w)), the pattern
    SimplifyFCTranspose rewrites (tvm.relay.analysis.search_fc_transpose): one per dense
    call, in pre-order from the result (a consumer before its arguments), as Relay lists
    them.

    Parameters
    ----------
    expr : Expr
        The program.

    Returns
    -------
    names : list of str
        The weight names.
    """
    dense, transpose = get_op("nn.dense"), get_op("transpose")
    names = []
    for node in all_nodes_pre_order(expr):
        if not (isinstance(node, Call) and node.op is dense):
            continue
        weight = node.args[1]
        if isinstance(weight, Call) and weight.op is transpose and isinstance(weight.args[0], Var):
            names.append(weight.args[0].name_hint)
    return names


def check_constant(expr) -> bool:
    """Whether an expression is a constant: a Constant, or a Tuple whose fields all are
    (tvm.relay.analysis.check_constant).

    Parameters
    ----------
    expr : Expr
        The expression to test; the fields of a Tuple (nested ones too) are tested in turn.

    Returns
    -------
    constant : bool
        True when it is constant.
    """
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Tuple):
            stack.extend(e.fields)
        elif not isinstance(e, Constant):
            return False
    return True


__all__ = ["get_total_mac_number", "count_layers", "search_fc_transpose", "check_constant"]
