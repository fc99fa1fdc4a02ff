"""VMFunctionCompiler: one lifted, fused, manifested global function -> bytecode (TVM's
VMFunctionCompiler). Kernel calls arrive as the memory dialect ManifestAlloc writes.

Registers: parameters take 0..n-1 (a `Closure=1` global's captured variables come first, then
the inner function's parameters); every compiled sub-expression gets a fresh register once
(graph-form sharing is memoized per scope: a branch or clause sees what was computed before it,
and forgets what it computed itself). A node used from several branches or clauses is compiled
once, just before the If / Match whose scopes use it, in the innermost scope holding all its
uses (ir/sharing.py; Relay's VM compiles after ToANormalForm, which places it there), so
bytecode grows linearly with nesting however the branches share. Constant ints the function
needs (allocation sizes, the zero offset, `1` for If, tags for Match) are loaded once in a
prologue; offsets are relative, so prepending the prologue moves no jump target.

Expression -> instructions:
  Constant load_const        Tuple alloc_data tag 0       TupleGetItem get_field
  call of a dialect op       memory_alloc.emit_dialect (alloc_storage, alloc_tensor, shape_of,
                             invoke_packed of kernels / shape functions, reshape_tensor)
  call of a global           invoke (or alloc_closure for a Closure=1 global)
  call of a constructor      alloc_data tag      call of anything else   invoke_closure
  If                         if / goto with a merge register
  Match                      per clause: get_tag + if per constructor test, get_field per field,
                             the clause body, goto end; after the last clause: fatal
"""
from collections import ChainMap

from ..errors import CompileError
from ..ir.adt import Constructor, Match, PatternConstructor, PatternTuple, PatternVar, PatternWildcard
from ..ir.expr import (Call, Constant, Function, GlobalVar, If, Let, Op, RefCreate, RefRead, RefWrite,
                       Tuple, TupleGetItem, Var)
from ..ir.functor import dataflow_children, post_order
from ..ir.sharing import OPERAND, plan_sharing, scoped_children
from ..op.registry import OpDef
from ..ir.excerpt import excerpt as _excerpt
from .bytecode import Opcode, make
from ..transform.lambda_lift import CLOSURE_ATTR
from .dialect import DialectOp
from .memory_alloc import TUPLE_RESULT_OPS, dialect_children, emit_dialect



def _compiled_children(e) -> tuple:
    """The sub-expressions the VM compiles (ir.sharing roles): not function bodies, which are
    kernels (primitives) or separate globals after LambdaLift, nor a callee it calls directly;
    of a memory-dialect call, the operands memory_alloc evaluates into registers."""
    if isinstance(e, Call) and isinstance(e.op, DialectOp):
        return tuple((a, OPERAND) for a in dialect_children(e))
    if isinstance(e, Call) and isinstance(e.op, (Function, Op, GlobalVar, Constructor)):
        return tuple((a, OPERAND) for a in e.args)
    return scoped_children(e, enter_functions=False)


class VMFunctionCompiler:
    """Compiles one global function; `ctx` is the compiler.CompileContext shared by all."""

    def __init__(self, ctx, name: str, func: Function):
        self.ctx = ctx
        self.name = name
        self.func = func
        self.instructions = []
        self.prologue = []
        self.num_registers = 0
        self._ints = {}
        self._tuple_results = {}       # dialect call -> (its value register, its registers)
        self._sharing = None

    # -- emitting
    def new_register(self) -> int:
        self.num_registers += 1
        return self.num_registers - 1

    def emit(self, opcode, *fields) -> int:
        self.instructions.append(make(opcode, *fields))
        return len(self.instructions) - 1

    def const_int(self, value: int) -> int:
        """A register holding the int64 `value`, loaded once in the prologue."""
        reg = self._ints.get(value)
        if reg is None:
            reg = self._ints[value] = self.new_register()
            self.prologue.append(make(Opcode.LoadConsti, value, reg))
        return reg

    def tuple_result(self, call, regs) -> int:
        """Record the registers a shape_func / check_shapes call wrote or passed through, which
        `%call.i` then names directly; returns the call's value register."""
        value = regs[0] if regs else self.const_int(0)
        self._tuple_results[call] = (value, list(regs))
        return value

    def _patch(self, index: int, field: int, value: int) -> None:
        ins = list(self.instructions[index])
        ins[field] = value
        self.instructions[index] = tuple(ins)

    # -- functions
    def compile(self):
        """(params, instructions, register_file_size) of the function."""
        func, params = self.func, list(self.func.params)
        body = func.body
        if int(func.attrs.get(CLOSURE_ATTR, 0)) == 1:
            if not isinstance(body, Function):
                raise CompileError(f"@{self.name} is marked Closure=1 but its body is not a function")
            params += list(body.params)
            body = body.body
        scope = ChainMap()
        for p in params:
            scope[p] = self.new_register()
        self._sharing = plan_sharing(body, children=_compiled_children)
        result = self.compile_expr(body, scope)
        self.emit(Opcode.Ret, result)
        return params, self.prologue + self.instructions, self.num_registers

    # -- expressions
    def compile_expr(self, expr, scope) -> int:
        """The register holding `expr`'s value (compiling it and its inputs once per scope)."""
        if expr in scope:
            return scope[expr]

        def children(e):
            if isinstance(e, (Let, If, Match, Function)):   # their scopes' shared nodes first
                return [k for k in self._sharing.hoisted(e) if k not in scope]
            if isinstance(e, Call) and isinstance(e.op, DialectOp):
                kids = dialect_children(e)
            elif isinstance(e, Call) and isinstance(e.op, (Function, Op, GlobalVar, Constructor)):
                kids = e.args
            else:
                kids = dataflow_children(e)
            return [k for k in kids if k not in scope]

        for node in post_order(expr, children=children):
            if node not in scope:
                scope[node] = self._node(node, scope)
        return scope[expr]

    def _node(self, node, scope) -> int:
        if isinstance(node, Call):
            return self._call(node, scope)
        if isinstance(node, Constant):
            dst = self.new_register()
            self.emit(Opcode.LoadConst, self.ctx.add_constant(node.data), 0, dst)
            return dst
        if isinstance(node, Tuple):
            dst = self.new_register()
            self.emit(Opcode.AllocADT, 0, [scope[f] for f in node.fields], dst)
            return dst
        if isinstance(node, TupleGetItem):
            value = node.tuple_value
            if isinstance(value, Call) and value.op in TUPLE_RESULT_OPS:
                reg, regs = self._tuple_results[value]
                if scope[value] == reg:
                    return regs[node.index]
            dst = self.new_register()
            self.emit(Opcode.GetField, scope[node.tuple_value], node.index, dst)
            return dst
        if isinstance(node, Let):
            while isinstance(node, Let):
                scope[node.var] = self.compile_expr(node.value, scope)
                node = node.body
            return self.compile_expr(node, scope)
        if isinstance(node, If):
            return self._if(node, scope)
        if isinstance(node, Match):
            return self._match(node, scope)
        if isinstance(node, GlobalVar):
            dst = self.new_register()
            if self.ctx.is_closure_global(node.name_hint):
                raise CompileError(f"@{node.name_hint} captures variables and cannot be used as a value "
                                   f"without its captured arguments")
            self.emit(Opcode.AllocClosure, self.ctx.global_index(node.name_hint), [], dst)
            return dst
        if isinstance(node, Constructor):
            if node.inputs:
                raise CompileError(f"constructor {node.name_hint} used as a value in @{self.name}; "
                                   f"call it with its {len(node.inputs)} field(s) instead")
            dst = self.new_register()
            self.emit(Opcode.AllocADT, node.tag, [], dst)
            return dst
        if isinstance(node, Var):
            raise CompileError(f"free variable %{node.name_hint} in @{self.name}")
        if isinstance(node, Function):
            raise CompileError(f"a function literal remains in @{self.name} (`{_excerpt(node)}`); the VM "
                               f"compiles closures only after LambdaLift and calls primitives directly")
        if isinstance(node, (RefCreate, RefRead, RefWrite)):
            raise CompileError(f"the VM does not support references ({type(node).__name__} in @{self.name}: "
                               f"`{_excerpt(node)}`); use the debug interpreter for programs with refs")
        raise CompileError(f"the VM cannot compile a {type(node).__name__} (`{_excerpt(node)}`) in @{self.name}")

    def _call(self, call: Call, scope) -> int:
        op = call.op
        if isinstance(op, DialectOp):
            return emit_dialect(self, call, scope)
        args = [scope[a] for a in call.args]
        if isinstance(op, Function):
            raise CompileError(f"call of a function literal in @{self.name} (`{_excerpt(call)}`): the VM "
                               f"compiles closures after LambdaLift and kernel calls after ManifestAlloc")
        if isinstance(op, OpDef):
            raise CompileError(f"operator {op.name} is called directly in @{self.name}; ManifestAlloc "
                               f"turns every kernel call into vm.invoke_tvm_op first")
        if isinstance(op, Op):
            raise CompileError(f"operator {op.name} in @{self.name} is not registered")
        dst = self.new_register()
        if isinstance(op, GlobalVar):
            index = self.ctx.global_index(op.name_hint)
            if self.ctx.is_closure_global(op.name_hint):
                self.emit(Opcode.AllocClosure, index, args, dst)
            else:
                self.emit(Opcode.Invoke, index, args, dst)
        elif isinstance(op, Constructor):
            self.emit(Opcode.AllocADT, op.tag, args, dst)
        else:
            self.emit(Opcode.InvokeClosure, scope[op], args, dst)
        return dst

    # -- control flow
    def _if(self, node: If, scope) -> int:
        cond = self.compile_expr(node.cond, scope)
        branch = self.emit(Opcode.If, cond, self.const_int(1), 1, 0)
        merge = self.new_register()
        result = self.compile_expr(node.true_branch, scope.new_child())
        self.emit(Opcode.Move, result, merge)
        goto = self.emit(Opcode.Goto, 0)
        self._patch(branch, 4, len(self.instructions) - branch)
        result = self.compile_expr(node.false_branch, scope.new_child())
        self.emit(Opcode.Move, result, merge)
        self._patch(goto, 1, len(self.instructions) - goto)
        return merge

    def _match(self, node: Match, scope) -> int:
        data = self.compile_expr(node.data, scope)
        merge = self.new_register()
        ends = []
        for clause in node.clauses:
            inner = scope.new_child()
            fails = []
            self._pattern(clause.lhs, data, inner, fails)
            result = self.compile_expr(clause.rhs, inner)
            self.emit(Opcode.Move, result, merge)
            ends.append(self.emit(Opcode.Goto, 0))
            for f in fails:
                self._patch(f, 4, len(self.instructions) - f)
        self.emit(Opcode.Fatal)
        for g in ends:
            self._patch(g, 1, len(self.instructions) - g)
        return merge

    def _pattern(self, pattern, reg, scope, fails) -> None:
        """Emit the tests of `pattern` against the value in `reg`; bind its variables in `scope`."""
        if isinstance(pattern, PatternWildcard):
            return
        if isinstance(pattern, PatternVar):
            scope[pattern.var] = reg
            return
        if isinstance(pattern, PatternConstructor):
            tag = self.new_register()
            self.emit(Opcode.GetTag, reg, tag)
            fails.append(self.emit(Opcode.If, tag, self.const_int(pattern.constructor.tag), 1, 0))
        elif not isinstance(pattern, PatternTuple):
            raise CompileError(f"unknown pattern {type(pattern).__name__} in @{self.name}")
        for i, sub in enumerate(pattern.patterns):
            if isinstance(sub, PatternWildcard):
                continue
            field = self.new_register()
            self.emit(Opcode.GetField, reg, i, field)
            self._pattern(sub, field, scope, fails)


__all__ = ["VMFunctionCompiler"]
