"""The evaluation machine: Relay expressions -> runtime values, by the rules of TVM's interpreter.

Depth of Python recursion is kept independent of program size:
  * dataflow sub-expressions (call args, tuple fields, refs) are evaluated iteratively in
    post-order with a per-frame memo (a shared node is evaluated once, as after ToANormalForm);
  * let chains, If branches, Match clauses and calls in tail position are a loop (`run`), so a
    10,000-deep let chain or a tail-recursive loop (foldl) costs constant stack;
  * only a call in non-tail position, or a let/if/match nested inside an argument, recurses, so
    depth grows with the depth of *Relay* recursion (map over a list), never with its length
    in tail-recursive code.
"""
from ..errors import ExecutionError
from ..ir.adt import (Constructor, Match, PatternConstructor, PatternTuple, PatternVar,
                      PatternWildcard)
from ..ir.expr import (Call, Constant, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                       RefWrite, Tuple, TupleGetItem, Var)
from ..ir.vars import free_vars
from ..runtime.container import ADT
from ..runtime.ndarray import NDArray
from .primitive import invoke_op, is_dynamic_type
from ..runtime.values import Closure, ConstructorValue, RecClosure, RefValue, describe, empty_tuple


class Frame:
    """One function invocation: variable bindings and the memo of evaluated sub-expressions."""

    __slots__ = ("env", "memo")

    def __init__(self, env):
        self.env = env
        self.memo = {}


def _short(expr) -> str:
    """A one-line excerpt of an expression for error messages (printer may not exist yet)."""
    try:
        text = expr.astext()
    except Exception:  # the printer is optional here; fall back to the node kind
        return f"<{type(expr).__name__}>"
    text = " ".join(line for line in text.splitlines() if not line.startswith("#[version"))
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:117] + "..."


def _known_type(expr):
    return getattr(expr, "_checked_type_", None)


class Machine:
    """Evaluates expressions of one IRModule on one device."""

    def __init__(self, mod, device):
        self.mod = mod
        self.device = device
        self._globals = {}   # name -> Closure of a module function
        self._free = {}      # Function -> its free vars (computed once)
        self._dynamic = {}   # op Call -> whether an argument's inferred type has a dynamic dim

    def _dynamic_inputs(self, call) -> bool:
        """Whether `call` has an argument of symbolic or Any shape (or of unknown type), so the
        op's relation is replayed on the run-time shapes (computed once per call node)."""
        known = self._dynamic.get(call)
        if known is None:
            known = self._dynamic[call] = any(
                _known_type(a) is None or is_dynamic_type(_known_type(a)) for a in call.args)
        return known

    # --- entry points -----------------------------------------------------------------------
    def eval_closed(self, expr):
        """Evaluate an expression with no free variables."""
        return self.run(expr, Frame({}))

    def apply(self, callee, args):
        """Apply a closure (or constructor / op value) to runtime values."""
        if isinstance(callee, (Closure, RecClosure)):
            return self.run(callee.func.body, self._enter(callee, args, None))
        return self._apply_other(callee, args, None)

    # --- the loop: lets, branches, matches and tail calls --------------------------------------
    def run(self, expr, frame: Frame):
        while True:
            memo = frame.memo
            if expr in memo:
                return memo[expr]
            if isinstance(expr, Let):
                frame.env[expr.var] = self._let_value(expr, frame)
                expr = expr.body
            elif isinstance(expr, If):
                expr = expr.true_branch if self._condition(expr, frame) else expr.false_branch
            elif isinstance(expr, Match):
                expr = self._match(expr, frame)
            elif isinstance(expr, Call) and not isinstance(expr.op, (Op, Constructor)):
                callee = self.value(expr.op, frame)
                args = [self.value(a, frame) for a in expr.args]
                if isinstance(callee, (Closure, RecClosure)):
                    frame = self._enter(callee, args, expr)
                    expr = callee.func.body
                else:
                    value = self._apply_other(callee, args, expr)
                    memo[expr] = value
                    return value
            else:
                return self.value(expr, frame)

    # --- dataflow: iterative post-order with a per-frame memo ------------------------------
    def value(self, expr, frame: Frame):
        memo = frame.memo
        if expr in memo:
            return memo[expr]
        stack = [(expr, False)]
        while stack:
            node, expanded = stack.pop()
            if node in memo:
                continue
            if not expanded:
                pending = [k for k in _dataflow_kids(node) if k not in memo]
                if pending:
                    stack.append((node, True))
                    stack.extend((k, False) for k in reversed(pending))
                    continue
            memo[node] = self._compute(node, frame)
        return memo[expr]

    def _compute(self, node, frame: Frame):
        memo = frame.memo
        if isinstance(node, Var):
            try:
                return frame.env[node]
            except KeyError:
                raise ExecutionError(
                    f"variable %{node.name_hint} is not bound here: it is free in the evaluated "
                    f"expression; bind it (evaluate(..., binds={{var: value}})) or make it a "
                    f"function parameter") from None
        if isinstance(node, Constant):
            return node.data
        if isinstance(node, Call):
            args = [memo[a] for a in node.args]
            if isinstance(node.op, Op):
                return invoke_op(node.op, args, node.attrs, _known_type(node), self.device,
                                 self._dynamic_inputs(node))
            if isinstance(node.op, Constructor):
                return self._construct(node.op, args)
            return self.apply(memo[node.op], args) if _is_closure(memo[node.op]) else \
                self._apply_other(memo[node.op], args, node)
        if isinstance(node, Tuple):
            return ADT(0, [memo[f] for f in node.fields])
        if isinstance(node, TupleGetItem):
            return self._get_item(memo[node.tuple_value], node)
        if isinstance(node, Function):
            return self._make_closure(node, frame)
        if isinstance(node, GlobalVar):
            return self._global(node)
        if isinstance(node, (Let, If, Match)):
            return self.run(node, frame)  # nested in an argument: recurse once, then loop
        if isinstance(node, RefCreate):
            return RefValue(memo[node.value])
        if isinstance(node, RefRead):
            return self._ref(memo[node.ref], node).value
        if isinstance(node, RefWrite):
            self._ref(memo[node.ref], node).value = memo[node.value]
            return empty_tuple()
        if isinstance(node, (Op, Constructor)):
            return node  # an op or constructor used as a function value
        raise ExecutionError(f"the interpreter cannot evaluate a {type(node).__name__}: {_short(node)}")

    # --- functions and calls -----------------------------------------------------------------
    def _free_vars(self, func):
        fv = self._free.get(func)
        if fv is None:
            fv = self._free[func] = free_vars(func)
        return fv

    def _make_closure(self, func, frame: Frame, rec_var=None):
        env = {}
        for v in self._free_vars(func):
            if v is rec_var:
                continue
            if v not in frame.env:
                raise ExecutionError(f"function {_short(func)} captures %{v.name_hint}, which is not "
                                     f"bound where the function is created")
            env[v] = frame.env[v]
        clos = Closure(func, env)
        return RecClosure(clos, rec_var) if rec_var is not None else clos

    def _let_value(self, let: Let, frame: Frame):
        value = let.value
        if isinstance(value, Function) and value not in frame.memo and let.var in self._free_vars(value):
            return self._make_closure(value, frame, rec_var=let.var)
        return self.value(value, frame)

    def _global(self, gv: GlobalVar):
        clos = self._globals.get(gv.name_hint)
        if clos is None:
            try:
                func = self.mod[gv.name_hint]
            except KeyError:
                raise ExecutionError(f"global function @{gv.name_hint} is not defined in the module; "
                                     f"it has {sorted(g.name_hint for g in self.mod.get_global_vars())}") from None
            clos = self._globals[gv.name_hint] = Closure(func, {})
        return clos

    def _enter(self, callee, args, call) -> Frame:
        func = callee.func
        if len(args) != len(func.params):
            where = f" in {_short(call)}" if call is not None else ""
            raise ExecutionError(f"function with parameters ({', '.join('%' + p.name_hint for p in func.params)}) "
                                 f"called with {len(args)} argument(s){where}")
        env = dict(callee.env)
        if isinstance(callee, RecClosure):
            env[callee.bind] = callee
        env.update(zip(func.params, args))
        return Frame(env)

    def _apply_other(self, callee, args, call):
        if isinstance(callee, Constructor):
            return self._construct(callee, args)
        if isinstance(callee, Op):
            out_type = _known_type(call) if call is not None else None
            attrs = call.attrs if call is not None else None
            return invoke_op(callee, args, attrs, out_type, self.device,
                             call is None or self._dynamic_inputs(call))
        where = f": {_short(call)}" if call is not None else ""
        raise ExecutionError(f"cannot call {describe(callee)}; only functions, constructors and "
                             f"operators can be called{where}")

    def _construct(self, ctor: Constructor, args):
        if len(args) != len(ctor.inputs):
            raise ExecutionError(f"constructor {ctor.name_hint} takes {len(ctor.inputs)} field(s), "
                                 f"got {len(args)}")
        return ConstructorValue(ctor.tag, args, ctor)

    # --- tuples, refs, branches, matches -------------------------------------------------------
    def _get_item(self, tup, node: TupleGetItem):
        if not isinstance(tup, ADT):
            raise ExecutionError(f"TupleGetItem on {describe(tup)}, not a tuple: {_short(node)}")
        if not 0 <= node.index < len(tup):
            raise ExecutionError(f"tuple index {node.index} out of range for a tuple of {len(tup)} "
                                 f"field(s): {_short(node)}")
        return tup[node.index]

    @staticmethod
    def _ref(value, node):
        if not isinstance(value, RefValue):
            raise ExecutionError(f"{type(node).__name__} expects a reference, got {describe(value)}: "
                                 f"{_short(node)}")
        return value

    def _condition(self, ite: If, frame: Frame) -> bool:
        cond = self.value(ite.cond, frame)
        if not isinstance(cond, NDArray) or cond.dtype != "bool":
            raise ExecutionError(f"the condition of If must be a bool tensor, got {describe(cond)}: "
                                 f"{_short(ite.cond)}; compare with a relational op or cast to bool")
        return bool(cond.view_numpy().reshape(-1)[0])

    def _match(self, match: Match, frame: Frame):
        data = self.value(match.data, frame)
        for clause in match.clauses:
            bindings = {}
            if _match_pattern(clause.lhs, data, bindings):
                frame.env.update(bindings)
                return clause.rhs
        raise ExecutionError(f"did not find any match for {describe(data)} in {_short(match)}")


def _is_closure(value) -> bool:
    return isinstance(value, (Closure, RecClosure))


def _match_pattern(pattern, value, bindings) -> bool:
    """Match `value` against `pattern`, recording PatternVar bindings (iterative)."""
    stack = [(pattern, value)]
    while stack:
        pat, val = stack.pop()
        if isinstance(pat, PatternWildcard):
            continue
        if isinstance(pat, PatternVar):
            bindings[pat.var] = val
        elif isinstance(pat, PatternConstructor):
            if not isinstance(val, ConstructorValue) or val.tag != pat.constructor.tag:
                return False
            if len(val.fields) != len(pat.patterns):
                raise ExecutionError(f"pattern {pat.constructor.name_hint} has {len(pat.patterns)} "
                                     f"sub-pattern(s) but the value has {len(val.fields)} field(s)")
            stack.extend(zip(pat.patterns, val.fields))
        elif isinstance(pat, PatternTuple):
            if not isinstance(val, ADT) or len(val) != len(pat.patterns):
                return False
            stack.extend(zip(pat.patterns, val.fields))
        else:
            raise ExecutionError(f"unknown pattern kind {type(pat).__name__}")
    return True


def _dataflow_kids(node):
    if isinstance(node, Call):
        return node.args if isinstance(node.op, (Op, Constructor)) else (node.op, *node.args)
    if isinstance(node, Tuple):
        return node.fields
    if isinstance(node, TupleGetItem):
        return (node.tuple_value,)
    if isinstance(node, RefCreate):
        return (node.value,)
    if isinstance(node, RefRead):
        return (node.ref,)
    if isinstance(node, RefWrite):
        return (node.ref, node.value)
    return ()


__all__ = ["Machine", "Frame"]
