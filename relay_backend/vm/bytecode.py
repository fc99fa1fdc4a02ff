"""The VM instruction set (TVM's Relay VM opcodes), instructions as tuples, and their listing.

An instruction is a plain tuple `(opcode, field, field, ...)` in the order of FIELDS below,
so the interpreter loop in runtime.py indexes it directly. Register operands are indices into
the current frame's register file; `If`/`Goto` offsets are relative to the instruction's own
pc. `InvokePacked` passes inputs then outputs (destination-passing style) and has no dst.
`format_instruction` prints one line of the readable listing `Executable.bytecode` shows.
"""
from enum import IntEnum


class Opcode(IntEnum):
    """Opcode numbers as in tvm/runtime/vm/bytecode.h."""

    Move = 0
    Ret = 1
    Invoke = 2
    InvokeClosure = 3
    InvokePacked = 4
    AllocTensor = 5
    AllocTensorReg = 6
    AllocADT = 7
    AllocClosure = 8
    GetField = 9
    If = 10
    LoadConst = 11
    Goto = 12
    GetTag = 13
    LoadConsti = 14
    Fatal = 15
    AllocStorage = 16
    ShapeOf = 17
    ReshapeTensor = 18
    DeviceCopy = 19
    KillRegister = 20


# The dtypes an executable may name (tensors, storages, shape functions): the numeric ones.
SUPPORTED_DTYPES = frozenset(["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                              "uint64", "float16", "float32", "float64"])

# Field kinds: "reg" register, "regs" list of registers, "int" immediate, "ints" list of
# immediates, "off" relative pc offset, "dtype" a dtype string, "func" function index,
# "packed" packed-function index, "const" constant index.
FIELDS = {
    Opcode.Move: (("src", "reg"), ("dst", "reg")),
    Opcode.Ret: (("result", "reg"),),
    Opcode.Invoke: (("func_index", "func"), ("args", "regs"), ("dst", "reg")),
    Opcode.InvokeClosure: (("closure", "reg"), ("args", "regs"), ("dst", "reg")),
    Opcode.InvokePacked: (("packed_index", "packed"), ("arity", "int"), ("output_size", "int"),
                          ("args", "regs")),
    Opcode.AllocTensor: (("storage", "reg"), ("offset", "reg"), ("shape", "ints"), ("dtype", "dtype"),
                         ("dst", "reg")),
    Opcode.AllocTensorReg: (("storage", "reg"), ("offset", "reg"), ("shape_register", "reg"),
                            ("dtype", "dtype"), ("dst", "reg")),
    Opcode.AllocADT: (("constructor_tag", "int"), ("fields", "regs"), ("dst", "reg")),
    Opcode.AllocClosure: (("func_index", "func"), ("free_vars", "regs"), ("dst", "reg")),
    Opcode.GetField: (("object", "reg"), ("field_index", "int"), ("dst", "reg")),
    Opcode.If: (("test", "reg"), ("target", "reg"), ("true_offset", "off"), ("false_offset", "off")),
    Opcode.LoadConst: (("const_index", "const"), ("device_index", "int"), ("dst", "reg")),
    Opcode.Goto: (("pc_offset", "off"),),
    Opcode.GetTag: (("object", "reg"), ("dst", "reg")),
    Opcode.LoadConsti: (("val", "int"), ("dst", "reg")),
    Opcode.Fatal: (),
    Opcode.AllocStorage: (("allocation_size", "reg"), ("alignment", "int"), ("dtype_hint", "dtype"),
                          ("device_index", "int"), ("shape", "ints"), ("dst", "reg")),
    Opcode.ShapeOf: (("tensor", "reg"), ("dst", "reg")),
    Opcode.ReshapeTensor: (("tensor", "reg"), ("newshape", "reg"), ("dst", "reg")),
    Opcode.DeviceCopy: (("src", "reg"), ("src_device_index", "int"), ("dst_device_index", "int"),
                        ("dst", "reg")),
    Opcode.KillRegister: (("dst", "reg"),),
}

# snake_case mnemonics used by the listing (as TVM prints them)
MNEMONICS = {
    Opcode.Move: "move", Opcode.Ret: "ret", Opcode.Invoke: "invoke",
    Opcode.InvokeClosure: "invoke_closure", Opcode.InvokePacked: "invoke_packed",
    Opcode.AllocTensor: "alloc_tensor", Opcode.AllocTensorReg: "alloc_tensor_reg",
    Opcode.AllocADT: "alloc_data", Opcode.AllocClosure: "alloc_closure", Opcode.GetField: "get_field",
    Opcode.If: "if", Opcode.LoadConst: "load_const", Opcode.Goto: "goto", Opcode.GetTag: "get_tag",
    Opcode.LoadConsti: "load_consti", Opcode.Fatal: "fatal", Opcode.AllocStorage: "alloc_storage",
    Opcode.ShapeOf: "shape_of", Opcode.ReshapeTensor: "reshape_tensor",
    Opcode.DeviceCopy: "device_copy", Opcode.KillRegister: "kill",
}


def make(opcode: Opcode, *fields) -> tuple:
    """An instruction tuple; list fields are frozen to tuples and ints normalized."""
    spec = FIELDS[opcode]
    if len(fields) != len(spec):
        raise ValueError(f"{opcode.name} takes {len(spec)} fields {[n for n, _ in spec]}, got {len(fields)}")
    out = [int(opcode)]
    for value, (_, kind) in zip(fields, spec):
        if kind in ("regs", "ints"):
            out.append(tuple(int(v) for v in value))
        elif kind == "dtype":
            out.append(str(value))
        else:
            out.append(int(value))
    return tuple(out)


def dst_register(ins: tuple):
    """The register an instruction writes, or None (InvokePacked writes its output args)."""
    spec = FIELDS[Opcode(ins[0])]
    if spec and spec[-1][0] == "dst":
        return ins[-1]
    return None


def read_registers(ins: tuple) -> list:
    """Registers an instruction reads (InvokePacked: inputs and the outputs it writes into)."""
    out = []
    for value, (name, kind) in zip(ins[1:], FIELDS[Opcode(ins[0])]):
        if name == "dst":
            continue
        if kind == "reg":
            out.append(value)
        elif kind == "regs":
            out.extend(value)
    return out


def _regs(values) -> str:
    return ", ".join(f"${r}" for r in values)


def format_instruction(ins: tuple, packed_names=None, func_names=None) -> str:
    """One line of the listing, e.g. `invoke_packed PackedFunc[0] (in: $0, $1, out: $5)`."""
    op = Opcode(ins[0])
    f = dict(zip((n for n, _ in FIELDS[op]), ins[1:]))
    name = MNEMONICS[op]

    def fname(i):
        return f"{func_names[i]}" if func_names and 0 <= i < len(func_names) else f"Function[{i}]"

    if op == Opcode.Move:
        return f"move ${f['dst']} ${f['src']}"
    if op == Opcode.Ret:
        return f"ret ${f['result']}"
    if op == Opcode.Invoke:
        return f"invoke ${f['dst']} {fname(f['func_index'])}({_regs(f['args'])})"
    if op == Opcode.InvokeClosure:
        return f"invoke_closure ${f['dst']} ${f['closure']}({_regs(f['args'])})"
    if op == Opcode.InvokePacked:
        n_in = f["arity"] - f["output_size"]
        idx = f["packed_index"]
        label = packed_names[idx] if packed_names and 0 <= idx < len(packed_names) else f"PackedFunc[{idx}]"
        return (f"invoke_packed {label} (in: {_regs(f['args'][:n_in])}, "
                f"out: {_regs(f['args'][n_in:])})")
    if op == Opcode.AllocTensor:
        return (f"alloc_tensor ${f['dst']} ${f['storage']} ${f['offset']} "
                f"[{', '.join(map(str, f['shape']))}] {f['dtype']}")
    if op == Opcode.AllocTensorReg:
        return f"alloc_tensor_reg ${f['dst']} ${f['storage']} ${f['offset']} ${f['shape_register']} {f['dtype']}"
    if op == Opcode.AllocADT:
        return f"alloc_data ${f['dst']} tag({f['constructor_tag']}) [{_regs(f['fields'])}]"
    if op == Opcode.AllocClosure:
        return f"alloc_closure ${f['dst']} {fname(f['func_index'])} [{_regs(f['free_vars'])}]"
    if op == Opcode.GetField:
        return f"get_field ${f['dst']} ${f['object']}[{f['field_index']}]"
    if op == Opcode.If:
        return f"if ${f['test']} ${f['target']} {f['true_offset']} {f['false_offset']}"
    if op == Opcode.LoadConst:
        return f"load_const ${f['dst']} Const[{f['const_index']}] dev{f['device_index']}"
    if op == Opcode.Goto:
        return f"goto {f['pc_offset']}"
    if op == Opcode.GetTag:
        return f"get_tag ${f['dst']} ${f['object']}"
    if op == Opcode.LoadConsti:
        return f"load_consti ${f['dst']} {f['val']}"
    if op == Opcode.AllocStorage:
        shape = f" [{', '.join(map(str, f['shape']))}]" if f["shape"] else ""
        return (f"alloc_storage ${f['dst']} ${f['allocation_size']} {f['alignment']} "
                f"{f['dtype_hint']} dev{f['device_index']}{shape}")
    if op == Opcode.ShapeOf:
        return f"shape_of ${f['dst']} ${f['tensor']}"
    if op == Opcode.ReshapeTensor:
        return f"reshape_tensor ${f['dst']} ${f['tensor']} ${f['newshape']}"
    if op == Opcode.DeviceCopy:
        return f"device_copy ${f['dst']} ${f['src']} dev{f['src_device_index']} -> dev{f['dst_device_index']}"
    if op == Opcode.KillRegister:
        return f"kill ${f['dst']}"
    return name  # Fatal


__all__ = ["Opcode", "FIELDS", "SUPPORTED_DTYPES", "MNEMONICS", "make", "format_instruction", "dst_register",
           "read_registers"]
