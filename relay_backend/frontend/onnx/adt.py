"""ONNX sequences and optionals as Relay ADT values: the Prelude's List and Option.

An ONNX `seq(tensor(float))` is a Relay `List[Tensor[(...), float32]]` and an ONNX
`optional(T)` an `Option[T]`. Relay gives every element of a list one type, so the element type
is the join of the elements' types: dims that differ between elements become `?` (Any); a
rank or dtype that differs cannot be expressed and is reported.

Many sequences are known element by element while importing (SequenceConstruct, SplitToSequence,
SequenceInsert at a constant position into such a sequence, ...). The importer remembers those
(`StaticSequence` / `StaticOptional`), so SequenceAt with a constant position, ConcatFromSequence
and OptionalGetElement on them give the element expressions themselves, with their exact types;
the graph executor can then run models whose sequences never reach a graph output. The List
expression is still built (a typed Cons chain) for whatever needs the ADT value: a graph output,
a Loop-carried value, a run-time position.

The helpers here build and type those expressions for the importer (which cannot type ADT
values with the op relations, so each expression built here records its type with
`importer.typed`).
"""
from ...errors import OpNotImplemented
from ...ir.expr import Call, Let, var
from ...ir.module import IRModule
from ...ir.shape_math import dims_equal
from ...ir.types import Any, TensorType, TupleType, TypeCall, type_to_str
from .common import InvalidModelError, onnx_dtype

_TEMPLATE = []  # the parsed Prelude + std/sequence.rly module, parsed once per process


def _template() -> IRModule:
    if not _TEMPLATE:
        mod = IRModule()
        mod.import_from_std("prelude.rly")
        mod.import_from_std("sequence.rly")
        _TEMPLATE.append(mod)
    return _TEMPLATE[0]


class AdtKit:
    """The List and Option ADTs and the list functions, in a module of their own that becomes the
    imported model's module (main is added to it)."""

    def __init__(self):
        self.mod = _template().copy()
        self.list_type, self.cons, self.nil = self.mod.get_type("List")
        self.option_type, self.some, self.none = self.mod.get_type("Option")

    def function(self, name: str):
        """The GlobalVar of a Prelude / sequence.rly function (`nth`, `length`, `list_insert`...)."""
        return self.mod.get_global_var(name)

    def list_of(self, elem) -> TypeCall:
        return TypeCall(self.list_type, [elem])

    def option_of(self, inner) -> TypeCall:
        return TypeCall(self.option_type, [inner])

    def is_list(self, ty) -> bool:
        return isinstance(ty, TypeCall) and ty.func is self.list_type

    def is_option(self, ty) -> bool:
        return isinstance(ty, TypeCall) and ty.func is self.option_type


class StaticSequence:
    """A sequence whose elements are known at import time (expressions, maybe computed at run
    time); `elem_type` is the join of their types, None while the sequence is empty and nothing
    says more than its dtype."""

    def __init__(self, items, elem_type, dtype: str):
        self.items, self.elem_type, self.dtype = list(items), elem_type, dtype


class StaticOptional:
    """An optional known at import time to hold `item` (an expression) or nothing (item None)."""

    def __init__(self, item, inner_type):
        self.item, self.inner_type = item, inner_type


class UnknownSequence:
    """Marks a List variable whose element type is a stand-in (a Loop-carried sequence that starts
    empty, while the Loop converter finds the element type from the body): its element type reads
    as unknown."""

    def __init__(self, dtype: str):
        self.dtype = dtype


class UnknownElem:
    """The element type of an empty sequence that nothing has typed yet (only inside value_type /
    join_types; `settle` turns it into a Relay type)."""

    def __init__(self, dtype: str):
        self.dtype = dtype

    def __eq__(self, other):
        return isinstance(other, UnknownElem) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("UnknownElem", self.dtype))


# --- types ---------------------------------------------------------------------------------------
def join_types(a, b, what: str):
    """The most precise type both `a` and `b` fit (None or UnknownElem stand for "not known yet"):
    equal dims stay, differing dims become Any. A differing rank, dtype or kind raises
    OpNotImplemented."""
    if a is None or (isinstance(a, UnknownElem) and b is not None):
        return b
    if b is None or isinstance(b, UnknownElem) or a == b:
        return a
    if isinstance(a, TensorType) and isinstance(b, TensorType) and a.dtype == b.dtype and a.ndim == b.ndim:
        return TensorType([x if dims_equal(x, y) else Any() for x, y in zip(a.shape, b.shape)], a.dtype)
    if isinstance(a, TypeCall) and isinstance(b, TypeCall) and a.func is b.func and len(a.args) == len(b.args):
        return TypeCall(a.func, [join_types(x, y, what) for x, y in zip(a.args, b.args)])
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.fields) == len(b.fields):
        return TupleType([join_types(x, y, what) for x, y in zip(a.fields, b.fields)])
    raise OpNotImplemented(f"{what}: values of types {type_to_str(a)} and {type_to_str(b)} meet in one place "
                           "(a sequence's elements, an If's branches or a Loop's iterations); Relay gives such "
                           "a place one type, which cannot cover a different rank or dtype")


def value_type(importer, expr):
    """The type of `expr` for joining: as importer.type_of, but a sequence whose element type is not
    known yet has UnknownElem as its element type."""
    static = static_of(importer, expr)
    if isinstance(static, StaticSequence):
        return importer.adt.list_of(static.elem_type or UnknownElem(static.dtype))
    if isinstance(static, StaticOptional) and static.item is not None:
        return importer.adt.option_of(join_types(static.inner_type, value_type(importer, static.item), "Optional"))
    if isinstance(static, UnknownSequence):
        return importer.adt.list_of(UnknownElem(static.dtype))
    return importer.type_of(expr)


def settle(ty):
    """`ty` with every UnknownElem replaced by placeholder_elem of its dtype."""
    if isinstance(ty, UnknownElem):
        return placeholder_elem(ty.dtype)
    if isinstance(ty, TypeCall):
        return TypeCall(ty.func, [settle(a) for a in ty.args])
    if isinstance(ty, TupleType):
        return TupleType([settle(f) for f in ty.fields])
    return ty


def has_unknown(ty) -> bool:
    if isinstance(ty, UnknownElem):
        return True
    if isinstance(ty, TypeCall):
        return any(has_unknown(a) for a in ty.args)
    if isinstance(ty, TupleType):
        return any(has_unknown(f) for f in ty.fields)
    return False


def placeholder_elem(dtype: str) -> TensorType:
    """The element type written for an empty sequence whose element shape nothing tells (a 0-d
    tensor of its dtype: it types no element, and joining with any element type replaces it)."""
    return TensorType((), dtype)


def onnx_value_type(kit_fn, type_proto, what: str, elem_shape=None):
    """The Relay type of an ONNX TypeProto (tensor, sequence, optional). `kit_fn()` gives the
    AdtKit (made only when an ADT is needed). `elem_shape` (the user's shape={...} entry) replaces
    the declared shape of the innermost tensor. Returns None for a tensor whose shape (rank) is not
    declared and not given."""
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        tt = type_proto.tensor_type
        dtype = onnx_dtype(tt.elem_type, what) if tt.elem_type else "float32"
        if elem_shape is not None:
            return TensorType(tuple(elem_shape), dtype)
        if not tt.HasField("shape"):
            return None
        dims = tuple(int(d.dim_value) if d.HasField("dim_value") else Any() for d in tt.shape.dim)
        if any(isinstance(d, int) and d < 0 for d in dims):
            raise InvalidModelError(f"{what} declares a negative dimension in its shape {dims}")
        return TensorType(dims, dtype)
    if kind == "sequence_type":
        inner = type_proto.sequence_type.elem_type
        elem = onnx_value_type(kit_fn, inner, f"{what} (its elements)", elem_shape)
        if elem is None:
            return None
        return kit_fn().list_of(elem)
    if kind == "optional_type":
        inner = onnx_value_type(kit_fn, type_proto.optional_type.elem_type, f"{what} (its value)", elem_shape)
        return None if inner is None else kit_fn().option_of(inner)
    raise OpNotImplemented(f"{what}: ONNX {kind or 'untyped'} values are not supported (tensors, sequences "
                           "of tensors and optionals are)")


def onnx_value_dtype(type_proto) -> str:
    """The dtype of the innermost tensor of an ONNX TypeProto ("float32" when none is declared)."""
    while type_proto.WhichOneof("value") in ("sequence_type", "optional_type"):
        kind = type_proto.WhichOneof("value")
        type_proto = getattr(type_proto, kind).elem_type
    if type_proto.WhichOneof("value") == "tensor_type" and type_proto.tensor_type.elem_type:
        return onnx_dtype(type_proto.tensor_type.elem_type, "an ONNX type")
    return "float32"


# --- building ------------------------------------------------------------------------------------
def make_sequence(importer, items, dtype: str = None, elem_type=None, what: str = "sequence"):
    """A List expression of `items` (tensor expressions), remembered as a StaticSequence.
    `elem_type` is joined with the items' types; `dtype` names the element dtype of an empty one."""
    for item in items:
        elem_type = join_types(elem_type, importer.type_of(item), what)
    if elem_type is not None:
        if not isinstance(elem_type, TensorType):
            raise OpNotImplemented(f"{what}: sequences of {type_to_str(elem_type)} are not supported (sequences "
                                   "of tensors are)")
        dtype = elem_type.dtype
    static = StaticSequence(items, elem_type, dtype or "float32")
    return remember(importer, _list_expr(importer, static.items, static.elem_type or placeholder_elem(static.dtype)),
                     static)


def make_optional(importer, item, inner_type):
    """An Option expression: Some(item), or None of `inner_type` when item is None."""
    kit = importer.adt
    if item is not None:
        inner_type = join_types(inner_type, importer.type_of(item), "Optional")
        expr = importer.typed(Call(kit.some, [item], type_args=[inner_type]), kit.option_of(inner_type))
    else:
        expr = importer.typed(Call(kit.none, [], type_args=[inner_type]), kit.option_of(inner_type))
    return remember(importer, expr, StaticOptional(item, inner_type))


def _list_expr(importer, items, elem_type):
    kit = importer.adt
    list_t = kit.list_of(elem_type)
    expr = importer.typed(Call(kit.nil, [], type_args=[elem_type]), list_t)
    for item in reversed(items):
        expr = importer.typed(Call(kit.cons, [item, expr], type_args=[elem_type]), list_t)
    return expr


def remember(importer, expr, static):
    importer.structure[id(expr)] = (expr, static)
    return expr


def static_of(importer, expr):
    """The StaticSequence / StaticOptional `expr` was built from, or None."""
    hit = importer.structure.get(id(expr))
    return hit[1] if hit is not None and hit[0] is expr else None


def sequence_elem_type(importer, expr, what: str):
    """The element type of sequence `expr` (None: an empty sequence of unknown element shape)."""
    static = static_of(importer, expr)
    if isinstance(static, StaticSequence):
        return static.elem_type
    if isinstance(static, UnknownSequence):
        return None
    ty = importer.type_of(expr)
    if not importer.adt.is_list(ty):
        raise InvalidModelError(f"{what} expects a sequence, got a value of type {type_to_str(ty)}")
    return ty.args[0]


def sequence_dtype(importer, expr, what: str) -> str:
    static = static_of(importer, expr)
    if isinstance(static, (StaticSequence, UnknownSequence)):
        return static.dtype
    return sequence_elem_type(importer, expr, what).dtype


def coerce(importer, expr, ty):
    """`expr` as a value of type `ty` (a join of its own type): a static sequence or optional is
    rebuilt with `ty`'s element type, anything else is bound to a variable annotated with `ty`."""
    if importer.type_of(expr) == ty:
        return expr
    static = static_of(importer, expr)
    kit = importer.adt
    if isinstance(static, StaticSequence) and kit.is_list(ty):
        return make_sequence(importer, static.items, static.dtype, ty.args[0])
    if isinstance(static, StaticOptional) and kit.is_option(ty):
        item = None if static.item is None else coerce(importer, static.item, ty.args[0])
        return make_optional(importer, item, ty.args[0])
    bound = var("coerced", ty)
    return importer.typed(Let(bound, expr, bound), ty)
