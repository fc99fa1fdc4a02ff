"""FuseOps: group operator calls into primitive functions, one per future kernel (as Relay).

Each dataflow region (a function body, a let value, an if condition or branch, a match clause) is
fused on its own: analysis.dataflow_graph builds its indexed forward graph,
analysis.graph_partitioner groups the nodes, and here each group whose nodes include an operator
call becomes

    %f = fn (%p0: T0, %p1: T1, ..., Primitive=1) -> T { <the group's calls> };
    %f(<the group's inputs>)

with parameters p0, p1, ... in order of first use (deduplicated), the group's root (its last
node in post-order) as the body, and scalar constants that fused kept inside. Other nodes
(variables, tuples that are a group of their own, calls to functions or constructors) stay as
they are, with their inputs rewritten. Functions already marked Primitive=1, or given to an
external compiler (`Compiler` attr), are left alone. Traversals are iterative: a 10,000-op chain
or let chain costs constant Python stack depth (depth grows only with nested functions/branches).

Sharing across regions: a node computed in an enclosing region and used inside a branch or
closure, or computed in a let value (if condition) and used later, stays the output of its own
group and is passed in, so graph-form programs never compute it twice.
"""
from collections import ChainMap

from ..analysis.dataflow_graph import (LEAF_TYPES, create_dataflow_graph, is_boundary, is_op_call,
                                       region_children)
from ..analysis.graph_partitioner import DEFAULT_MAX_DEPTH, GraphPartitioner
from ..errors import RelayError
from ..ir.adt import Clause, Constructor, Match
from ..ir.expr import (Call, Function, GlobalVar, If, Let, Op, RefCreate, RefRead, RefWrite, Tuple,
                       TupleGetItem, Var, bind_type)
from ..ir.functor import all_children, all_nodes_post_order, post_order
from ..ir.types import FuncType, TensorType
from ..op.annotation import STOP_FUSION
from ..op.registry import OpDef
from .infer_type import infer_module_types
from .pass_infra import function_pass

MAX_DEPTH_KEY = "relay.FuseOps.max_depth"
RESHAPE_ONLY_ATTR = "relay.reshape_only"      # TVM's attr::kReshapeOnly


def _rebuild(expr, arg_of):
    """`expr` with each input replaced by arg_of(input); the same node if nothing changed."""
    if isinstance(expr, Call):
        op = expr.op if isinstance(expr.op, Op) else arg_of(expr.op)
        args = [arg_of(a) for a in expr.args]
        if op is expr.op and all(n is o for n, o in zip(args, expr.args)):
            return expr
        new = Call(op, args, expr.attrs, expr.type_args, span=expr.span)
    elif isinstance(expr, Tuple):
        fields = [arg_of(f) for f in expr.fields]
        if all(n is o for n, o in zip(fields, expr.fields)):
            return expr
        new = Tuple(fields, span=expr.span)
    elif isinstance(expr, TupleGetItem):
        value = arg_of(expr.tuple_value)
        if value is expr.tuple_value:
            return expr
        new = TupleGetItem(value, expr.index, span=expr.span)
    else:
        return expr
    return bind_type(new, expr.checked_type)


def _is_stop_fusion(expr) -> bool:
    return isinstance(expr, Call) and isinstance(expr.op, OpDef) and expr.op.name == STOP_FUSION


def _is_reshape_only(body) -> bool:
    """Every call in `body` is a reshape-like op and every variable a tensor (TVM's
    CheckReshapeOnly in FuseMutator::MakeNewFunction)."""
    for node in post_order(body):
        if isinstance(node, Call) and not (isinstance(node.op, OpDef) and node.op.is_reshape):
            return False
        if isinstance(node, Var) and not isinstance(node.checked_type, TensorType):
            return False
    return True


def aliases_first_param(prim: Function) -> bool:
    """Whether a fused function's result is its first parameter's data with another shape, so an
    executor may run no kernel and let the result share that parameter's storage: it is marked
    relay.reshape_only and the data operand (the first) of every op in it leads to the first
    parameter. reshape_like's second operand only gives the shape, so it qualifies too."""
    if int(prim.attrs.get(RESHAPE_ONLY_ATTR, 0)) != 1:
        return False
    node = prim.body
    while isinstance(node, Call):
        if not node.args:
            return False
        node = node.args[0]
    return bool(prim.params) and node is prim.params[0]


def _skip_function(fn: Function) -> bool:
    return fn.is_primitive or fn.attrs.get("Compiler") is not None


class FuseRewriter:
    """Rewrites one function: `FuseRewriter(opt_level, max_depth).fuse_function(fn)`."""

    def __init__(self, opt_level: int, max_depth: int = DEFAULT_MAX_DEPTH):
        self.opt_level = opt_level
        self.max_depth = max_depth
        # A Let/If/closure reachable from several regions (say both branches of an `if`) is
        # rewritten once, so the result shares it as the input did and binds each var once.
        self.boundary_memo = {}

    def fuse_function(self, fn: Function) -> Function:
        if _skip_function(fn):
            return fn
        body, _ = self.rewrite_region(fn.body, ChainMap())
        return self._with_body(fn, body)

    def _with_body(self, fn, body):
        if body is fn.body:
            return fn
        new = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs)
        return bind_type(new, fn.checked_type)

    # --- regions -----------------------------------------------------------------------------
    def rewrite_region(self, root, scope: ChainMap, materialize=()):
        """(fused form of the region rooted at `root`, {old node: new node} of this region).

        `scope` maps nodes computed by enclosing or earlier regions to their rewritten form; they
        are inputs here. Nodes in `materialize` are reused by later regions, so each stays the
        output of its group (and appears in the returned map)."""
        if root in scope:
            return scope[root], {}
        if isinstance(root, LEAF_TYPES):
            return root, {}
        graph = create_dataflow_graph(root, externals=scope, materialize=materialize)
        roots = GraphPartitioner(graph, self.opt_level, self.max_depth).partition()
        members = {}
        for n in graph.nodes:
            members.setdefault(roots[n], []).append(n)
        local = scope.new_child()   # what this region has computed so far, visible to nested ones
        for n in sorted(graph.nodes):
            expr = graph.nodes[n]["expr"]
            if expr in scope or roots[n] != n:
                continue   # an input from outside, or built with its group at the group's root
            if is_boundary(expr):
                local[expr] = self.rewrite_boundary(expr, local)
            elif isinstance(expr, LEAF_TYPES):
                local[expr] = expr
            else:
                group = [graph.nodes[m]["expr"] for m in sorted(members[n])]
                local[expr] = self.build_group(group, local)
        return local[root], local.maps[0]

    def build_group(self, group, outer):
        """A group (its nodes in post-order, root last) as a call to a primitive function, or as
        plain rebuilt nodes when it has no operator call.

        Parameters are numbered as Relay's FuseMutator allocates them: walking down from the root,
        arguments left to right, an outside input gets the next number when first met.
        `annotation.stop_fusion` calls (OPAQUE, so alone in their group) are replaced by their
        argument: the producer and consumers they kept apart stay separate kernels. A function
        of reshape-like ops only (TVM's TReshapeOp) is marked `relay.reshape_only=1`, so the
        executors alias its output to its input instead of running a kernel.
        """
        root = group[-1]
        inside = {}
        if len(group) == 1 and _is_stop_fusion(root):
            return outer[root.args[0]]
        if not any(is_op_call(e) for e in group):
            for e in group:
                inside[e] = _rebuild(e, lambda a: inside[a] if a in inside else outer[a])
            return inside[root]
        members = set(group)
        params, args, param_of = [], [], {}
        for e in post_order(root, children=lambda n: region_children(n) if n in members else ()):
            if e in members:
                inside[e] = _rebuild(e, lambda a: inside[a] if a in inside else param_of[a])
            else:
                ty = e.checked_type
                param_of[e] = bind_type(Var(f"p{len(params)}", ty), ty)
                params.append(param_of[e])
                args.append(outer[e])
        ret = root.checked_type
        attrs = {"Primitive": 1}
        if _is_reshape_only(inside[root]):
            attrs[RESHAPE_ONLY_ATTR] = 1
        fn = Function(params, inside[root], ret_type=ret, attrs=attrs, span=root.span)
        bind_type(fn, FuncType([p.checked_type for p in params], ret))
        return bind_type(Call(fn, args, span=root.span), ret)

    # --- control flow and scopes -------------------------------------------------------------
    def rewrite_sequence(self, steps, tails, scope):
        """Fuse regions evaluated in order: each of `steps` (let values, an if condition, match
        data) may compute what later steps and every one of `tails` (let body, branches, clauses)
        reuse; such shared nodes are materialized once, in the first region that has them.
        Returns (new steps, new tails)."""
        shared = _reused_later(steps, tails)
        exported = {}
        inner = scope.new_child(exported)
        new_steps = []
        for root, reused in zip(steps, shared):
            new_root, local = self.rewrite_region(root, inner, materialize=reused)
            new_steps.append(new_root)
            exported.update((n, local[n]) for n in reused if n in local)
        return new_steps, [self.rewrite_region(t, inner)[0] for t in tails]

    def rewrite_boundary(self, expr, scope):
        """Fuse the regions inside a Let, If, Match, reference node or function literal."""
        new = self.boundary_memo.get(expr)
        if new is None:
            new = self.boundary_memo[expr] = self._rewrite_boundary(expr, scope)
        return new

    def _rewrite_boundary(self, expr, scope):
        if isinstance(expr, Let):
            return self._rewrite_let_chain(expr, scope)
        if isinstance(expr, Function):
            if _skip_function(expr):
                return expr
            return self._with_body(expr, self.rewrite_region(expr.body, scope)[0])
        if isinstance(expr, If):
            (cond,), (then, other) = self.rewrite_sequence(
                [expr.cond], [expr.true_branch, expr.false_branch], scope)
            return _same_or(expr, (cond, then, other), (expr.cond, expr.true_branch, expr.false_branch),
                            lambda: If(cond, then, other))
        if isinstance(expr, Match):
            (data,), rhs = self.rewrite_sequence([expr.data], [c.rhs for c in expr.clauses], scope)
            return _same_or(expr, (data, *rhs), (expr.data, *(c.rhs for c in expr.clauses)),
                            lambda: Match(data, [Clause(c.lhs, r) for c, r in zip(expr.clauses, rhs)],
                                          expr.complete))
        if isinstance(expr, RefCreate):
            _, (value,) = self.rewrite_sequence([], [expr.value], scope)
            return _same_or(expr, (value,), (expr.value,), lambda: RefCreate(value))
        if isinstance(expr, RefRead):
            _, (ref,) = self.rewrite_sequence([], [expr.ref], scope)
            return _same_or(expr, (ref,), (expr.ref,), lambda: RefRead(ref))
        if isinstance(expr, RefWrite):
            (ref,), (value,) = self.rewrite_sequence([expr.ref], [expr.value], scope)
            return _same_or(expr, (ref, value), (expr.ref, expr.value), lambda: RefWrite(ref, value))
        raise RelayError(f"FuseOps: unexpected boundary node {type(expr).__name__}")

    def _rewrite_let_chain(self, let, scope):
        """`let x1 = v1; ...; let xn = vn; body` with a loop (a long chain is not deep recursion):
        each value and the final body is a region of its own."""
        chain, e = [], let
        while isinstance(e, Let) and (e is let or e not in self.boundary_memo):
            chain.append(e)
            e = e.body
        values, (body,) = self.rewrite_sequence([b.value for b in chain], [e], scope)
        for binding, value in zip(reversed(chain), reversed(values)):
            if value is not binding.value or body is not binding.body:
                body = bind_type(Let(binding.var, value, body), binding.checked_type)
            else:
                body = binding
            self.boundary_memo[binding] = body
        return body


def _reused_later(steps, tails) -> list:
    """For each step, the nodes it computes first that later steps or tails use directly.

    A node belongs to the first element (step, or any tail) that contains it; it must be
    materialized when a node belonging to a later element refers to it."""
    owner, seen = {}, set()
    reused = [set() for _ in steps]
    for i, elem in enumerate((*steps, *tails)):
        idx = min(i, len(steps))
        for node in post_order(elem, seen=seen, children=all_children):
            owner[node] = idx
            for child in all_children(node):
                j = owner.get(child, idx)
                if j < idx and not isinstance(child, LEAF_TYPES):
                    reused[j].add(child)
        j = owner.get(elem, idx)
        if j < idx and not isinstance(elem, LEAF_TYPES):
            reused[j].add(elem)
    return reused


def _same_or(expr, new_parts, old_parts, build):
    """`expr` itself when no part changed, else build() typed like expr."""
    if all(n is o for n, o in zip(new_parts, old_parts)):
        return expr
    return bind_type(build(), expr.checked_type)


def fuse_ops(func: Function, opt_level: int = 2, max_depth: int = DEFAULT_MAX_DEPTH) -> Function:
    """Fuse one typed function (the pass applies this to every non-primitive global function)."""
    return FuseRewriter(opt_level, max_depth).fuse_function(func)


def _needs_types(func: Function) -> bool:
    for node in all_nodes_post_order(func):
        if not isinstance(node, (Op, Constructor, GlobalVar)) and node._checked_type_ is None:
            return True
    return False


def _max_depth(ctx) -> int:
    value = ctx.config.get(MAX_DEPTH_KEY, DEFAULT_MAX_DEPTH)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RelayError(f"PassContext config {MAX_DEPTH_KEY!r} must be a positive int (the most "
                         f"nodes one fused function may hold; 1 disables fusion), got {value!r}")
    return value


def FuseOps(fuse_opt_level: int = -1):  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 0): group operators into primitive functions, the kernels the
    executors compile.

    Untyped modules are type-checked first. The largest fused group is set by the
    PassContext config "relay.FuseOps.max_depth" (default 256).

    Parameters
    ----------
    fuse_opt_level : int, optional
        How aggressively to fuse: -1 (the default) takes PassContext.current().opt_level;
        0 puts every operator call in a primitive function of its own (no fusion).

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """
    if isinstance(fuse_opt_level, bool) or not isinstance(fuse_opt_level, int) or fuse_opt_level < -1:
        raise RelayError(f"FuseOps: fuse_opt_level must be an int >= -1 (-1: use the PassContext's "
                         f"opt_level), got {fuse_opt_level!r}")

    def transform(func, mod, ctx):
        level = ctx.opt_level if fuse_opt_level == -1 else fuse_opt_level
        if _needs_types(func):
            infer_module_types(mod)
        return fuse_ops(func, level, _max_depth(ctx))

    return function_pass(transform, opt_level=0, name="FuseOps", required=["InferType"])


__all__ = ["FuseOps", "fuse_ops", "FuseRewriter", "MAX_DEPTH_KEY", "RESHAPE_ONLY_ATTR", "aliases_first_param"]
