"""Executor API: argument conversion and checking as TVM's, and create_executor's kinds."""
import numpy as np
import pytest

from relay_backend.build_module import create_executor
from relay_backend.errors import InputError, RelayError
from relay_backend.interpreter import Interpreter
from relay_backend.ir import Function, IRModule, TensorType, Tuple, TupleType, Var, const, var
from relay_backend.op import tensor as T
from relay_backend.runtime import cpu
from relay_backend.runtime import ndarray as nd


def _sub_mod(shape=(2, 3), dtype="float32"):
    x, y = var("x", shape=shape, dtype=dtype), var("y", shape=shape, dtype=dtype)
    return IRModule.from_expr(Function([x, y], T.subtract(x, y)))


def _xy(shape=(2, 3), dtype="float32"):
    rng = np.random.default_rng(1)
    return (rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype))


def test_positional_then_keyword_arguments():
    f = create_executor(mod=_sub_mod()).evaluate()
    a, b = _xy()
    np.testing.assert_array_equal(f(a, b).numpy(), a - b)
    np.testing.assert_array_equal(f(a, y=b).numpy(), a - b)
    np.testing.assert_array_equal(f(y=b, x=a).numpy(), a - b)


def test_duplicate_argument():
    f = create_executor(mod=_sub_mod()).evaluate()
    a, b = _xy()
    with pytest.raises(InputError, match=r"duplicate argument supplied in both positional args "
                                         r"\(at position: 0\), and keyword argument \(with name: x\)"):
        f(a, x=a, y=b)


def test_insufficient_and_too_many_arguments():
    f = create_executor(mod=_sub_mod()).evaluate()
    a, b = _xy()
    with pytest.raises(InputError, match="insufficient arguments, expected 2, provided 1"):
        f(a)
    with pytest.raises(InputError, match="insufficient arguments, expected 2, provided 1"):
        f(x=a)
    with pytest.raises(InputError, match="too many arguments, expected 2, provided 3"):
        f(a, b, b)


def test_unknown_keyword():
    f = create_executor(mod=_sub_mod()).evaluate()
    a, b = _xy()
    with pytest.raises(InputError, match="unknown keyword argument.*'z'"):
        f(a, b, z=a)


def test_wrong_shape_and_dtype_name_the_parameter():
    f = create_executor(mod=_sub_mod()).evaluate()
    a, b = _xy()
    with pytest.raises(InputError, match=r"parameter 'y' expects Tensor\[\(2, 3\), float32\].*shape \(3, 2\)"):
        f(a, b.T.copy())
    with pytest.raises(InputError, match=r"parameter 'x'.*dtype float64"):
        f(a.astype("float64"), b)


def test_python_scalars_convert_like_relay_const():
    for dtype, value in (("int32", 7), ("float32", 2.5), ("bool", True)):
        x = var("x", shape=(), dtype=dtype)
        f = create_executor(mod=IRModule.from_expr(Function([x], T.copy(x)))).evaluate()
        out = f(value)
        assert out.dtype == dtype and out.numpy() == value


def test_numpy_dtype_is_preserved_and_ndarray_accepted():
    f = create_executor(mod=_sub_mod(dtype="float64")).evaluate()
    a, b = _xy(dtype="float64")
    out = f(nd.array(a), b)
    assert out.dtype == "float64"
    np.testing.assert_array_equal(out.numpy(), a - b)


def test_tuple_argument_checked_per_field():
    t = Var("t", TupleType([TensorType((2,), "float32"), TensorType((), "int32")]))
    f = create_executor(mod=IRModule.from_expr(Function([t], t))).evaluate()
    out = f((np.float32([1, 2]), 3))
    assert out[1].dtype == "int32" and int(out[1].numpy()) == 3
    with pytest.raises(InputError, match="field 0"):
        f((np.float32([1, 2, 3]), 3))


def test_evaluate_closed_expression_and_binds():
    intrp = create_executor()
    out = intrp.evaluate(T.add(const(1.0), const(2.0)))
    assert out.dtype == "float32" and float(out.numpy()) == 3.0
    x = var("x", shape=(2,))
    out = intrp.evaluate(T.multiply(x, x), binds={x: np.float32([3, 4])})
    np.testing.assert_array_equal(out.numpy(), [9, 16])
    with pytest.raises(InputError, match="free variables"):
        intrp.evaluate(T.multiply(x, x))


def test_evaluate_function_returns_callable():
    x = var("x", shape=(2,))
    f = Interpreter(IRModule(), cpu(0), "llvm").evaluate(Function([x], Tuple([x, T.negative(x)])))
    out = f(np.float32([1, -2]))
    np.testing.assert_array_equal(out[1].numpy(), [-1, 2])


def test_params_are_bound_into_main():
    a, b = _xy()
    ex = create_executor(mod=_sub_mod(), params={"y": b})
    np.testing.assert_array_equal(ex.evaluate()(a).numpy(), a - b)


@pytest.mark.compile
@pytest.mark.parametrize("kind", ["graph", "vm", "aot"])
def test_compiled_kinds_agree_with_numpy(kind):
    a, b = _xy()
    out = create_executor(kind, mod=_sub_mod()).evaluate()(a, y=b)
    np.testing.assert_allclose(out.numpy(), a - b, rtol=1e-6)


def test_unknown_kind():
    with pytest.raises(RelayError, match="unknown execution strategy: fast.*debug"):
        create_executor("fast")


def test_device_must_match_target():
    from relay_backend.runtime import cuda
    with pytest.raises(RelayError, match="does not match target"):
        create_executor(mod=_sub_mod(), device=cuda(0), target="llvm")


def test_empty_tensors_pass_through():
    x = var("x", shape=(0, 3))
    out = create_executor(mod=IRModule.from_expr(Function([x], T.add(x, x)))).evaluate()(
        np.zeros((0, 3), "float32"))
    assert out.shape == (0, 3) and out.dtype == "float32"
