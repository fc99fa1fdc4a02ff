"""Random well-typed Relay programs for property tests: the hypothesis strategy `programs()`.

    @given(programs(max_calls=30, control_flow=True))
    def test_x(program):
        mod, inputs = program            # inputs: {param name: numpy array}, in parameter order

A program is a DAG of 1..max_calls calls drawn from every op family (testing.program_ops:
elementwise, broadcast, reductions, shape/indexing, dense, conv2d, pooling, softmax,
batch_norm), with Let bindings, Tuple/TupleGetItem, If on a scalar condition computed from the
data (unless control_flow=False: the graph and AOT executors reject If) and one to three
outputs. Every call's type comes from its op's type relation (`op.rel`) as the program grows, so
an ill-typed candidate is dropped before it is used; the finished module passes InferType.
Inputs are seeded numpy arrays whose ranges suit their role (data, weights, variances, indices);
ops with a restricted domain (log, sqrt, divide, ...) are guarded (log(|x| + 1)), and
discontinuous ops (floor, sign, argmax, comparisons except If's condition) are left out, so
executors that round differently in the last bit still agree.
"""
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from .. import ir
from ..errors import TypeInferenceError
from ..ir.expr import Call, Constant, Tuple, TupleGetItem
from ..ir.types import TensorType, TupleType
from ..transform import InferType


@dataclass
class Value:
    """A pool entry: an expression usable as an operand, its type and how often it is used."""

    expr: object
    type: object
    uses: int = 0
    is_input: bool = False


@dataclass
class InputSpec:
    """How to fill one parameter: `kind` is data | weight | positive | indices."""

    var: object
    kind: str
    fan_in: int = 1
    bound: int = 1     # indices: values drawn in [0, bound)


class ProgramBuilder:
    """Grows a random program one template at a time; `draw` is hypothesis's draw function."""

    def __init__(self, draw, dtype: str = "float32", control_flow: bool = True, max_inputs: int = 8):
        self._draw = draw
        self.dtype = dtype
        self.control_flow = control_flow
        self.max_inputs = max_inputs
        self.pool = []
        self.inputs = []
        self.lets = []          # (var, value expr) in binding order
        self.calls = 0
        self._types = {}

    # --- drawing -------------------------------------------------------------------------------
    def int(self, lo: int, hi: int) -> int:
        return self._draw(st.integers(lo, hi))

    def choice(self, seq):
        return self._draw(st.sampled_from(list(seq)))

    def chance(self, percent: int) -> bool:
        """True with about `percent`% probability (shrinks towards False)."""
        return self._draw(st.integers(0, 99)) >= 100 - percent

    def shape(self, rank: int, lo: int = 1, hi: int = 5) -> tuple:
        return tuple(self.int(lo, hi) for _ in range(rank))

    # --- types ---------------------------------------------------------------------------------
    def type_of(self, expr):
        """The type of an expression built here (vars, constants, tuples, projections, calls)."""
        known = self._types.get(id(expr))
        if known is not None and known[0] is expr:  # the expr is kept alive, so its id is not reused
            return known[1]
        if isinstance(expr, Constant):
            arr = expr.data.numpy()
            ty = TensorType(arr.shape, str(arr.dtype))
        elif isinstance(expr, Tuple):
            ty = TupleType([self.type_of(f) for f in expr.fields])
        elif isinstance(expr, TupleGetItem):
            ty = self.type_of(expr.tuple_value).fields[expr.index]
        elif isinstance(expr, ir.Var):
            ty = expr.type_annotation
        elif isinstance(expr, Call):
            ty = expr.op.rel([self.type_of(a) for a in expr.args], expr.attrs)
            self.calls += 1
        else:
            ty = expr.checked_type
        self._types[id(expr)] = (expr, ty)
        return ty

    def typed(self, expr):
        """The type of `expr`, or None when an op's relation rejects it (the candidate is dropped)."""
        try:
            return self.type_of(expr)
        except TypeInferenceError:
            return None

    # --- pool ----------------------------------------------------------------------------------
    def const(self, value, dtype: str = None):
        return ir.const(np.asarray(value, dtype=dtype or self.dtype))

    def new_input(self, shape, kind: str = "data", dtype: str = None, fan_in: int = 1, bound: int = 1):
        """A fresh parameter; data inputs join the pool so later calls may reuse them."""
        dtype = dtype or self.dtype
        v = ir.var(f"p{len(self.inputs)}", shape=tuple(shape), dtype=dtype)
        self.inputs.append(InputSpec(v, kind, fan_in, bound))
        self._types[id(v)] = (v, v.type_annotation)
        if kind == "data":
            self.pool.append(Value(v, v.type_annotation, is_input=True))
        return v

    def param(self, shape, kind: str = "weight", fan_in: int = 1):
        """A weight-like operand: a fresh input, or (often) a constant with the same distribution."""
        if len(self.inputs) < self.max_inputs and not self.chance(50):
            return self.new_input(shape, kind=kind, fan_in=fan_in)
        spec = InputSpec(ir.var("c", shape=tuple(shape), dtype=self.dtype), kind, fan_in)
        return ir.const(make_inputs([spec], self.int(0, 2 ** 16))["c"])

    def operand(self, pred=lambda t: True, make_shape=None):
        """A pool value whose TensorType satisfies `pred` (recent ones first), else a new input.

        `make_shape()` gives the shape of the new input; without it, None is returned instead."""
        candidates = [v for v in reversed(self.pool)
                      if isinstance(v.type, TensorType) and v.type.dtype == self.dtype and pred(v.type)]
        if candidates and (make_shape is None or len(self.inputs) >= self.max_inputs or not self.chance(15)):
            v = candidates[self.int(0, len(candidates) - 1)]
            v.uses += 1
            return v.expr
        if make_shape is None:
            return None
        if self.chance(10):  # a constant operand: gives FoldConstant whole subgraphs to fold
            spec = InputSpec(ir.var("c", shape=make_shape(), dtype=self.dtype), "data")
            c = ir.const(make_inputs([spec], self.int(0, 2 ** 16))["c"])
            self.pool.append(Value(c, self.type_of(c), is_input=True))
            return c
        return self.new_input(make_shape())

    def add(self, expr, let_ok: bool = True):
        """Put a typed expression into the pool, maybe bound by a Let; returns the Value."""
        ty = self.type_of(expr)
        if let_ok and self.chance(20):
            v = ir.var(f"x{len(self.lets)}", ty)
            self._types[id(v)] = (v, ty)
            self.lets.append((v, expr))
            expr = v
        value = Value(expr, ty)
        if isinstance(ty, TensorType):
            self.pool.append(value)
        return value

    # --- finishing -----------------------------------------------------------------------------
    def outputs(self):
        """The last value plus up to two more unused ones (a Tuple when more than one)."""
        computed = [v for v in self.pool if not v.is_input]
        if not computed:
            return None
        outs = [computed[-1]]
        unused = [v for v in computed[:-1] if v.uses == 0]
        for _ in range(min(2, len(unused))):
            if not self.chance(70):
                break
            pick = unused.pop(self.int(0, len(unused) - 1))
            outs.append(pick)
        body = outs[0].expr if len(outs) == 1 else Tuple([v.expr for v in outs])
        for v, value in reversed(self.lets):
            body = ir.Let(v, value, body)
        return body


def make_inputs(specs, seed: int) -> dict:
    """Seeded input arrays by parameter name, each in a range that suits its role."""
    rng = np.random.default_rng(seed)
    out = {}
    for spec in specs:
        ty = spec.var.type_annotation
        shape = tuple(int(d) for d in ty.shape)
        if spec.kind == "indices":
            arr = rng.integers(0, spec.bound, size=shape)
        elif spec.kind == "weight":
            arr = rng.uniform(-1.0, 1.0, size=shape) * np.sqrt(3.0 / max(1, spec.fan_in))
        elif spec.kind == "positive":
            arr = rng.uniform(0.5, 2.0, size=shape)
        else:
            arr = rng.uniform(-2.0, 2.0, size=shape)
        out[spec.var.name_hint] = np.asarray(arr).astype(ty.dtype)
    return out


@dataclass
class Program:
    """A generated program: the module, its inputs by name, and how many calls it holds."""

    mod: object
    inputs: dict
    num_calls: int = 0
    has_control_flow: bool = False
    notes: list = field(default_factory=list)
    specs: list = field(default_factory=list)     # InputSpec per parameter (how inputs are drawn)

    def __repr__(self) -> str:  # short: hypothesis notes the full describe() separately
        shapes = ", ".join(f"{k}: {list(v.shape)}" for k, v in self.inputs.items())
        return f"Program({self.num_calls} calls, control_flow={self.has_control_flow}, inputs {{{shapes}}})"

    def __iter__(self):  # `mod, inputs = program`
        return iter((self.mod, self.inputs))

    def describe(self) -> str:
        lines = [self.mod.astext() if hasattr(self.mod, "astext") else str(self.mod)]
        for name, arr in self.inputs.items():
            lines.append(f"{name}: {arr.dtype}{list(arr.shape)} = {np.array2string(arr, threshold=64, precision=4)}")
        return "\n".join(lines)


def build_program(draw, max_calls: int = 30, control_flow: bool = True, dtype: str = "float32") -> Program:
    """Draw one program (the body of the `programs` strategy; usable from any @st.composite)."""
    from . import program_ops
    b = ProgramBuilder(draw, dtype=dtype, control_flow=control_flow)
    target = b.int(1, max_calls)
    templates = program_ops.templates(control_flow)
    names = sorted(templates)
    attempts = 0
    while (b.calls < target or not any(not v.is_input for v in b.pool)) and attempts < 4 * max_calls:
        attempts += 1
        templates[b.choice(names)](b)
    body = b.outputs()
    if body is None:  # every attempt was rejected: fall back to one relu
        body = program_ops.unary_relu(b.new_input(b.shape(2)))
    nodes = _walk(body)
    used = {id(n) for n in nodes if isinstance(n, ir.Var)}
    specs = [spec for spec in b.inputs if id(spec.var) in used]  # drop inputs the body never reads
    mod = InferType()(ir.IRModule.from_expr(ir.Function([spec.var for spec in specs], body)))
    inputs = make_inputs(specs, draw(st.integers(0, 2 ** 32 - 1)))
    flow = any(isinstance(n, ir.If) for n in nodes)
    num_calls = sum(isinstance(n, Call) for n in nodes)  # the calls actually in the body
    return Program(mod, inputs, num_calls, flow, specs=specs)


def _walk(expr):
    """Every node of `expr` once, iteratively (for the If check, used inputs and the call count)."""
    seen, stack, out = set(), [expr], []
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        out.append(e)
        if isinstance(e, Call):
            stack.extend(e.args)
        elif isinstance(e, Tuple):
            stack.extend(e.fields)
        elif isinstance(e, TupleGetItem):
            stack.append(e.tuple_value)
        elif isinstance(e, ir.Let):
            stack.extend([e.value, e.body])
        elif isinstance(e, ir.If):
            stack.extend([e.cond, e.true_branch, e.false_branch])
    return out


@st.composite
def programs(draw, max_calls: int = 30, control_flow: bool = True, dtype: str = "float32") -> Program:
    """Hypothesis strategy of random well-typed programs; a Program unpacks as (mod, inputs)."""
    return build_program(draw, max_calls=max_calls, control_flow=control_flow, dtype=dtype)


def dataflow_programs(max_calls: int = 30, dtype: str = "float32"):
    """Programs without If, for the graph and AOT executors."""
    return programs(max_calls=max_calls, control_flow=False, dtype=dtype)


__all__ = ["programs", "dataflow_programs", "build_program", "Program", "ProgramBuilder", "make_inputs"]
