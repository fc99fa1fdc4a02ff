"""The reshape operator: attrs with Relay's newshape codes, the shape rule, reference and te compute.

Split out of op/transform.py (which re-exports it) because the newshape codes need a page of
their own. reshape_shape works on int, symbolic and Any dims (the relation, also the VM's shape
function) and on the compute's te dims, so both agree by construction.
"""
import dataclasses

from ..errors import AttrsError, TypeInferenceError
from ..ir.attrs import Attrs, always_printed, as_int_tuple
from ..ir.dims import dim_to_str
from ..ir.shape_math import floordiv
from ..ir.types import Any, TensorType, is_any, shape_to_str, type_to_str
from . import index_math as IM
from . import samples as S
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor

_prod = IM.prod_dims


def _fail(op_name: str, msg: str, *types) -> TypeInferenceError:
    suffix = f" (input: {', '.join(type_to_str(t) for t in types)})" if types else ""
    return TypeInferenceError(f"{op_name}: {msg}{suffix}")


# --- reshape ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ReshapeAttrs(Attrs):
    """newshape with Relay's codes: 0 copy a dim, -1 infer, -2 copy the rest, -3 merge two dims,
    -4 split one dim into the next two values (one may be -1). allowzero makes 0 a literal 0."""
    newshape: tuple = always_printed(())
    allowzero: bool = False

    def __post_init__(self):
        ns = as_int_tuple(self.newshape, name="newshape")
        object.__setattr__(self, "newshape", ns)
        object.__setattr__(self, "allowzero", bool(self.allowzero))
        i, inferred = 0, 0
        while i < len(ns):
            v = ns[i]
            if v < -4:
                raise AttrsError(f"reshape: newshape {ns} has invalid code {v}; use a size >= 0 or -1..-4")
            if v == -4:
                pair = ns[i + 1:i + 3]
                if len(pair) != 2 or any(p == 0 or p < -1 for p in pair) or pair == (-1, -1):
                    raise AttrsError(f"reshape: -4 in newshape {ns} must be followed by two sizes "
                                     "(positive, at most one of them -1)")
                i += 3
                continue
            inferred += v == -1
            i += 1
        if inferred > 1:
            raise AttrsError(f"reshape: newshape {ns} has more than one -1; only one dim can be inferred")


def reshape_shape(data: TensorType, attrs: ReshapeAttrs, ishape=None) -> tuple:
    """The output shape of reshape (Any where it depends on an Any input dim). The compute passes
    `ishape` with symbolic dims as PrimExprs and gets PrimExpr output dims back."""
    ishape, ns, out = data.shape if ishape is None else ishape, attrs.newshape, []
    used_in, used_out, infer_at, src, i = set(), set(), None, 0, 0

    def copy_dim(k):
        if k >= len(ishape):
            raise _fail("reshape", f"newshape {ns} refers to input dim {k}, but the input has rank "
                        f"{len(ishape)}", data)
        used_in.add(k)
        used_out.add(len(out))
        return ishape[k]

    while i < len(ns):
        v = ns[i]
        if v > 0 or (v == 0 and attrs.allowzero):
            out.append(v)
            src += 1
        elif v == 0:
            out.append(copy_dim(src))
            src += 1
        elif v == -1:
            infer_at = len(out)
            out.append(None)
            src += 1
        elif v == -2:
            while src < len(ishape):
                out.append(copy_dim(src))
                src += 1
        elif v == -3:
            a, b = copy_dim(src), copy_dim(src + 1)  # both record the same output slot
            out.append(_prod((a, b)))
            src += 2
        else:  # -4: split one input dim into ns[i+1] * ns[i+2]
            d = copy_dim(src)
            a, b = ns[i + 1], ns[i + 2]
            if -1 in (a, b):
                known = b if a == -1 else a
                if IM.is_static(d) and d % known:
                    raise _fail("reshape", f"-4 cannot split dim {src} of size {d} by {known}", data)
                rest = Any() if is_any(d) else d // known
                a, b = (rest, b) if a == -1 else (a, rest)
            elif IM.is_static(d) and a * b != d:
                raise _fail("reshape", f"-4 splits dim {src} of size {d} into {a} x {b} = {a * b}", data)
            used_out.update((len(out), len(out) + 1))
            out.extend((a, b))
            src += 1
            i += 2
        i += 1

    if infer_at is not None:
        old = [d for k, d in enumerate(ishape) if k not in used_in]
        new = [d for k, d in enumerate(out) if k not in used_out and k != infer_at]
        old_size, new_size = _prod(old), _prod(new)
        if is_any(old_size) or is_any(new_size):
            out[infer_at] = Any()
        elif IM.is_static(new_size) and (new_size == 0 or IM.is_static(old_size) and old_size % new_size):
            raise _fail("reshape", f"cannot infer the -1 in newshape {ns}: {dim_to_str(old_size)} elements "
                        f"do not divide into {new_size}", data)
        else:                       # symbolic: (n * 12) // 4 simplifies to n * 3, as TVM's Analyzer
            out[infer_at] = floordiv(old_size, new_size)
    total_in, total_out = _prod(ishape), _prod(out)
    if IM.is_static(total_in) and IM.is_static(total_out) and total_in != total_out:
        raise TypeInferenceError(f"reshape: cannot reshape {type_to_str(data)} to {shape_to_str(ns)}: "
                                 f"{total_in} elements vs {total_out}")
    return tuple(out)


def _reshape_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "reshape data")
    return TensorType(reshape_shape(data, attrs), data.dtype)


def _reshape_ref(x, attrs):
    return x.reshape(reshape_shape(TensorType(x.shape, x.dtype), attrs))


def _reshape_samples(rng):
    cases = [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((2, 3, 4), (4, 0, 2)), ((2, 3, 4), (0, -1)),
             ((2, 3, 4), (-2,)), ((2, 3, 4), (2, -2)), ((2, 3, 4), (-3, 4)), ((2, 3, 4, 5), (-3, -3)),
             ((2, 3, 4), (-4, 1, 2, -2)), ((6, 4), (-4, -1, 3, 0)), ((2, 3), (3, 2)), ((), (1, 1)),
             ((5,), (5, 1))]
    return [Sample([S.rand(rng, shape, ("float32", "int32", "float64")[k % 3])], ReshapeAttrs(ns))
            for k, (shape, ns) in enumerate(cases)]


def _reshape_compute(attrs, inputs, out_type):
    """Each output element reads the input element with the same row-major flat index."""
    x = inputs[0]
    ishape = IM.te_dims(x)
    oshape = reshape_shape(IM.probe_type(x), attrs, ishape)
    return [IM.compute(RESHAPE, oshape, lambda *i: x[tuple(IM.unravel(IM.ravel(i, oshape), ishape))])]


RESHAPE = defop("reshape", inputs=("data",), attrs=ReshapeAttrs, rel=_reshape_rel, pattern=OpPattern.INJECTIVE,
                ref=_reshape_ref, samples=_reshape_samples, level=3, compute=_reshape_compute,
                is_reshape=True)
