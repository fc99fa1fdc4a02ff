"""Dynamic tensor arrays (tvm.relay.prelude.TensorArrayOps): a list of tensors of one dtype
whose shapes are only known at run time, as TensorFlow's TensorArray.

Per dtype, the ADT `tensor_<dtype>_t` wraps a tensor of each rank 0..6 with every dim `Any`:

    tensor_nil_<dtype> | tensor0_<dtype>(Tensor[(), dtype]) | tensor1_<dtype>(Tensor[(?), dtype])
    | ... | tensor6_<dtype>(Tensor[(?, ?, ?, ?, ?, ?), dtype])

and the functions (all suffixed `_<dtype>`) are the list-level ones of array_common.py plus

    tensor_take(t, lower, upper)      rows [lower, upper) of t (ranks 1..6)
    tensor_expand_dims(t)             t with a new leading axis of size 1 (ranks 0..5)
    tensor_concatenate(x, y)          x and y (of one rank, 1..6) joined on axis 0
    tensor_array_unstack_tensor<K>(t) the rows of a rank-K tensor as a tensor array (K = 1..6)

Prelude(mod) registers them for TENSOR_ARRAY_DTYPES, as TVM's does. The shapes are dynamic,
so these functions run on the debug interpreter and the VM.
"""
from ..errors import OpDefinitionError
from ..ir.adt import Clause, Constructor, Match, PatternConstructor, PatternVar, TypeData
from ..ir.expr import Var
from ..ir.types import Any, GlobalTypeVar, TensorType
from ..op.creation import arange
from ..op.transform import concatenate, expand_dims, take
from .array_common import INT32, TensorArrayBase

TENSOR_ARRAY_DTYPES = ("float32", "float16", "float64", "int32", "uint8", "int8", "int16",
                       "uint16", "int64")
MAX_RANK = 6


class TensorArrayOps(TensorArrayBase):
    """The dynamic tensor array of one dtype; `register()` adds all of it to the module."""

    def get_name(self, canonical: str, extra_shapes=None) -> str:
        """e.g. "tensor_array_read_float32"; the ADT is "tensor_float32_t"."""
        if extra_shapes:
            raise OpDefinitionError("dynamic tensor arrays have no static-shape variants; use "
                                    "StaticTensorArrayOps for fixed shapes")
        return self.prelude.get_name(canonical, self.dtype)

    def output_ops(self, kind: str) -> "TensorArrayOps":
        return self   # every rank lives in the one ADT

    @property
    def tensor_type_var(self) -> GlobalTypeVar:
        return self.mod.get_global_type_var(self.get_name("tensor_t"))

    def _rank_ctor(self, rank: int) -> Constructor:
        return self.get_ctor(f"tensor{rank}")

    def _per_rank(self, ranks, body_of) -> list:
        """One clause per rank: tensor<K>(%t) => body_of(K, %t)."""
        clauses = []
        for rank in ranks:
            t = Var(f"t{rank}")
            clauses.append(Clause(PatternConstructor(self._rank_ctor(rank), [PatternVar(t)]), body_of(rank, t)))
        return clauses

    # --- the ADT and the tensor-level functions -------------------------------------------------
    def define_tensor_adt(self) -> None:
        """tensor_<dtype>_t: nil, or a tensor of rank 0..6 with dynamic dims."""
        name = self.get_name("tensor_t")
        if self.has_type(name):
            return
        gtv = GlobalTypeVar(name)
        ctors = [Constructor(self.get_name("tensor_nil"), [], gtv)]
        ctors += [Constructor(self.get_name(f"tensor{rank}"), [TensorType((Any(),) * rank, self.dtype)], gtv)
                  for rank in range(MAX_RANK + 1)]
        self.mod[gtv] = TypeData(gtv, [], ctors)

    def define_tensor_take(self) -> None:
        """tensor_take(t, lower, upper): rows [lower, upper) of t."""
        if self.is_cached("tensor_take"):
            return
        t, lower, upper = Var("tensor", self.tensor_type_var()), Var("lower", INT32), Var("upper", INT32)
        rows = arange(lower, upper, dtype="int32")
        body = Match(t, self._per_rank(range(1, MAX_RANK + 1), lambda rank, x: self._rank_ctor(rank)(
            take(x, rows, axis=0))), False)
        self.define("tensor_take", [t, lower, upper], body, self.tensor_type_var())

    def define_tensor_expand_dims(self) -> None:
        """tensor_expand_dims(t): t with a leading axis of size 1 (one rank up)."""
        if self.is_cached("tensor_expand_dims"):
            return
        x = Var("x", self.tensor_type_var())
        body = Match(x, self._per_rank(range(MAX_RANK), lambda rank, t: self._rank_ctor(rank + 1)(
            expand_dims(t, 0, 1))), False)
        self.define("tensor_expand_dims", [x], body, self.tensor_type_var())

    def define_tensor_concatenate(self) -> None:
        """tensor_concatenate(x, y): x and y, of the same rank, joined on axis 0."""
        if self.is_cached("tensor_concatenate"):
            return
        x, y = Var("x", self.tensor_type_var()), Var("y", self.tensor_type_var())

        def with_second(rank, first):
            second = Var(f"u{rank}")
            joined = self._rank_ctor(rank)(concatenate([first, second], axis=0))
            return Match(y, [Clause(PatternConstructor(self._rank_ctor(rank), [PatternVar(second)]), joined)],
                         False)

        body = Match(x, self._per_rank(range(1, MAX_RANK + 1), with_second), False)
        self.define("tensor_concatenate", [x, y], body, self.tensor_type_var())

    def define_tensor_array_unstack(self) -> None:
        """tensor_array_unstack_tensor<K> for K = 1..6: a rank-K tensor's rows as an array."""
        for rank in range(1, MAX_RANK + 1):
            self.define_unstack(f"tensor_array_unstack_tensor{rank}", TensorType((Any(),) * rank, self.dtype),
                                self, self._rank_ctor(rank - 1))

    def register(self) -> None:
        """Add the ADT and every function for this dtype (once per module)."""
        if not self.is_cached("tensor_array_gather"):
            super().register()


__all__ = ["TensorArrayOps", "TENSOR_ARRAY_DTYPES", "MAX_RANK"]
