"""runtime.page_size.small_pages: transparent huge pages off for the process inside, back as they
were after (nested, from two threads, and when they were off before); FoldConstant folds inside
it. Linux only (prctl); elsewhere small_pages does nothing."""
import sys
import threading

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.runtime import page_size
from relay_backend.transform import fold_constant

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or page_size._prctl() is None,
                                reason="PR_SET_THP_DISABLE is a Linux prctl")


@pytest.fixture
def huge_pages_on():
    assert not page_size.huge_pages_disabled(), "the test process starts with huge pages allowed"
    yield
    assert not page_size.huge_pages_disabled()


def test_inside_off_after_back(huge_pages_on):
    with page_size.small_pages():
        assert page_size.huge_pages_disabled()
        with page_size.small_pages():
            assert page_size.huge_pages_disabled()
        assert page_size.huge_pages_disabled()          # the outer use still holds the switch


def test_back_after_an_error(huge_pages_on):
    with pytest.raises(ZeroDivisionError):
        with page_size.small_pages():
            1 / 0


def test_two_threads_share_the_switch(huge_pages_on):
    inside, leave = threading.Barrier(2), threading.Event()
    seen = []

    def user():
        with page_size.small_pages():
            inside.wait()
            leave.wait()
            seen.append(page_size.huge_pages_disabled())

    other = threading.Thread(target=user)
    other.start()
    with page_size.small_pages():
        inside.wait()
    still_off = page_size.huge_pages_disabled()            # the other thread is still inside
    leave.set()
    other.join()
    assert still_off and seen == [True]


def test_left_off_when_it_was_off_before():
    assert page_size._set_disabled(True)
    try:
        with page_size.small_pages():
            pass
        assert page_size.huge_pages_disabled()
    finally:
        page_size._set_disabled(False)


def test_fold_constant_folds_in_small_pages(monkeypatch, huge_pages_on):
    states = []
    real = fold_constant._nd.array

    def recording(value, *args, **kwargs):
        states.append(page_size.huge_pages_disabled())
        return real(value, *args, **kwargs)
    monkeypatch.setattr(fold_constant._nd, "array", recording)
    w = relay.const(np.arange(12, dtype="float32").reshape(3, 4))
    x = relay.var("x", shape=(3, 4))
    mod = relay.IRModule.from_expr(relay.Function([x], x + relay.multiply(w, relay.const(2.0))))
    states.clear()                                          # the constants made above
    folded = relay.transform.FoldConstant()(mod)
    assert states and all(states)
    const = folded["main"].body.args[1]
    assert isinstance(const, relay.Constant)
    np.testing.assert_array_equal(const.data.numpy(), np.arange(12, dtype="float32").reshape(3, 4) * 2)
