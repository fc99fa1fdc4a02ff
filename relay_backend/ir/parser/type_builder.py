"""Types in Relay text: tensor types and their dims, tuples, functions, type parameters, ADTs.

`TypeBuilder` adds to the name tables what reading types needs: type parameter scopes, and the
type definitions of a module (`type List[A] { Cons(A, List[A]), Nil }`), declared before any
function is read so a function may name a type or constructor defined further down. A name in
a type is, in order: a type parameter in scope, a dtype (`float32` is `Tensor[(), float32]`),
an ADT (a bare ADT name is applied to no type arguments, as TVM reads it).
"""
from ...errors import IRConstructionError
from ...runtime.dtypes import SUPPORTED_DTYPES
from ..adt import Constructor, TypeData
from ..types import (FuncType, GlobalTypeVar, IncompleteType, RefType, TensorType, TupleType,
                     TypeCall, TypeVar)
from . import literals
from .scope import NameTable


_DIM_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "//": 2, "%": 2}


class TypeBuilder(NameTable):
    """Reads types and type definitions (see the module docstring)."""

    def declare_type(self, tree) -> None:
        name_tok = tree.children[0]
        name = str(name_tok)
        if name in self.new_types:
            raise self.error(f"type `{name}` is defined twice", name_tok)
        self.new_types.add(name)
        self.types[name] = GlobalTypeVar(name)

    def define_type(self, tree) -> None:
        name_tok = tree.children[0]
        parts = {getattr(k, "data", None): k for k in tree.children[1:]}
        tparams, ctor_block = parts.get("type_params"), parts.get("ctor_block")
        gtv = self.types[str(name_tok)]
        self.type_scopes.append({})
        type_vars = self.type_params(tparams)
        ctors = []
        for ctor_tree in (ctor_block.children if ctor_block is not None else ()):
            if ctor_tree is None:
                continue
            ctor_name, fields = (ctor_tree.children + [None])[:2]
            name = str(ctor_name)
            if name in self.ctors and self.ctors[name].belong_to.name_hint in self.new_types:
                raise self.error(f"a constructor named `{name}` was defined before", ctor_name)
            inputs = [self.type(t) for t in (fields.children if fields is not None else ()) if t is not None]
            ctor = Constructor(name, inputs, gtv, span=self.span(ctor_name))
            self.ctors[name] = ctor
            ctors.append(ctor)
        self.type_scopes.pop()
        self.type_data[gtv] = TypeData(gtv, type_vars, ctors)

    def type_params(self, tree) -> list:
        """Bind the names of a `[A, B]` list in the innermost type scope."""
        out = []
        for tok in (tree.children if tree is not None else ()):
            tv = TypeVar(str(tok))
            self.type_scopes[-1][str(tok)] = tv
            out.append(tv)
        return out

    def type(self, tree):
        """The Type of a type tree (types nest shallowly: plain recursion)."""
        kind = tree.data
        kids = [k for k in tree.children if k is not None]
        if kind == "tuple_type":
            return TupleType([self.type(k) for k in kids])
        if kind == "func_type":
            self.type_scopes.append({})
            try:
                has_tparams = getattr(kids[0], "data", None) == "type_params"
                tparams = self.type_params(kids[0]) if has_tparams else []
                *args, ret = [self.type(k) for k in kids[1 if has_tparams else 0:]]
            finally:
                self.type_scopes.pop()
            return FuncType(args, ret, tparams)
        if kind == "tensor_type":
            shape_tree, dtype_tok = kids
            dims = []
            for d in shape_tree.children:
                if d is None:
                    continue
                dims.append(self.dim(d))
            try:
                return TensorType(dims, str(dtype_tok))
            except IRConstructionError as err:
                raise self.error(str(err), tree) from None
        if kind == "named_type":
            return self.named_type(tree, kids)
        if kind == "incomplete_type":
            return IncompleteType()
        if kind == "ref_type":
            return RefType(self.type(kids[0]))
        raise self.error(f"unexpected type syntax {kind}", tree)

    def dim(self, tree, operand: bool = False):
        """One dim of a shape: a leaf (literals.make_dim) or arithmetic on dims (literals.dim_op),
        in the form ir/dims.py prints. Dim expressions nest shallowly: plain recursion. A
        negative constant may only be an `operand` of such arithmetic (`n + (-1)`)."""
        kind = tree.data
        if kind == "dim_meta":
            raise self.error("meta references are not supported as shape dimensions", tree)
        try:
            if kind == "dim_chain":
                return self._dim_chain(tree)
            if kind == "dim_call":
                name, *args = [k for k in tree.children if k is not None]
                return literals.dim_call(str(name), [self.dim(a, operand=True) for a in args])
            if kind == "dim_typed_name":
                name, dtype = (str(k) for k in tree.children)
                return literals.make_dim(name, self.size_vars, dtype=dtype)
            text = "?" if kind == "dim_any" else str(tree.children[0])
            return literals.make_dim(text, self.size_vars, allow_negative=operand)
        except ValueError as err:
            raise self.error(str(err), tree) from None

    def _dim_chain(self, tree):
        """`a + b * c - d`: * // % bind tighter than + -, both left-associative."""
        kids = tree.children
        operands, ops = [self.dim(kids[0], operand=True)], []
        for op_tok, term in zip(kids[1::2], kids[2::2]):
            op = str(op_tok)
            while ops and _DIM_PRECEDENCE[ops[-1]] >= _DIM_PRECEDENCE[op]:
                rhs = operands.pop()
                operands.append(literals.dim_op(ops.pop(), operands.pop(), rhs))
            ops.append(op)
            operands.append(self.dim(term, operand=True))
        while ops:
            rhs = operands.pop()
            operands.append(literals.dim_op(ops.pop(), operands.pop(), rhs))
        return operands[0]

    def named_type(self, tree, kids):
        name = str(kids[0])
        args = [self.type(t) for t in (kids[1].children if len(kids) > 1 else ()) if t is not None]
        for scope in reversed(self.type_scopes):
            if name in scope:
                if len(kids) > 1:
                    raise self.error(f"type parameter `{name}` cannot take type arguments", tree)
                return scope[name]
        if name in SUPPORTED_DTYPES and len(kids) == 1:
            return TensorType((), name)
        gtv = self.types.get(name)
        if gtv is None:
            gtv = self.types[name] = GlobalTypeVar(name)
        if gtv not in self.type_data:
            self.type_uses.setdefault(name, tree)
        return TypeCall(gtv, args)


__all__ = ["TypeBuilder"]
