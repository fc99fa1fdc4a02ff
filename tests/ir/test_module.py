"""IRModule's API as tvm.IRModule's: building, updating, looking up, attributes, renaming."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import IRConstructionError, ModuleLookupError


def _box_type():
    """type Box[A] { Wrap(A), Empty }"""
    a = relay.TypeVar("A")
    box = relay.GlobalTypeVar("Box")
    wrap, empty = relay.Constructor("Wrap", [a], box), relay.Constructor("Empty", [], box)
    return box, wrap, empty, relay.TypeData(box, [a], [wrap, empty])


def _double():
    x = relay.var("x", shape=(2,), dtype="float32")
    return relay.Function([x], relay.add(x, x))


def test_from_expr_with_functions_and_type_definitions_runs():
    box, wrap, _, data = _box_type()
    double = relay.GlobalVar("double")
    y = relay.var("y", shape=(2,), dtype="float32")
    expr = wrap(relay.Call(double, [y]))          # not a Function: wrapped over its free vars
    mod = relay.IRModule.from_expr(expr, functions={double: _double()}, type_defs={box: data})
    assert [p.name_hint for p in mod["main"].params] == ["y"]
    assert mod.get_type("Box") == (box, *data.constructors) and mod[box] is data
    out = relay.create_executor("debug", mod=mod).evaluate()(np.array([1, 2], "float32"))
    np.testing.assert_array_equal(out.fields[0].numpy(), [2, 4])


def test_string_keys_and_type_definitions_by_name():
    box, _, _, data = _box_type()
    mod = relay.IRModule({"double": _double()}, {"Box": data})
    assert mod.get_global_type_var("Box") is box and "double" in mod
    with pytest.raises(IRConstructionError, match="must be the TypeData's header"):
        mod[relay.GlobalTypeVar("Other")] = data
    with pytest.raises(IRConstructionError, match="must map to a TypeData"):
        mod[box] = _double()


def test_update_and_update_func_replace_by_name():
    mod = relay.IRModule({"f": _double()})
    other = relay.IRModule({"f": _double(), "g": _double()})
    mod.update(other)
    assert mod.get_global_var("f") is other.get_global_var("f") and "g" in mod
    replacement = _double()
    mod.update_func(mod.get_global_var("g"), replacement)
    assert mod["g"] is replacement
    mod.update({"h": _double()})
    assert [gv.name_hint for gv in mod.get_global_vars()] == ["f", "g", "h"]
    del mod["h"]
    assert "h" not in mod


def test_global_var_of_another_module_with_the_same_name_is_rejected():
    mod = relay.IRModule({"f": _double()})
    with pytest.raises(IRConstructionError, match="different GlobalVar named @f"):
        mod[relay.GlobalVar("f")] = _double()


def test_missing_names_are_lookup_errors_that_list_what_exists():
    mod = relay.IRModule({"f": _double()})
    for lookup in (lambda: mod["g"], lambda: mod.get_global_var("g"), lambda: mod.get_global_type_var("T"),
                   lambda: mod.get_constructor(3)):
        with pytest.raises(ModuleLookupError):
            lookup()
    with pytest.raises(KeyError, match=r"@g; it has \['f'\]"):   # also a KeyError, as a mapping's
        mod["g"]


def test_definitions_are_read_only_views():
    mod = relay.IRModule({"f": _double()})
    assert dict(mod.functions) == {mod.get_global_var("f"): mod["f"]} and len(mod.type_definitions) == 0
    with pytest.raises(IRConstructionError, match="update_func"):
        mod.functions[relay.GlobalVar("g")] = _double()


def test_attributes_are_copied_not_shared():
    mod = relay.IRModule({"main": _double()})
    tagged = mod.with_attr("executor", "graph")
    assert tagged.get_attr("executor") == "graph" and mod.get_attr("executor") is None
    assert tagged.without_attr("executor").get_attr("executor") is None
    assert tagged.with_attrs({"a": 1}).attrs == {"executor": "graph", "a": 1}
    assert tagged["main"] is mod["main"]
    mod.update_global_info("devices", ["cpu"])
    assert mod.global_infos == {"devices": ["cpu"]} and mod.copy().global_infos == {"devices": ["cpu"]}


def test_replace_global_vars_renames_definitions_and_calls():
    mod = relay.parse('''#[version = "0.0.5"]
def @helper(%x: float32) -> float32 { %x * 2f }
def @main(%y: float32) -> float32 { @helper(@helper(%y)) }
''')
    renamed = mod.replace_global_vars({"helper": "twice"})
    assert "helper" not in renamed and "twice" in renamed and "helper" in mod
    assert renamed.astext().count("@twice(") == 3 and "@helper" not in renamed.astext()   # def + 2 calls
    out = relay.create_executor("debug", mod=renamed).evaluate()(np.float32(3))
    assert float(out.numpy()) == 12.0


def test_import_from_std_takes_only_shipped_file_names():
    with pytest.raises(ModuleLookupError, match="no standard library file"):
        relay.IRModule().import_from_std("../errors.py")
