"""The in-memory compilation cache: CCacheKey = (primitive function up to alpha-renaming, target).

Equal keys share one CCacheValue (its use_count shows how often it was asked for). Compiled
code is also kept on disk across processes, below this level: codegen keys each lowered kernel
by its content (codegen/llvm_cache.py, relay_backend/cache.py), so a kernel lowered here with
another implementation, schedule or CPU, or from a user-registered op whose compute changed
(in this process or in another one sharing the cache), never meets a stale entry. The
in-memory key needs `definition_generation` for that; the disk key does not, as it sees the
compiled loop nest itself.
"""
from dataclasses import dataclass, field

from ..ir.expr import GlobalVar
from ..ir.node import Node
from ..ir.structural import structural_equal, structural_hash
from ..op.op_attrs import definition_generation
from ..transform import InferTypeLocal
from ..target import as_target


class ObjectIdentity(Node):
    """TVM's Object comparison for Python objects mirroring TVM Objects: `a == b` and
    `a.same_as(b)` (Node's) mean the same object, and the hash is the object's identity."""

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return id(self) >> 4


_LOWERED_FIELDS = ("inputs", "outputs", "funcs")


@dataclass(eq=False)
class CachedFunc(ObjectIdentity):
    """A lowered primitive function: its kernel name, te inputs and outputs and tir PrimFuncs.
    Compared as TVM compares Objects: by identity (same_as).

    A function recalled from a Relay-level disk record (disk_records.py) is *deferred*: it has
    its name, `kernel` and what lowering reported, and lowers itself on first access to
    `inputs`, `outputs` or `funcs` (executors never ask for them; codegen finds the object code
    through `kernel`).

    Parameters
    ----------
    target : Target
        The target it was lowered for.
    func_name : str
        The kernel's name.
    prim_fn_var : GlobalVar
        The global variable naming the kernel in the lowered module.
    inputs : list of te.Tensor
        The te placeholders of its parameters.
    outputs : list of te.Tensor
        Its output tensors.
    funcs : dict of str to PrimFunc
        The tir functions, by name.
    implementations : list, optional
        The (op, implementation) pairs strategy selection chose. Defaults to [].
    tuning_queries : tuple, optional
        The (workload, config fingerprint) pairs the autotvm dispatch context answered while the
        function was lowered; the TECompiler reuses the kernel only while they still hold.
        Defaults to ().
    untuned : tuple, optional
        The (target, workload) pairs of tunable implementations lowered with their fallback
        config (a build reusing the kernel warns about them again). Defaults to ().
    external_module : Module, optional
        The compiled module of an external codegen (BYOC), when the function is external.
        Defaults to None.
    kernel : codegen.KernelRecord, optional
        The kernel as codegen finds its object code on disk without its PrimFunc (signature and
        content digest), when a disk record holds it. Defaults to None.
    lower_now : callable, optional
        For a deferred function: lowers it, returning a CachedFunc of the same name whose inputs,
        outputs and funcs this one takes. Defaults to None.
    """

    target: object               # the target.Target it was lowered for
    func_name: str
    prim_fn_var: object          # GlobalVar naming the kernel
    inputs: list                 # te placeholders
    outputs: list                # te output tensors
    funcs: dict                  # name -> tir PrimFunc
    implementations: list = field(default_factory=list)  # (op, implementation) chosen
    tuning_queries: tuple = ()   # (workload, config fingerprint) the dispatch context answered
    untuned: tuple = ()          # (target, workload) of tunable implementations run untuned
    external_module: object = None   # the runtime Module an external codegen (relay.ext.*) made
    kernel: object = None        # codegen.KernelRecord, when a disk record holds the kernel
    lower_now: object = field(default=None, repr=False)  # deferred: () -> the lowered CachedFunc

    @classmethod
    def deferred(cls, target, func_name: str, lower_now, **fields) -> "CachedFunc":
        """A CachedFunc whose te tensors and PrimFuncs come from `lower_now()` on first access.

        Parameters
        ----------
        target : Target
            The target it is lowered for.
        func_name : str
            The kernel's name.
        lower_now : callable
            Lowers the function: returns a CachedFunc of the same name.
        **fields
            The other fields (implementations, tuning_queries, untuned, kernel).

        Returns
        -------
        cached : CachedFunc
            The deferred function.
        """
        made = cls(target, func_name, GlobalVar(func_name), None, None, None, lower_now=lower_now,
                   **fields)
        for name in _LOWERED_FIELDS:
            del made.__dict__[name]
        return made

    @property
    def is_deferred(self) -> bool:
        """True until a deferred function's lowering ran."""
        return "funcs" not in self.__dict__

    def __getattr__(self, name):
        # only reached for a deferred function's missing fields (normal lookup failed)
        if name not in _LOWERED_FIELDS or self.__dict__.get("lower_now") is None:
            raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")
        lowered = self.lower_now()
        for field_name in _LOWERED_FIELDS:
            self.__dict__[field_name] = getattr(lowered, field_name)
        return self.__dict__[name]

    def units(self) -> dict:
        """{name: what codegen.build compiles}: the KernelRecord when there is one, else the
        PrimFuncs."""
        return {self.func_name: self.kernel} if self.kernel is not None else self.funcs


def ensure_typed(func):
    """Type `func` in place unless it is typed already (InferType also fills a missing ret_type)."""
    if func.body._checked_type_ is None:
        InferTypeLocal(func)
    return func


class CCacheKey(ObjectIdentity):
    """The key of the compile-engine cache: a primitive function and a target.

    As a TVM Object, `==`, `same_as` and `hash` go by identity; the cache itself matches keys
    structurally through `structural_key` (TVM's CCacheKeyNode::Equal: structurally equal
    functions and the same target, compared by its canonical string, so "llvm -mcpu=a" and
    "llvm -mcpu=b" never share a kernel), and only while no operator definition changed in
    between (an op's compute or strategy replaced from user code). The function is typed
    first: typing fills a missing ret_type, which the structural hash covers.

    Parameters
    ----------
    source_func : Function
        The primitive function to lower.
    target : str or Target
        The target to lower it for.
    """

    def __init__(self, source_func, target):
        self.source_func = ensure_typed(source_func)
        self.target = as_target(target)
        self.target_text = str(self.target)
        self.op_generation = definition_generation()
        self.structural_key = StructuralKey(self.source_func, self.target_text, self.op_generation)


class StructuralKey:
    """The cache's view of a CCacheKey: equal when the functions are structurally equal (up to
    alpha-renaming), the targets match and the operator definitions are the same generation;
    hashed by structural hash, target and generation."""

    __slots__ = ("source_func", "target", "op_generation", "source_hash", "_hash")

    def __init__(self, source_func, target: str, op_generation: int = 0):
        self.source_func = source_func
        self.target = target
        self.op_generation = op_generation
        self.source_hash = structural_hash(source_func)     # the graph JSON shows it, too
        self._hash = hash((self.source_hash, target, op_generation))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return (isinstance(other, StructuralKey) and self._hash == other._hash and self.target == other.target
                and self.op_generation == other.op_generation and structural_equal(self.source_func, other.source_func))


@dataclass(eq=False)
class CCacheValue(ObjectIdentity):
    """A compile-engine cache entry.

    Parameters
    ----------
    cached_func : CachedFunc
        The lowered function.
    use_count : int, optional
        How often the entry was asked for. Defaults to 0.
    module : Module, optional
        The compiled runtime module, once built. Defaults to None.
    """

    cached_func: CachedFunc
    use_count: int = 0
    module: object = None        # runtime Module once compiled
