"""prim_func_digest, the disk cache's key for a lowered kernel: the same kernel built again (in
this process or another) has the same digest; changing any one field codegen reads changes it;
two variables with one name are told apart; something it cannot serialise is refused, never
silently skipped; a 10,000-deep expression is fine."""
import os
import subprocess
import sys

import pytest

from relay_backend import te, tir
from relay_backend.tir.content_hash import UnhashableNode, prim_func_digest

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _kernel(c=1.0, factor=16, vectorize=True, dtype="float32", name="k"):
    a = te.placeholder((1024,), dtype, name="A")
    b = te.compute(a.shape, lambda i: te.exp(a[i]) * 2.0 + c, name="B")
    sch = te.create_schedule([b])
    _, inner = sch[b].split(b.op.axis[0], factor=factor)
    if vectorize:
        sch[b].vectorize(inner)
    return te.lower(sch, [a, b], name=name)


def _loops(kind="serial", n=8, store_outer=True, annotations=None, strides=None, scope_name="O"):
    out = tir.Buffer(scope_name, (n, n), "int32", strides=strides)
    i, j = tir.Var("i"), tir.Var("i")                    # two variables, one name
    value = i if store_outer else j
    body = tir.For(i, 0, n, kind, tir.For(j, 0, n, "serial", tir.BufferStore(out, value, (i, j))),
                   annotations=annotations)
    return tir.PrimFunc([out], body, "loops")


def test_the_same_kernel_built_twice_has_one_digest():
    assert prim_func_digest(_kernel()) == prim_func_digest(_kernel())
    assert prim_func_digest(_loops()) == prim_func_digest(_loops())


def test_the_digest_is_the_same_in_another_process():
    code = ("from tests.tir.test_content_hash import _kernel; "
            "from relay_backend.tir.content_hash import prim_func_digest; print(prim_func_digest(_kernel()))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=_REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == prim_func_digest(_kernel())


@pytest.mark.parametrize("changed", [
    lambda: _kernel(c=1.5), lambda: _kernel(factor=8), lambda: _kernel(vectorize=False),
    lambda: _kernel(dtype="float64"), lambda: _kernel(name="k2"),
])
def test_any_change_to_a_lowered_kernel_changes_the_digest(changed):
    assert prim_func_digest(changed()) != prim_func_digest(_kernel())


@pytest.mark.parametrize("changed", [
    lambda: _loops(kind="parallel"), lambda: _loops(n=9), lambda: _loops(store_outer=False),
    lambda: _loops(annotations={"pragma_unroll": 4}), lambda: _loops(strides=(16, 1)),
    lambda: _loops(scope_name="P"),
])
def test_any_change_to_a_loop_nest_changes_the_digest(changed):
    assert prim_func_digest(changed()) != prim_func_digest(_loops())


def test_attrs_are_part_of_the_digest():
    one, two = _loops(), _loops()
    two.attrs["num_outputs"] = 1
    assert prim_func_digest(one) != prim_func_digest(two)


def test_a_value_it_cannot_serialise_is_refused():
    func = _loops()
    func.attrs["something"] = object()
    with pytest.raises(UnhashableNode, match="builtins.object"):
        prim_func_digest(func)


def test_deep_expressions_do_not_recurse():
    out = tir.Buffer("O", (1,), "float32")
    e = tir.Var("x", "float32")
    for _ in range(10000):
        e = e + 1.0
    func = tir.PrimFunc([out], tir.BufferStore(out, e, (0,)), "deep")
    assert len(prim_func_digest(func)) == 64
