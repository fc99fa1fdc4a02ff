"""The Relay prelude (tvm.relay.prelude.Prelude): the List and Option ADTs and polymorphic list
functions, added to a module as ordinary typed globals.

    List[A]   = Cons(A, List[A]) | Nil
    Option[A] = Some(A) | None

Functions (globals of the module, also attributes of the Prelude): id, compose, hd, tl, nth,
update, length, map, foldl, foldr, sum (of int32 scalars, as TVM's), rev, concat, filter, zip.
Every function carries its type parameters and full annotations so InferType can type it, and
tail-recursive ones (foldl) run in constant stack in the interpreter.
"""
from .ir.adt import Clause, Constructor, Match, PatternConstructor, PatternTuple, PatternVar, \
    PatternWildcard, TypeData
from .ir.expr import Call, Function, GlobalVar, If, Tuple, Var, const
from .ir.module import IRModule
from .ir.types import FuncType, GlobalTypeVar, TensorType, TupleType, TypeCall, TypeVar
from .op.tensor import add, equal, subtract

INT32 = TensorType((), "int32")
BOOL = TensorType((), "bool")


class Prelude:
    """Adds the prelude to `mod` (a new IRModule if None); adding it twice is a no-op."""

    FUNCTIONS = ("id", "compose", "hd", "tl", "nth", "update", "length", "map", "foldl", "foldr",
                 "sum", "rev", "concat", "filter", "zip")

    def __init__(self, mod: IRModule = None):
        self.mod = mod if mod is not None else IRModule()
        self.load_prelude()

    # --- lookup --------------------------------------------------------------------------------
    def get_global_var(self, name: str) -> GlobalVar:
        return self.mod.get_global_var(name)

    def get_type(self, name: str) -> tuple:
        """(GlobalTypeVar, *constructors), e.g. get_type("List") -> (List, Cons, Nil)."""
        return self.mod.get_type(name)

    def get_ctor(self, adt_name: str, ctor_name: str) -> Constructor:
        for ctor in self.mod.get_type(adt_name)[1:]:
            if ctor.name_hint == ctor_name:
                return ctor
        raise KeyError(f"ADT {adt_name} has no constructor {ctor_name}")

    def __getattr__(self, name: str):
        if name in Prelude.FUNCTIONS and "mod" in self.__dict__ and name in self.mod:
            return self.mod.get_global_var(name)
        raise AttributeError(f"Prelude has no attribute {name!r}; its functions are {list(Prelude.FUNCTIONS)}")

    # --- definitions ----------------------------------------------------------------------------
    def load_prelude(self) -> None:
        mod = self.mod
        if "List" in mod._tvars:
            self._bind_names()
            return
        a = TypeVar("a")
        lst = GlobalTypeVar("List")
        cons = Constructor("Cons", [a, TypeCall(lst, [a])], lst)
        nil = Constructor("Nil", [], lst)
        mod.add_type_definition(TypeData(lst, [a], [cons, nil]))
        b = TypeVar("a")
        opt = GlobalTypeVar("Option")
        some = Constructor("Some", [b], opt)
        none = Constructor("None", [], opt)
        mod.add_type_definition(TypeData(opt, [b], [some, none]))
        self._bind_names()
        gvs = {name: GlobalVar(name) for name in Prelude.FUNCTIONS}
        for name in Prelude.FUNCTIONS:
            mod[gvs[name]] = getattr(self, f"_define_{name}")(gvs)

    def _bind_names(self) -> None:
        self.l, self.cons, self.nil = self.mod.get_type("List")
        self.optional, self.some, self.none = self.mod.get_type("Option")

    def _list(self, t):
        return TypeCall(self.l, [t])

    def _define_id(self, g):
        a = TypeVar("a")
        x = Var("x", a)
        return Function([x], x, a, [a])

    def _define_compose(self, g):
        a, b, c = TypeVar("a"), TypeVar("b"), TypeVar("c")
        f, gg = Var("f", FuncType([b], c)), Var("g", FuncType([a], b))
        x = Var("x", a)
        inner = Function([x], _call(f, _call(gg, x)), c)
        return Function([f, gg], inner, FuncType([a], c), [a, b, c])

    def _define_hd(self, g):
        a = TypeVar("a")
        xs, x = Var("xs", self._list(a)), Var("x", a)
        body = Match(xs, [Clause(PatternConstructor(self.cons, [PatternVar(x), PatternWildcard()]), x)],
                     complete=False)
        return Function([xs], body, a, [a])

    def _define_tl(self, g):
        a = TypeVar("a")
        xs, rest = Var("xs", self._list(a)), Var("rest", self._list(a))
        body = Match(xs, [Clause(PatternConstructor(self.cons, [PatternWildcard(), PatternVar(rest)]), rest)],
                     complete=False)
        return Function([xs], body, self._list(a), [a])

    def _define_nth(self, g):
        a = TypeVar("a")
        xs, n = Var("xs", self._list(a)), Var("n", INT32)
        body = If(equal(n, const(0)), _call(g["hd"], xs),
                  _call(g["nth"], _call(g["tl"], xs), subtract(n, const(1))))
        return Function([xs, n], body, a, [a])

    def _define_update(self, g):
        a = TypeVar("a")
        xs, n, v = Var("xs", self._list(a)), Var("n", INT32), Var("v", a)
        body = If(equal(n, const(0)), self.cons(v, _call(g["tl"], xs)),
                  self.cons(_call(g["hd"], xs),
                            _call(g["update"], _call(g["tl"], xs), subtract(n, const(1)), v)))
        return Function([xs, n, v], body, self._list(a), [a])

    def _define_length(self, g):
        a = TypeVar("a")
        xs, rest = Var("xs", self._list(a)), Var("rest", self._list(a))
        body = Match(xs, [
            Clause(PatternConstructor(self.cons, [PatternWildcard(), PatternVar(rest)]),
                   add(const(1), _call(g["length"], rest))),
            Clause(PatternConstructor(self.nil), const(0))])
        return Function([xs], body, INT32, [a])

    def _define_map(self, g):
        a, b = TypeVar("a"), TypeVar("b")
        f = Var("f", FuncType([a], b))
        xs, x, rest = Var("xs", self._list(a)), Var("x", a), Var("rest", self._list(a))
        body = Match(xs, [
            Clause(PatternConstructor(self.cons, [PatternVar(x), PatternVar(rest)]),
                   self.cons(_call(f, x), _call(g["map"], f, rest))),
            Clause(PatternConstructor(self.nil), self.nil())])
        return Function([f, xs], body, self._list(b), [a, b])

    def _define_foldl(self, g):
        a, b = TypeVar("a"), TypeVar("b")
        f = Var("f", FuncType([a, b], a))
        acc, xs = Var("acc", a), Var("xs", self._list(b))
        x, rest = Var("x", b), Var("rest", self._list(b))
        body = Match(xs, [
            Clause(PatternConstructor(self.cons, [PatternVar(x), PatternVar(rest)]),
                   _call(g["foldl"], f, _call(f, acc, x), rest)),
            Clause(PatternConstructor(self.nil), acc)])
        return Function([f, acc, xs], body, a, [a, b])

    def _define_foldr(self, g):
        a, b = TypeVar("a"), TypeVar("b")
        f = Var("f", FuncType([a, b], b))
        acc, xs = Var("acc", b), Var("xs", self._list(a))
        x, rest = Var("x", a), Var("rest", self._list(a))
        body = Match(xs, [
            Clause(PatternConstructor(self.cons, [PatternVar(x), PatternVar(rest)]),
                   _call(f, x, _call(g["foldr"], f, acc, rest))),
            Clause(PatternConstructor(self.nil), acc)])
        return Function([f, acc, xs], body, b, [a, b])

    def _define_sum(self, g):
        xs = Var("xs", self._list(INT32))
        x, y = Var("x", INT32), Var("y", INT32)
        add_f = Function([x, y], add(x, y), INT32)
        return Function([xs], _call(g["foldl"], add_f, const(0), xs), INT32)

    def _define_rev(self, g):
        a = TypeVar("a")
        xs = Var("xs", self._list(a))
        acc, x = Var("acc", self._list(a)), Var("x", a)
        step = Function([acc, x], self.cons(x, acc), self._list(a))
        return Function([xs], _call(g["foldl"], step, self.nil(), xs), self._list(a), [a])

    def _define_concat(self, g):
        a = TypeVar("a")
        xs, ys = Var("xs", self._list(a)), Var("ys", self._list(a))
        x, acc = Var("x", a), Var("acc", self._list(a))
        step = Function([x, acc], self.cons(x, acc), self._list(a))
        return Function([xs, ys], _call(g["foldr"], step, ys, xs), self._list(a), [a])

    def _define_filter(self, g):
        a = TypeVar("a")
        f = Var("f", FuncType([a], BOOL))
        xs, x, rest = Var("xs", self._list(a)), Var("x", a), Var("rest", self._list(a))
        kept = _call(g["filter"], f, rest)
        body = Match(xs, [
            Clause(PatternConstructor(self.cons, [PatternVar(x), PatternVar(rest)]),
                   If(_call(f, x), self.cons(x, kept), kept)),
            Clause(PatternConstructor(self.nil), self.nil())])
        return Function([f, xs], body, self._list(a), [a])

    def _define_zip(self, g):
        a, b = TypeVar("a"), TypeVar("b")
        xs, ys = Var("xs", self._list(a)), Var("ys", self._list(b))
        x, xr, y, yr = Var("x", a), Var("xr", self._list(a)), Var("y", b), Var("yr", self._list(b))
        both = PatternTuple([PatternConstructor(self.cons, [PatternVar(x), PatternVar(xr)]),
                             PatternConstructor(self.cons, [PatternVar(y), PatternVar(yr)])])
        body = Match(Tuple([xs, ys]), [
            Clause(both, self.cons(Tuple([x, y]), _call(g["zip"], xr, yr))),
            Clause(PatternWildcard(), self.nil())])
        return Function([xs, ys], body, self._list(TupleType([a, b])), [a, b])


def _call(fn, *args):
    return Call(fn, args)


__all__ = ["Prelude"]
