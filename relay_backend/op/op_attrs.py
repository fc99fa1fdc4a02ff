"""TVM's Op attribute API on OpDef: set_attr / get_attr / has_attr / reset_attr, and the methods a
user op is built with (set_num_inputs, add_argument, add_type_rel, set_support_level,
set_attrs_type_key).

TVM keeps everything about an op in named attributes ("FTVMCompute", "TOpPattern", ...). Here
the ones passes and executors read are OpDef fields, so those keys read and write the field:

    FTVMCompute -> compute      TOpPattern -> pattern        FTVMStrategy -> fstrategy
    FTVMSchedule -> schedule    FShapeFunc -> shape_func     TShapeDataDependent -> shape_data_dependent
    TOpIsStateful -> stateful   FReference -> ref (the numpy reference; relay_backend's own key)

Any other key (FPrimalGradient, FTVMLegalize, ...) is kept in a table a pass reads with
get_attr. Registering a key again needs a higher level than the first registration (a built-in
op's declared fields count as level 10, TVM's default), so a user overrides a built-in rule on
purpose, never by accident; reset_attr removes a registration (TempOpAttr uses it).
"""
from ..errors import OpDefinitionError
from ..ir.attrs import ATTRS_TYPES, Attrs
from .pattern import OpPattern

GENERIC_SCHEDULES = ("injective", "broadcast", "reduce")   # register_*_schedule's names
FIELD_ATTRS = {"FTVMCompute": "compute", "TOpPattern": "pattern", "FTVMStrategy": "fstrategy",
               "FTVMSchedule": "schedule", "FShapeFunc": "shape_func",
               "TShapeDataDependent": "shape_data_dependent", "TOpIsStateful": "stateful",
               "FReference": "ref"}
DECLARED_LEVEL = 10
_UNSET = {"pattern": OpPattern.OPAQUE, "stateful": False}   # a field's value when nothing is set
_CALLABLE_FIELDS = ("compute", "fstrategy", "shape_func", "ref")
_GENERATION = [0]
_LIBRARY_GENERATION = [None]   # the generation once the package's own ops were all defined


def definition_generation() -> int:
    """A number that changes whenever an operator's definition changes after import (an
    attribute set or reset, a user op registered or removed, a strategy added). Caches of
    compiled kernels key on it, so a kernel built from an op's old compute or strategy is never
    served after the op changed (e.g. inside a TempOpAttr block, or after it)."""
    return _GENERATION[0]


def bump_generation() -> None:
    """Record that an operator definition changed (see definition_generation)."""
    _GENERATION[0] += 1


def mark_library_defined() -> None:
    """Note that the package has defined all its own operators (relay_backend/__init__.py calls
    it last): any later change comes from user code."""
    _LIBRARY_GENERATION[0] = _GENERATION[0]


def definitions_are_library_only() -> bool:
    """True while every operator is as the package defined it: no op, attribute or strategy was
    added, replaced or restored (even to its old value) since import. Only then is a kernel's
    lowering a function of the package's source code, which a cache across processes may
    assume (te_compiler/disk_records.py)."""
    return _LIBRARY_GENERATION[0] is not None and _GENERATION[0] == _LIBRARY_GENERATION[0]


def _checked_value(op_name: str, key: str, field: str, value):
    """`value` as the field stores it, or an OpDefinitionError naming what is wrong."""
    if field == "pattern":
        try:
            return OpPattern(int(value))
        except (TypeError, ValueError):
            raise OpDefinitionError(f"{op_name}: {key} must be an OpPattern (or its int value), got "
                                    f"{value!r}") from None
    if field in _CALLABLE_FIELDS and value is not None and not callable(value):
        raise OpDefinitionError(f"{op_name}: {key} must be a function, got {type(value).__name__}")
    if field == "schedule" and not (value is None or callable(value) or value in GENERIC_SCHEDULES):
        raise OpDefinitionError(f"{op_name}: {key} must be a schedule function or one of "
                                f"{list(GENERIC_SCHEDULES)}, got {value!r}")
    return value


def missing_piece(op_name: str, field: str) -> str:
    """How a user adds the piece `field` an op lacks (for the error that names it)."""
    hints = {
        "rel": f"a type relation: relay.op.get({op_name!r}).add_type_rel(\"MyRel\", fn) with "
               f"fn(arg_types, attrs) -> output type",
        "ref": f"a numpy reference for the debug executor and FoldConstant: "
               f"relay.op.register_reference({op_name!r}, fn) with fn(*numpy_inputs, attrs) -> array",
        "compute": f"a te compute for the compiled executors: relay.op.register_compute({op_name!r}, "
                   f"fn) with fn(attrs, inputs, out_type) -> [te.Tensor] (or register_strategy)",
        "num_inputs": f"its number of inputs: relay.op.get({op_name!r}).set_num_inputs(n)",
    }
    return f"{op_name} has no {field}; add {hints.get(field, field)}"


class OpAttrs:
    """Mixin for OpDef: TVM's attribute table and incremental-definition methods."""

    def _levels(self) -> dict:
        return self.__dict__.setdefault("_attr_levels", {})

    def _table(self) -> dict:
        return self.__dict__.setdefault("_attr_map", {})

    def attr_level(self, key: str):
        """The level `key` is registered at, or None when it is not."""
        level = self._levels().get(key)
        if level is None and key in FIELD_ATTRS and not getattr(self, "user_defined", False) \
                and key not in self.__dict__.get("_reset_keys", ()):
            value = getattr(self, FIELD_ATTRS[key], None)
            if value is not None and value != _UNSET.get(FIELD_ATTRS[key]):
                level = DECLARED_LEVEL   # declared with the op
        return level

    def set_attr(self, key: str, value, plevel: int = 10) -> None:
        """Attach `value` under `key` (tvm Op.set_attr); replacing one needs a higher plevel."""
        old = self.attr_level(key)
        if old is not None and old >= plevel:
            raise OpDefinitionError(f"{self.name}: attribute {key!r} is already registered at level "
                                    f"{old}; register with level > {old} to override it")
        field = FIELD_ATTRS.get(key)
        if field is not None:
            value = _checked_value(self.name, key, field, value)
        self._levels()[key] = plevel
        if field is None:
            self._table()[key] = value
        else:
            setattr(self, field, value)
        bump_generation()

    def get_attr(self, key: str):
        """The value attached under `key`, or None."""
        field = FIELD_ATTRS.get(key)
        if field is None:
            return self._table().get(key)
        value = getattr(self, field, None)
        return None if field in _UNSET and self.attr_level(key) is None else value

    def has_attr(self, key: str) -> bool:
        return self.get_attr(key) is not None

    def reset_attr(self, key: str) -> None:
        """Remove what is attached under `key` (tvm Op.reset_attr); a field goes back to unset."""
        self._levels().pop(key, None)
        field = FIELD_ATTRS.get(key)
        if field is None:
            self._table().pop(key, None)
        else:
            setattr(self, field, _UNSET.get(field))
            self.__dict__.setdefault("_reset_keys", set()).add(key)   # no longer declared
        bump_generation()

    # --- building an op step by step (tvm.ir.Op methods) ----------------------------------------
    def set_num_inputs(self, n: int) -> None:
        if not isinstance(n, int) or n < 0:
            raise OpDefinitionError(f"{self.name}: set_num_inputs needs an int >= 0, got {n!r}")
        self.num_inputs = n
        self.input_names = tuple(self.input_names[:n]) + tuple(
            f"arg{i}" for i in range(len(self.input_names), n))

    def add_argument(self, name: str, type: str = "Tensor", description: str = "") -> None:  # noqa: A002
        """Name the next input (tvm Op.add_argument); the names show in arity errors."""
        self.arguments.append((name, type, description))
        named = [a[0] for a in self.arguments]
        self.input_names = tuple(named) + tuple(self.input_names[len(named):])
        if self.num_inputs < len(named):
            self.num_inputs = len(named)

    def add_type_rel(self, rel_name: str, type_rel_func=None) -> None:
        """Attach the type relation: `type_rel_func(arg_types, attrs) -> output type`, or one of
        the built-in relations by TVM's name ("Identity", "Broadcast", "BroadcastComp",
        "Reduce") when no function is given."""
        if type_rel_func is None:
            from . import relations
            builtin = {"Identity": relations.identity_rel, "Broadcast": relations.broadcast_rel,
                       "BroadcastComp": relations.broadcast_comp_rel, "Reduce": relations.reduce_rel}
            if rel_name not in builtin:
                raise OpDefinitionError(f"{self.name}: no built-in type relation {rel_name!r}; give a "
                                        f"function, or use one of {sorted(builtin)}")
            type_rel_func = builtin[rel_name]
        if not callable(type_rel_func):
            raise OpDefinitionError(f"{self.name}: the type relation must be callable, got "
                                    f"{type(type_rel_func).__name__}")
        self.rel = type_rel_func
        self.rel_name = rel_name
        bump_generation()

    def set_support_level(self, level: int) -> None:
        self.support_level = int(level)

    def set_attrs_type_key(self, key) -> None:
        """The op's attrs class: an Attrs dataclass, or its name ("MyAttrs" or
        "relay.attrs.MyAttrs"); calls then take attrs of that class, and text `key=value`s
        build one."""
        cls = key if isinstance(key, type) else ATTRS_TYPES.get(str(key).rsplit(".", 1)[-1])
        if cls is None or not issubclass(cls, Attrs):
            raise OpDefinitionError(f"{self.name}: no Attrs class {key!r}; define a frozen dataclass "
                                    f"deriving from relay_backend.ir.Attrs first")
        self.attrs_type = cls
        bump_generation()

    set_attrs_type = set_attrs_type_key


__all__ = ["OpAttrs", "FIELD_ATTRS", "GENERIC_SCHEDULES", "missing_piece", "definition_generation",
           "bump_generation"]
