"""CompiledExecutor: argument flattening and output regrouping shared by create_executor's
"graph" and "aot" kinds, checked against numpy on nested tuple inputs and outputs."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import InputError
from relay_backend.executor import flatten_value, regroup_outputs
from relay_backend.runtime.container import ADT, tuple_object


def _nested_program():
    """main(x, t: (a, (b, c))) = (x + a, (b * c, x))."""
    vec = relay.TensorType((3,), "float32")
    x = relay.var("x", vec)
    t = relay.var("t", relay.TupleType([vec, relay.TupleType([vec, vec])]))
    a, bc = relay.TupleGetItem(t, 0), relay.TupleGetItem(t, 1)
    body = relay.Tuple([relay.add(x, a),
                        relay.Tuple([relay.multiply(relay.TupleGetItem(bc, 0), relay.TupleGetItem(bc, 1)), x])])
    return relay.IRModule.from_expr(relay.Function([x, t], body))


@pytest.mark.parametrize("kind", ["graph", "aot"])
def test_nested_tuples_in_and_out(kind):
    rng = np.random.default_rng(1)
    x, a, b, c = (rng.standard_normal(3).astype("float32") for _ in range(4))
    run = relay.create_executor(kind, mod=_nested_program(), target="llvm").evaluate()
    out = run(x, (a, (b, c)))
    assert isinstance(out, ADT) and len(out.fields) == 2 and len(out.fields[1].fields) == 2
    np.testing.assert_allclose(out.fields[0].numpy(), x + a, rtol=1e-6)
    np.testing.assert_allclose(out.fields[1].fields[0].numpy(), b * c, rtol=1e-6)
    np.testing.assert_array_equal(out.fields[1].fields[1].numpy(), x)
    again = run(t=(a, (b, c)), x=x)                  # keywords go through convert_args
    np.testing.assert_allclose(again.fields[0].numpy(), x + a, rtol=1e-6)
    with pytest.raises(InputError, match="parameter 't' expects a tuple"):
        run(x, a)
    with pytest.raises(InputError, match=r"too many arguments, expected 2, provided 3 \(main takes \(x, t\)\)"):
        run(x, (a, (b, c)), x)


def test_flatten_and_regroup_are_inverse():
    leaves = [np.float32(i) for i in range(4)]
    value = tuple_object([leaves[0], tuple_object([leaves[1], tuple_object([leaves[2]])]), leaves[3]])
    assert flatten_value(value) == leaves
    vec = relay.TensorType((), "float32")
    ty = relay.TupleType([vec, relay.TupleType([vec, relay.TupleType([vec])]), vec])
    back = regroup_outputs(ty, iter(leaves), "graph")
    assert flatten_value(back) == leaves and len(back.fields) == 3 and len(back.fields[1].fields) == 2
    with pytest.raises(relay.RelayError, match="the graph executor cannot return"):
        regroup_outputs(relay.FuncType([], vec), iter(leaves), "graph")
