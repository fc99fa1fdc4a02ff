"""Random programs with a size variable `n` in their input types (testing/symbolic_programs.py)
run on the debug interpreter and the VM for three concrete sizes each, and match the debug
interpreter (numpy references) on the same program with `n` replaced by that size. The VM
compiles each kernel once over `n`, so the three sizes exercise one compiled program.
On a failure hypothesis shrinks the program and the note shows its text and the sizes."""
import pytest
from hypothesis import given, note

from relay_backend.testing import executors
from relay_backend.testing.symbolic_programs import symbolic_programs
from relay_backend.testing.tolerances import assert_allclose

from .profiles import profile

pytestmark = pytest.mark.compile


def test_symbolic_programs_agree_with_numpy_at_three_sizes():

    @profile(ci_examples=8)
    @given(program=symbolic_programs(max_calls=12))
    def check(program):
        note(program.describe())
        assert any(not str(d).isdigit() for p in program.mod["main"].params
                   for d in p.checked_type.shape), "the program has no symbolic input dim"
        for size, inputs, static_mod in program.cases:
            expected = executors.run("debug", static_mod, inputs)
            for kind in ("debug", "vm"):
                actual = executors.run(kind, program.mod, inputs)
                assert len(actual) == len(expected)
                for i, (a, e) in enumerate(zip(actual, expected)):
                    assert_allclose(a, e, what=f"output {i} on {kind} with n = {size}")
    check()
