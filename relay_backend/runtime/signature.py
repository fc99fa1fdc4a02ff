"""Native function signatures: buffer parameters with their dims, and their JSON form.

A dim is an int, the name of a symbolic shape variable, or `[op, lhs, rhs]` with op one of
+ - * // % min max (what codegen writes for a buffer extent like `n * 2`). A signature is what
`Function.check_args` compares arguments with before a native call, so an exported library's
trailer carries one per function and `FunctionInfo.from_json` validates it on load: a wrong
type, an unknown op, a constant division by zero, a variable that is not one of the function's
shape variables (or a shape variable that no plain dim binds, so axes using it would go
unchecked), a negative extent, nesting deeper than codegen ever writes, an output count outside
the parameter list, or a symbol other than the one codegen exports the function as
(`rb_<name>`, so no entry can point at another function's code) all raise SerializationError
naming the function, the parameter and the axis. What the trailer cannot prove is that a
function's machine code matches the shapes its signature states: the checksum detects
accidents, not intent, and loading a shared library means trusting its code.
"""
import re
from dataclasses import dataclass

from ..errors import InputError, SerializationError

SYMBOL_PREFIX = "rb_"               # every kernel symbol codegen exports starts with this
_SYMBOL = re.compile(re.escape(SYMBOL_PREFIX) + r"[A-Za-z0-9_]+\Z")
MAX_DIM_DEPTH = 32                  # codegen writes a few levels; deeper means a corrupt file

DIM_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "min": min, "max": max,
}
_DIVIDING = ("//", "%")


def eval_dim(dim, env: dict):
    """Value of a dim under `env` (var name -> int); None when a variable is still unbound.

    A divisor that evaluates to zero raises InputError naming the dim and the bindings (the
    native code would trap on it)."""
    if isinstance(dim, bool):
        raise SerializationError(f"bad shape dim {dim!r}")
    if isinstance(dim, int):
        return dim
    if isinstance(dim, str):
        return env.get(dim)
    if isinstance(dim, (list, tuple)) and len(dim) == 3 and dim[0] in DIM_OPS:
        lhs, rhs = eval_dim(dim[1], env), eval_dim(dim[2], env)
        if lhs is None or rhs is None:
            return None
        if rhs == 0 and dim[0] in _DIVIDING:
            bound = ", ".join(f"{name}={value}" for name, value in sorted(env.items()))
            raise InputError(f"shape dim {dim_str(dim)} divides by zero"
                             f"{f' (bound {bound})' if bound else ''}")
        return DIM_OPS[dim[0]](lhs, rhs)
    raise SerializationError(f"bad shape dim {dim!r}: expected int, name or [op, a, b]")


def dim_str(dim) -> str:
    """A dim as text: `4`, `n`, `(n * 2)`."""
    if isinstance(dim, (list, tuple)):
        return f"({dim_str(dim[1])} {dim[0]} {dim_str(dim[2])})"
    return str(dim)


@dataclass(frozen=True)
class ParamInfo:
    """One buffer parameter: its name, shape (ints / var names / dim expressions) and dtype."""

    name: str
    shape: tuple
    dtype: str

    def describe(self) -> str:
        return f"{self.name}: Tensor[({', '.join(dim_str(d) for d in self.shape)}), {self.dtype}]"


@dataclass(frozen=True)
class FunctionInfo:
    """The signature of one native function: buffer params in call order, shape vars in order."""

    name: str
    params: tuple
    shape_vars: tuple = ()
    symbol: str = ""
    num_outputs: int = 0           # trailing params written by the function (0 = unknown)

    def to_json(self) -> dict:
        return {"name": self.name, "symbol": self.symbol or self.name,
                "shape_vars": list(self.shape_vars), "num_outputs": self.num_outputs,
                "params": [{"name": p.name, "shape": list(p.shape), "dtype": p.dtype}
                           for p in self.params]}

    @staticmethod
    def from_json(obj, index: int = 0) -> "FunctionInfo":
        """The validated signature of `obj` (one entry of a trailer's "functions" list)."""
        if not isinstance(obj, dict):
            raise SerializationError(f"function {index} ({str(obj)[:60]}) must be an object with "
                                     f"name, symbol, shape_vars, num_outputs and params")
        name = _field(obj, "name", str, f"function {index}")
        where = f"function {name!r}"
        symbol = _field(obj, "symbol", str, where)
        if not _SYMBOL.match(symbol):
            raise SerializationError(f"{where}: symbol {symbol!r} is not a kernel symbol "
                                     f"({SYMBOL_PREFIX}<letters, digits, _>)")
        if symbol != SYMBOL_PREFIX + name:       # no entry may point at another function's code
            raise SerializationError(f"{where}: symbol {symbol!r} is not {SYMBOL_PREFIX + name!r}, the "
                                     f"symbol codegen exports a function of that name as")
        shape_vars = _field(obj, "shape_vars", list, where)
        if not all(isinstance(v, str) for v in shape_vars) or len(set(shape_vars)) != len(shape_vars):
            raise SerializationError(f"{where}: shape_vars must be distinct names, got {shape_vars!r}")
        params = tuple(_param(p, f"{where}: parameter {i}", shape_vars)
                       for i, p in enumerate(_field(obj, "params", list, where)))
        num_outputs = obj.get("num_outputs", 0)
        if type(num_outputs) is not int or not 0 <= num_outputs <= len(params):
            raise SerializationError(f"{where}: num_outputs={num_outputs!r} must be an int in "
                                     f"0..{len(params)} (its parameter count)")
        plain = {d for p in params for d in p.shape if isinstance(d, str)}
        for var in shape_vars:
            if var not in plain:
                raise SerializationError(f"{where}: shape variable {var!r} is not a plain dim of "
                                         f"any parameter, so nothing binds it")
        return FunctionInfo(name, params, tuple(shape_vars), symbol, num_outputs)


def _field(obj: dict, key: str, kind, where: str):
    value = obj.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise SerializationError(f"{where}: {key!r} must be a {kind.__name__}, got {str(value)[:60]}")
    return value


def _param(obj, where: str, shape_vars) -> ParamInfo:
    if not isinstance(obj, dict):
        raise SerializationError(f"{where} must be an object with name, shape and dtype, got "
                                 f"{str(obj)[:60]}")
    where = f"{where} ({obj.get('name')!r})" if isinstance(obj.get("name"), str) else where
    name = _field(obj, "name", str, where)
    dtype = _field(obj, "dtype", str, where)
    shape = _field(obj, "shape", list, where)
    dims = []
    for axis, dim in enumerate(shape):
        at = f"{where}, axis {axis}"
        dim = _dim_from_json(dim, at, shape_vars, 0)
        try:
            value = eval_dim(dim, {})
        except InputError as err:                   # a constant divisor of zero
            raise SerializationError(f"{at}: {err}") from None
        if value is not None and value < 0:
            raise SerializationError(f"{at}: extent {dim_str(dim)} = {value} is negative")
        dims.append(dim)
    return ParamInfo(name, tuple(dims), dtype)


def dim_from_json(dim, where: str, shape_vars=None):
    """A JSON dim validated (see the module doc), expressions as tuples; `shape_vars` lists the
    names a dim may use (None: any non-empty name)."""
    return _dim_from_json(dim, where, shape_vars, 0)


def _dim_from_json(dim, where: str, shape_vars, depth: int):
    """A JSON dim as ParamInfo holds it (expressions as tuples), validated; see the module doc."""
    if depth > MAX_DIM_DEPTH:
        raise SerializationError(f"{where}: shape dim nested deeper than {MAX_DIM_DEPTH} levels")
    if isinstance(dim, int) and not isinstance(dim, bool):
        return dim
    if isinstance(dim, str):
        if shape_vars is None and dim:
            return dim
        if shape_vars is None or dim not in shape_vars:
            raise SerializationError(f"{where}: dim {dim!r} is not one of its shape variables "
                                     f"{list(shape_vars or ())}")
        return dim
    if isinstance(dim, list) and len(dim) == 3 and isinstance(dim[0], str) and dim[0] in DIM_OPS:
        return (dim[0], _dim_from_json(dim[1], where, shape_vars, depth + 1),
                _dim_from_json(dim[2], where, shape_vars, depth + 1))
    raise SerializationError(f"{where}: bad shape dim {str(dim)[:60]}: expected an int, a shape "
                             f"variable or [op, a, b] with op in {list(DIM_OPS)}")


__all__ = ["FunctionInfo", "ParamInfo", "eval_dim", "dim_str", "dim_from_json", "SYMBOL_PREFIX", "DIM_OPS"]
