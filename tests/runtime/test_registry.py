"""The global function registry behaves as TVM's (tvm._ffi.registry): register, look up, list,
override, decorator forms, and clear errors for missing or duplicate names."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import GlobalFuncError, RelayError


def test_register_func_round_trip(scratch_names):
    scratch_names.append("test.registry.add_one")

    def add_one(x):
        return x + 1

    assert relay.register_func("test.registry.add_one", add_one) is add_one
    assert relay.get_global_func("test.registry.add_one") is add_one
    assert relay.get_global_func("test.registry.add_one")(41) == 42
    assert "test.registry.add_one" in relay.list_global_func_names()
    relay.remove_global_func("test.registry.add_one")
    assert "test.registry.add_one" not in relay.list_global_func_names()


def test_decorator_forms(scratch_names):
    scratch_names += ["test.registry.named", "test_registry_bare"]

    @relay.register_func("test.registry.named")
    def named(x):
        return x * 2

    @relay.register_func
    def test_registry_bare(x):
        return x * 3

    assert relay.get_global_func("test.registry.named")(4) == 8
    assert relay.get_global_func("test_registry_bare")(4) == 12
    assert named(1) == 2 and test_registry_bare(1) == 3   # the decorator returns the function


def test_duplicate_name_needs_override(scratch_names):
    scratch_names.append("test.registry.dup")
    relay.register_func("test.registry.dup", lambda: 1)
    with pytest.raises(GlobalFuncError, match="already registered.*override=True"):
        relay.register_func("test.registry.dup", lambda: 2)
    assert relay.get_global_func("test.registry.dup")() == 1
    relay.register_func("test.registry.dup", lambda: 3, override=True)
    assert relay.get_global_func("test.registry.dup")() == 3


def test_missing_name_is_a_clear_error():
    with pytest.raises(GlobalFuncError, match="Cannot find global function 'test.registry.nope'"):
        relay.get_global_func("test.registry.nope")
    assert relay.get_global_func("test.registry.nope", allow_missing=True) is None
    assert issubclass(GlobalFuncError, RelayError) and issubclass(GlobalFuncError, ValueError)
    with pytest.raises(GlobalFuncError, match="non-empty string"):
        relay.register_func("", lambda: 0)
    with pytest.raises(GlobalFuncError, match="expected a callable"):
        relay.register_func("test.registry.not_callable", 3)


def test_tvm_style_aliases_and_builtin_names():
    assert relay._ffi.register_func is relay.register_func
    assert relay._ffi.registry.get_global_func is relay.runtime.get_global_func
    save = relay.get_global_func("runtime.SaveParams")
    load = relay.get_global_func("runtime.LoadParams")
    blob = save({"w": np.arange(6, dtype="float32").reshape(2, 3)})
    assert isinstance(blob, bytearray)
    np.testing.assert_array_equal(load(blob)["w"].numpy(), np.arange(6, dtype="float32").reshape(2, 3))


def test_param_dict_names_under_relay_and_runtime():
    params = {"a": np.ones((2, 2), "float32"), "b": np.arange(3, dtype="int64")}
    for save, load in ((relay.save_param_dict, relay.load_param_dict),
                       (relay.runtime.save_param_dict, relay.runtime.load_param_dict)):
        blob = save(params)
        assert isinstance(blob, bytearray)
        back = load(blob)
        assert list(back) == ["a", "b"]
        for k, v in params.items():
            np.testing.assert_array_equal(back[k].numpy(), v)
