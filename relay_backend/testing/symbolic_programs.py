"""Random programs with a size variable: program_gen's programs made symbolic.

    @given(symbolic_programs(max_calls=12))
    def test_x(program):
        for size, inputs, static_mod in program.cases:   # three concrete sizes
            ...                                          # run program.mod on inputs

A generated program is drawn as usual (testing/program_gen.py), then one size `s` of its data
inputs is chosen and every data-input dim equal to `s` becomes the size variable `n`
(`te.size_var("n")`); weights keep their static shapes. Let-bound variables lose their static
annotations, so InferType propagates `n` through the whole function. A candidate the relations
reject (a symbolic dim meeting a static one in a broadcast, as TVM rejects it) is dropped.

Each program carries three concrete sizes for `n` (s itself and two more that type-check: a
relation may need a size to divide, to cover a window, ...), with inputs for each and the same
program with `n` replaced by that size (`static_mod`), whose debug-interpreter run is the numpy
oracle for the symbolic program on every executor. Sizes below `s` are used only when the
program has no `take` (its constant indices were drawn for a length of `s`).
"""
from dataclasses import dataclass, field

from hypothesis import assume
from hypothesis import strategies as st

from .. import ir, te
from ..errors import RelayError
from ..ir.dims import is_static
from ..ir.functor import ExprMutator, post_order
from ..transform import InferType
from .program_gen import InputSpec, build_program, make_inputs

SIZE_VAR_NAME = "n"


@dataclass
class SymbolicProgram:
    """`mod` has `n` in its input types; `cases` holds (size, inputs by name, static module)."""

    mod: object
    size_var: object
    cases: list = field(default_factory=list)

    def describe(self) -> str:
        sizes = ", ".join(str(size) for size, _, _ in self.cases)
        return f"{self.mod.astext()}\n{SIZE_VAR_NAME} in ({sizes})"

    def __repr__(self) -> str:
        return f"SymbolicProgram(sizes {[size for size, _, _ in self.cases]})"


class _Rebind(ExprMutator):
    """Replaces parameters by their symbolic twins and let variables by unannotated ones."""

    def __init__(self, mapping):
        super().__init__()
        self.memo_map.update(mapping)


def _shape_with(shape, size: int, dim):
    return tuple(dim if is_static(d) and int(d) == size else d for d in shape)


def _with_params(func, specs, size: int, dim):
    """`func` with every data input's dims equal to `size` replaced by `dim` (let variables
    unannotated so InferType recomputes them); returns (function, new specs)."""
    mapping, new_specs = {}, []
    for spec in specs:
        ty = spec.var.type_annotation
        shape = _shape_with(ty.shape, size, dim) if spec.kind == "data" else ty.shape
        var = ir.var(spec.var.name_hint, shape=shape, dtype=ty.dtype)
        mapping[spec.var] = var
        new_specs.append(InputSpec(var, spec.kind, spec.fan_in, spec.bound))
    for node in post_order(func.body):
        if isinstance(node, ir.Let):
            mapping[node.var] = ir.var(node.var.name_hint)
    body = _Rebind(mapping).visit(func.body)
    return ir.Function([mapping[s.var] for s in specs], body), new_specs


def _typed(func):
    """The module of `func` after InferType, or None when a relation rejects it."""
    try:
        return InferType()(ir.IRModule.from_expr(func))
    except RelayError:
        return None


def _has_take(func) -> bool:
    return any(isinstance(n, ir.Call) and getattr(n.op, "name", "") == "take" for n in post_order(func.body))


def build_symbolic_program(draw, max_calls: int = 12, control_flow: bool = False):
    """Draw one symbolic program (None-free: unusable candidates are rejected with assume)."""
    program = build_program(draw, max_calls=max_calls, control_flow=control_flow)
    func, specs = program.mod["main"], program.specs
    sizes = sorted({int(d) for s in specs if s.kind == "data" for d in s.var.type_annotation.shape
                    if is_static(d) and int(d) > 1})
    assume(sizes)
    size = draw(st.sampled_from(sizes))
    n = te.size_var(SIZE_VAR_NAME)
    sym_func, _ = _with_params(func, specs, size, n)
    mod = _typed(sym_func)
    assume(mod is not None)
    smallest = 1 if not _has_take(func) else size + 1
    others = draw(st.permutations([k for k in range(smallest, size + 6) if k != size]))
    cases = []
    seed = draw(st.integers(0, 2 ** 32 - 1))
    for k in [size] + list(others):
        static_func, static_specs = _with_params(func, specs, size, k)
        static_mod = _typed(static_func)
        if static_mod is None:
            continue
        inputs = make_inputs(static_specs, seed + k)
        cases.append((k, inputs, static_mod))
        if len(cases) == 3:
            break
    assume(len(cases) == 3)
    return SymbolicProgram(mod, n, cases)


@st.composite
def symbolic_programs(draw, max_calls: int = 12, control_flow: bool = False) -> SymbolicProgram:
    """Hypothesis strategy of random programs whose inputs share the size variable `n`."""
    return build_symbolic_program(draw, max_calls=max_calls, control_flow=control_flow)


__all__ = ["symbolic_programs", "build_symbolic_program", "SymbolicProgram", "SIZE_VAR_NAME"]
