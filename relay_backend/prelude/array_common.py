"""What dynamic and static tensor arrays share: a tensor array is a Prelude `List` of a tensor
ADT (`tensor_t`), and its list-level functions are the same for both kinds.

    tensor_array(n)               n empty slots (the ADT's nil constructor)
    tensor_array_read(ta, i)      the i-th element          (Prelude nth)
    tensor_array_write(ta, i, v)  element i replaced by v   (Prelude update)
    tensor_array_scatter(ta, indices, values)   write values[k] at indices[k] for each k
    tensor_array_split(ta, value, lengths)      slot k := rows [offset_k, offset_k + lengths[k]) of value
    tensor_array_concat(ta)       the elements concatenated on axis 0
    tensor_array_stack(ta)        the elements stacked on a new axis 0
    tensor_array_gather(ta, indices)            the elements at indices, stacked

A subclass says how names are formed (`get_name`), which ADT is the element type
(`tensor_type_var`, its nil constructor `nil_ctor`) and which tensor array holds the results
of splitting, concatenating and stacking (`output_ops`): for dynamic arrays that is the same
ADT, for a static shape it is the ADT of another shape. The tensor-level functions
(tensor_take, tensor_expand_dims, tensor_concatenate) are the subclass's.
"""
import abc

from ..errors import ModuleLookupError
from ..ir.adt import Clause, Match, PatternConstructor, PatternVar, PatternWildcard
from ..ir.expr import Function, GlobalVar, If, Let, Var, const
from ..ir.types import Any, TensorType, scalar_type
from ..op.shape_query import shape_of
from ..op.tensor import add, equal, subtract
from ..op.transform import take

INT32 = scalar_type("int32")


class TensorArrayBase(abc.ABC):
    """Defines the list-level tensor array functions into `prelude.mod` (see the module doc)."""

    single_element_stack = False   # stack is the one element's expansion (static, batch_dim 1)
    # what register() defines, in order (later steps use earlier ones)
    REGISTER_STEPS = ("define_tensor_adt", "define_tensor_take", "define_tensor_expand_dims",
                      "define_tensor_concatenate", "define_tensor_array", "define_tensor_array_read",
                      "define_tensor_array_write", "define_tensor_array_unstack",
                      "define_tensor_array_scatter", "define_tensor_array_split",
                      "define_tensor_array_concat", "define_tensor_array_stack",
                      "define_tensor_array_gather")

    def __init__(self, prelude, dtype: str):
        self.prelude = prelude
        self.dtype = dtype
        self.list, self.cons, self.nil = prelude.mod.get_type("List")

    # --- what a subclass provides ----------------------------------------------------------------
    @abc.abstractmethod
    def get_name(self, canonical: str, extra_shapes=None) -> str:
        """The module name of `canonical` for this array (extra_shapes: static variants)."""

    @property
    @abc.abstractmethod
    def tensor_type_var(self):
        """The GlobalTypeVar of this array's tensor ADT."""

    @abc.abstractmethod
    def output_ops(self, kind: str) -> "TensorArrayBase":
        """The tensor array of the results: kind "rows" (split, concat: axis 0 of any length)
        or "stacked" (stack, gather: one more leading axis)."""

    @abc.abstractmethod
    def define_tensor_adt(self) -> None:
        """Add the tensor ADT of this array (once)."""

    @abc.abstractmethod
    def define_tensor_take(self) -> None:
        """tensor_take(t, lower, upper): rows [lower, upper) of an element."""

    @abc.abstractmethod
    def define_tensor_expand_dims(self) -> None:
        """tensor_expand_dims(t): an element with a new leading axis."""

    @abc.abstractmethod
    def define_tensor_concatenate(self) -> None:
        """tensor_concatenate(x, y): two elements joined on axis 0."""

    @abc.abstractmethod
    def define_tensor_array_unstack(self) -> None:
        """The unstack function(s): a tensor's rows as a tensor array."""

    def register(self) -> None:
        """Add the tensor ADT and every function of this array to the module."""
        for step in self.REGISTER_STEPS:
            getattr(self, step)()

    # --- lookup ----------------------------------------------------------------------------------
    @property
    def mod(self):
        return self.prelude.mod

    def get_global_var(self, canonical: str) -> GlobalVar:
        """The GlobalVar of one of this array's functions."""
        return self.mod.get_global_var(self.get_name(canonical))

    def get_type(self, canonical: str):
        return self.mod.get_global_type_var(self.get_name(canonical))

    def get_ctor(self, canonical: str):
        """A constructor of this array's tensor ADT by canonical name ("tensor_nil", ...)."""
        name = self.get_name(canonical)
        for ctor in self.mod.type_definitions[self.tensor_type_var].constructors:
            if ctor.name_hint == name:
                return ctor
        raise ModuleLookupError(f"{self.tensor_type_var.name_hint} has no constructor {name!r}")

    @property
    def nil_ctor(self):
        return self.get_ctor("tensor_nil")

    def list_of_tensors(self):
        return self.list(self.tensor_type_var())

    def has_type(self, name: str) -> bool:
        return any(gtv.name_hint == name for gtv in self.mod.get_global_type_vars())

    def is_cached(self, canonical: str, extra_shapes=None) -> bool:
        """Whether the function is in the module already (each is defined once)."""
        return self.get_name(canonical, extra_shapes) in self.mod

    def declared(self, canonical: str, extra_shapes=None) -> GlobalVar:
        """The GlobalVar a (possibly recursive) function is defined under."""
        name = self.get_name(canonical, extra_shapes)
        return self.mod.get_global_var(name) if name in self.mod else GlobalVar(name)

    def define(self, target, params, body, ret_type, extra_shapes=None) -> GlobalVar:
        """Add (or replace) a function of this array: `target` is its canonical name, or the
        GlobalVar from `declared` that a recursive body already calls. Returns the GlobalVar."""
        gv = target if isinstance(target, GlobalVar) else self.declared(target, extra_shapes)
        self.mod[gv] = Function(params, body, ret_type, [])
        return gv

    # --- list-level functions --------------------------------------------------------------------
    def define_tensor_array(self) -> None:
        """tensor_array(n): a list of n empty slots."""
        gv = self.declared("tensor_array")
        n = Var("n", INT32)
        body = If(equal(n, const(0)), self.nil(),
                  self.cons(self.nil_ctor(), gv(subtract(n, const(1)))))
        self.define(gv, [n], body, self.list_of_tensors())

    def define_tensor_array_read(self) -> None:
        """tensor_array_read(ta, i): the element at index i."""
        ta, i = Var("tensor_array", self.list_of_tensors()), Var("i", INT32)
        self.define("tensor_array_read", [ta, i], self.prelude.nth(ta, i), self.tensor_type_var())

    def define_tensor_array_write(self) -> None:
        """tensor_array_write(ta, i, v): the array with element i replaced by v."""
        ta, i = Var("tensor_array", self.list_of_tensors()), Var("i", INT32)
        v = Var("v", self.tensor_type_var())
        self.define("tensor_array_write", [ta, i, v], self.prelude.update(ta, i, v), self.list_of_tensors())

    def define_tensor_array_scatter(self, indices_shape=None) -> None:
        """tensor_array_scatter(ta, indices, values): values[k] written at indices[k], in order.
        With indices_shape the indices have that static shape (names get an "_indices_" part)."""
        extra = {"indices": indices_shape} if indices_shape is not None else None
        helper = self.declared("tensor_array_scatter_helper", extra)
        write, read = self.get_global_var("tensor_array_write"), self.get_global_var("tensor_array_read")
        indices_type = TensorType(tuple(indices_shape or (Any(),)), "int32")
        ta, k, limit = Var("ta", self.list_of_tensors()), Var("k", INT32), Var("limit", INT32)
        indices, values = Var("indices", indices_type), Var("values", self.list_of_tensors())
        step = helper(write(ta, take(indices, k), read(values, k)), add(k, const(1)), limit, indices, values)
        self.define(helper, [ta, k, limit, indices, values], If(equal(k, limit), ta, step),
                    self.list_of_tensors())
        ta, indices = Var("tensor_array", self.list_of_tensors()), Var("indices", indices_type)
        values = Var("values", self.list_of_tensors())
        count = const(int(indices_shape[0])) if indices_shape else take(shape_of(indices), const(0))
        self.define("tensor_array_scatter", [ta, indices, values],
                    helper(ta, const(0), count, indices, values), self.list_of_tensors(), extra)

    def define_tensor_array_split(self, value_ops=None, lengths_shape=None) -> None:
        """tensor_array_split(ta, value, lengths): slot k of ta becomes the rows
        [lengths[0] + ... + lengths[k-1], ... + lengths[k]) of value."""
        out = self.output_ops("rows")
        out.define_tensor_array_write()
        value_ops = value_ops or self
        value_ops.define_tensor_take()
        write, rows = out.get_global_var("tensor_array_write"), value_ops.get_global_var("tensor_take")
        lengths_type = TensorType(tuple(lengths_shape or (Any(),)), "int32")
        helper = self.declared("ta_split_helper")
        ta, value = Var("tensor_array", out.list_of_tensors()), Var("value", value_ops.tensor_type_var())
        offset, k, limit = Var("offset", INT32), Var("k", INT32), Var("limit", INT32)
        lengths = Var("lengths", lengths_type)
        length = take(lengths, k)
        rest = helper(ta, value, add(offset, length), add(k, const(1)), limit, lengths)
        body = If(equal(k, limit), ta, write(rest, k, rows(value, offset, add(offset, length))))
        self.define(helper, [ta, value, offset, k, limit, lengths], body, out.list_of_tensors())
        ta, value = Var("tensor_array", out.list_of_tensors()), Var("value", value_ops.tensor_type_var())
        lengths = Var("lengths", lengths_type)
        count = const(int(lengths_shape[0])) if lengths_shape else take(shape_of(lengths), const(0))
        self.define("tensor_array_split", [ta, value, lengths],
                    helper(ta, value, const(0), const(0), count, lengths), out.list_of_tensors())

    def define_tensor_array_concat(self) -> None:
        """tensor_array_concat(ta): the elements concatenated on axis 0 (the nil tensor if empty)."""
        out = self.output_ops("rows")
        out.define_tensor_concatenate()
        concat = out.get_global_var("tensor_concatenate")
        gv = self.declared("tensor_array_concat")
        ta = Var("tensor_array", out.list_of_tensors())
        head, tail = Var("head", out.tensor_type_var()), Var("tail", out.list_of_tensors())
        more = Match(tail, [Clause(PatternConstructor(self.nil), head),
                            Clause(PatternWildcard(), concat(head, gv(tail)))], False)
        body = Match(ta, [Clause(PatternConstructor(self.nil), out.nil_ctor()),
                          Clause(PatternConstructor(self.cons, [PatternVar(head), PatternVar(tail)]), more)],
                     False)
        self.define(gv, [ta], body, out.tensor_type_var())

    def define_tensor_array_stack(self) -> None:
        """tensor_array_stack(ta): the elements stacked on a new axis 0 (ta must not be empty;
        with single_element_stack it holds exactly one element)."""
        out = self.output_ops("stacked")
        expand = self.get_global_var("tensor_expand_dims")
        ta = Var("tensor_array", self.list_of_tensors())
        expanded = Var("expanded", out.list_of_tensors())
        if self.single_element_stack:
            result = self.prelude.hd(expanded)
        else:
            out.define_tensor_concatenate()
            result = self.prelude.foldl(out.get_global_var("tensor_concatenate"), self.prelude.hd(expanded),
                                        self.prelude.tl(expanded))
        self.define("tensor_array_stack", [ta], Let(expanded, self.prelude.map(expand, ta), result),
                    out.tensor_type_var())

    def define_tensor_array_gather(self) -> None:
        """tensor_array_gather(ta, indices): the elements at `indices`, stacked on axis 0."""
        out = self.output_ops("stacked")
        stack, read = self.get_global_var("tensor_array_stack"), self.get_global_var("tensor_array_read")
        helper = self.declared("tensor_array_gather_helper")
        ta, picked = Var("ta", self.list_of_tensors()), Var("picked", self.list_of_tensors())
        k, indices = Var("k", INT32), Var("indices", TensorType((Any(),), "int32"))
        before = subtract(k, const(1))
        body = If(equal(k, const(0)), stack(picked),
                  helper(ta, self.cons(read(ta, take(indices, before)), picked), before, indices))
        self.define(helper, [ta, picked, k, indices], body, out.tensor_type_var())
        ta, indices = Var("tensor_array", self.list_of_tensors()), Var("indices", TensorType((Any(),), "int32"))
        count = take(shape_of(indices), const(0))
        self.define("tensor_array_gather", [ta, indices], helper(ta, self.nil(), count, indices),
                    out.tensor_type_var())

    def define_unstack(self, canonical: str, tensor_type: TensorType, element_ops, element_ctor) -> None:
        """`canonical`(t): the rows of t (of tensor_type) as a tensor array of element_ops's
        ADT, each row wrapped by element_ctor; its helper recurses over the row index."""
        helper = self.declared(f"{canonical}_helper")
        k, count, t = Var("k", INT32), Var("count", INT32), Var("t", tensor_type)
        body = If(equal(k, count), self.nil(),
                  self.cons(element_ctor(take(t, k, axis=0)), helper(add(k, const(1)), count, t)))
        result = element_ops.list_of_tensors()
        self.define(helper, [k, count, t], body, result)
        t = Var("tensor", tensor_type)
        self.define(canonical, [t], helper(const(0), take(shape_of(t), const(0)), t), result)


__all__ = ["TensorArrayBase", "INT32"]
