"""Tensor arrays of the Prelude (dynamic TensorArrayOps per dtype, StaticTensorArrayOps per
shape) run on the debug interpreter and the VM and agree with numpy.

Each test is one Relay program (text parsed against the Prelude's module) calling several
tensor array functions; results are decoded by type (decode.py) and compared with numpy.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.prelude import StaticTensorArrayOps, get_tensor_array_shape

from .decode import run

EXECUTORS = ("debug", "vm")
X = np.arange(12, dtype="float32").reshape(3, 4)
V = np.array([-1, -2, -3, -4], dtype="float32")
IDX = np.array([2, 0], dtype="int32")
LENGTHS = np.array([1, 2], dtype="int32")


@pytest.fixture(scope="module")
def prelude():
    return relay.Prelude()


def _program(prelude, params: str, body: str):
    return relay.parse(f'#[version = "0.0.5"]\ndef @main({params}) {{\n{body}\n}}\n', init_module=prelude.mod)


def _close(actual, expected):
    """(constructor, array) pairs, arrays, ints, None, and lists and tuples of them, compared exactly
    (the arrays are copies and slices of the inputs)."""
    if isinstance(expected, (list, tuple)) and not (len(expected) == 2 and isinstance(expected[0], str)):
        assert type(actual) is type(expected) and len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected):
            _close(a, e)
    elif expected is None or isinstance(expected, int):
        assert actual == expected
    elif isinstance(expected, np.ndarray):
        np.testing.assert_array_equal(actual, expected)
    else:
        assert actual[0] == expected[0]
        np.testing.assert_array_equal(actual[1], expected[1])


DYNAMIC = """
  let %ta = @tensor_array_unstack_tensor2_float32(%x);
  let %ta2 = @tensor_array_write_float32(%ta, 1, tensor1_float32(%v));
  let %fresh = @tensor_array_float32(3);
  let %pieces = @tensor_array_split_float32(@tensor_array_float32(2), tensor2_float32(%x), %lengths);
  (@tensor_array_read_float32(%ta2, 1),
   @tensor_array_stack_float32(%ta2),
   @tensor_array_concat_float32(%ta2),
   @tensor_array_gather_float32(%ta2, %idx),
   %pieces,
   @tensor_array_concat_float32(%pieces),
   @tensor_array_scatter_float32(%fresh, %idx, @tensor_array_unstack_tensor2_float32(%x)),
   @tensor_take_float32(tensor2_float32(%x), 1, 3),
   @tensor_expand_dims_float32(tensor1_float32(%v)),
   @tensor_concatenate_float32(tensor1_float32(%v), tensor1_float32(%v)),
   @length(%fresh))
"""


def _dynamic_expected():
    rows = [X[0], V, X[2]]
    return (("tensor1_float32", V),
            ("tensor2_float32", np.stack(rows)),
            ("tensor1_float32", np.concatenate(rows)),
            ("tensor2_float32", np.stack([rows[2], rows[0]])),
            [("tensor2_float32", X[0:1]), ("tensor2_float32", X[1:3])],
            ("tensor2_float32", X),
            [("tensor1_float32", X[1]), None, ("tensor1_float32", X[0])],
            ("tensor2_float32", X[1:3]),
            ("tensor2_float32", V[None]),
            ("tensor1_float32", np.concatenate([V, V])),
            3)


@pytest.mark.parametrize("kind", EXECUTORS)
def test_dynamic_tensor_array_matches_numpy(prelude, kind):
    mod = _program(prelude, "%x: Tensor[(?, ?), float32], %v: Tensor[(?), float32], "
                            "%idx: Tensor[(?), int32], %lengths: Tensor[(?), int32]", DYNAMIC)
    _close(run(mod, kind, X, V, IDX, LENGTHS), _dynamic_expected())


RANKS = range(1, 7)


def test_unstack_of_every_rank(prelude):
    """tensor_array_unstack_tensor<K> for K = 1..6 on int32 data (the VM for all ranks)."""
    params = ", ".join(f"%t{k}: Tensor[({', '.join('?' * k)}), int32]" for k in RANKS)
    body = "(" + ", ".join(f"@tensor_array_unstack_tensor{k}_int32(%t{k})" for k in RANKS) + ")"
    tensors = [np.arange(2 * 3 ** (k - 1), dtype="int32").reshape((2,) + (3,) * (k - 1)) for k in RANKS]
    out = run(_program(prelude, params, body), "vm", *tensors)
    _close(out, tuple([(f"tensor{k - 1}_int32", t[0]), (f"tensor{k - 1}_int32", t[1])]
                      for k, t in zip(RANKS, tensors)))


def test_every_dtype_is_registered(prelude):
    for dtype in ("float32", "float16", "float64", "int32", "uint8", "int8", "int16", "uint16", "int64"):
        assert prelude.get_global_var("tensor_array_read", dtype).name_hint == f"tensor_array_read_{dtype}"
        assert prelude.get_type("tensor_t", dtype).name_hint == f"tensor_{dtype}_t"
        assert prelude.get_tensor_ctor("tensor3", dtype).name_hint == f"tensor3_{dtype}"


@pytest.fixture(scope="module")
def static_prelude():
    p = relay.Prelude()
    StaticTensorArrayOps(p, "float32", (2, 3)).register()
    StaticTensorArrayOps(p, "float32", (relay.Any(), 3)).register()
    return p


STATIC = """
  let %ta = @tensor_array_float32_2_3(2);
  let %ta1 = @tensor_array_write_float32_2_3(%ta, 0, tensor_constructor_float32_2_3(%a));
  let %ta2 = @tensor_array_write_float32_2_3(%ta1, 1, tensor_constructor_float32_2_3(%b));
  let %pieces = @tensor_array_split_float32_2_3(@tensor_array_float32_any_3(2), tensor_constructor_float32_2_3(%a), %lengths);
  (@tensor_get_data_float32_2_3(@tensor_array_read_float32_2_3(%ta2, 1)),
   @tensor_array_stack_float32_2_3(%ta2),
   @tensor_array_gather_float32_2_3(%ta2, %idx),
   @tensor_array_unstack_float32_2_3(%a),
   @tensor_array_concat_float32_2_3(%pieces),
   @tensor_take_float32_2_3(tensor_constructor_float32_2_3(%a), 0, 1),
   @tensor_expand_dims_float32_2_3(tensor_constructor_float32_2_3(%b)),
   @tensor_concatenate_float32_2_3(tensor_constructor_float32_2_3(%a), tensor_constructor_float32_2_3(%b)),
   @tensor_array_scatter_float32_2_3(@tensor_array_float32_2_3(2), %idx01, %ta2))
"""
A = np.arange(6, dtype="float32").reshape(2, 3)
B = -A
IDX01 = np.array([1, 0], dtype="int32")


def _static_expected():
    ctor = "tensor_constructor_float32_{}".format
    return (B,
            (ctor("any_2_3"), np.stack([A, B])),
            (ctor("any_2_3"), np.stack([B, A])),
            [(ctor("3"), A[0]), (ctor("3"), A[1])],
            (ctor("any_3"), A),
            (ctor("any_3"), A[0:1]),
            (ctor("any_2_3"), B[None]),
            (ctor("any_3"), np.concatenate([A, B])),
            [(ctor("2_3"), B), (ctor("2_3"), A)])


@pytest.mark.parametrize("kind", EXECUTORS)
def test_static_tensor_array_matches_numpy(static_prelude, kind):
    mod = _program(static_prelude, "%a: Tensor[(2, 3), float32], %b: Tensor[(2, 3), float32], "
                                   "%lengths: Tensor[(?), int32], %idx: Tensor[(?), int32], "
                                   "%idx01: Tensor[(?), int32]", STATIC)
    _close(run(mod, kind, A, B, np.array([1, 1], "int32"), IDX01, IDX01), _static_expected())


def test_static_types_keep_their_shapes(static_prelude):
    p = static_prelude
    ta = relay.Call(p.get_global_var_static("tensor_array", "float32", (2, 3)), [relay.const(2)])
    assert get_tensor_array_shape(ta, "float32", p) == (2, 3)
    dynamic = relay.Call(p.get_global_var("tensor_array", "float32"), [relay.const(2)])
    assert get_tensor_array_shape(dynamic, "float32", p) is None
    read = p.mod[p.get_global_var_static("tensor_get_data", "float32", (2, 3))]
    assert read.ret_type == relay.TensorType((2, 3), "float32")
    assert "main" not in p.mod   # get_tensor_array_shape leaves the module alone


def test_batch_dim_one_stacks_a_single_element(static_prelude):
    p = static_prelude
    StaticTensorArrayOps(p, "float32", (2, 3), batch_dim=1).register()
    stack = p.get_global_var_static("tensor_array_stack", "float32", (2, 3), batch_dim=1)
    assert stack.name_hint == "tensor_array_stack_float32_batch1_2_3"
    body = f"""
      let %ta = @tensor_array_write_float32_2_3(@tensor_array_float32_2_3(1), 0, tensor_constructor_float32_2_3(%a));
      @{stack.name_hint}(%ta)"""
    out = run(_program(p, "%a: Tensor[(2, 3), float32]", body), "debug", A)
    _close(out, ("tensor_constructor_float32_1_2_3", A[None]))
