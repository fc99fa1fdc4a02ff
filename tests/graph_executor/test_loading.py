"""Loading hand-edited graph JSON: the storage plan in the file is proven safe with the memory
planner's own liveness checker (two live tensors never share a storage id), sizes are checked
against the stated limit before any pool is allocated, and __nop/__copy nodes must copy between
entries of one dtype and element count. Every rejection is a RelayError naming what was wrong;
results of what loads are compared with numpy."""
import json

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import config, graph_executor
from relay_backend.errors import AllocationError, InputError, SerializationError
from relay_backend.graph_executor.factory import GRAPH_SECTION
from relay_backend.transform import PassContext

from ..artifact_edit import edit_library_section
from .models import abs_reshape_exp

pytestmark = pytest.mark.compile
X = np.linspace(-1.0, 1.0, 4, dtype="float32")


def _build(body_of, opt_level=0, shape=(4,)):
    x = relay.var("x", shape=shape)
    with PassContext(opt_level=opt_level):
        return relay.build(relay.IRModule.from_expr(relay.Function([x], body_of(x))))


@pytest.fixture(scope="module")
def two_outputs():
    return _build(lambda x: relay.Tuple([relay.exp(x), relay.negative(x)]))


@pytest.fixture(scope="module")
def live_intermediate():
    """x -> y = exp(x) -> z = -y -> w = y + z: y is still read by the add when z is written."""
    def body(x):
        y = relay.exp(x)
        return relay.add(y, relay.negative(y))
    return _build(body)


@pytest.fixture(scope="module")
def nop_graph():
    """abs -> reshape (a relay.reshape_only primitive: a __nop sharing storage) -> exp."""
    return relay.build(abs_reshape_exp())


def _edited(lib, edit):
    graph = json.loads(lib.get_graph_json())
    edit(graph)
    return json.dumps(graph)


def _sids(graph):
    return graph["attrs"]["storage_id"][1]


def test_two_outputs_sharing_a_storage_id_are_rejected(two_outputs):
    # before: both kernels wrote one pool and output 0 read back -x instead of exp(x)
    def share(graph):
        _sids(graph)[2] = _sids(graph)[1]
    with pytest.raises(SerializationError, match=r"storage_id.*'tvmgen_default_fused_exp'.*"
                                                 r"'tvmgen_default_fused_negative'.*both live"):
        graph_executor.create(_edited(two_outputs, share), two_outputs.get_lib(), relay.cpu())


def test_an_intermediate_overwritten_while_still_read_is_rejected(live_intermediate):
    # before: the add read -exp(x) twice and returned -2 exp(x) instead of 0
    def share(graph):
        _sids(graph)[2] = _sids(graph)[1]
    with pytest.raises(SerializationError, match=r"storage_id.*both live"):
        graph_executor.create(_edited(live_intermediate, share), live_intermediate.get_lib(), relay.cpu())


def test_an_input_sharing_storage_with_a_kernel_output_is_rejected(live_intermediate):
    def share(graph):
        _sids(graph)[3] = _sids(graph)[0]
    with pytest.raises(SerializationError, match=r"storage_id.*inputs and params are never shared"):
        graph_executor.create(_edited(live_intermediate, share), live_intermediate.get_lib(), relay.cpu())


def test_storage_ids_beyond_the_entry_count_are_rejected(live_intermediate):
    def far(graph):
        _sids(graph)[1] = 1 << 40
    with pytest.raises(SerializationError, match=r"attrs\['storage_id'\]\[1\] is 1099511627776"):
        graph_executor.create(_edited(live_intermediate, far), live_intermediate.get_lib(), relay.cpu())


def test_safe_sharing_written_by_hand_loads_and_matches_numpy():
    # exp, negative, exp: entry 1 (exp) is dead once the negative ran, so the last exp may reuse it
    def body(x):
        return relay.exp(relay.negative(relay.exp(x)))
    lib = _build(body)

    def reuse(graph):
        _sids(graph)[:] = [0, 1, 2, 1]
    gmod = graph_executor.create(_edited(lib, reuse), lib.get_lib(), relay.cpu())
    gmod.run(x=X)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), np.exp(-np.exp(X)), rtol=1e-6)


def test_planned_graphs_with_reuse_load_and_match_numpy():
    def chain(x):
        for i in range(6):
            x = relay.exp(x) if i % 2 == 0 else relay.negative(x)
        return x
    lib = _build(chain)
    assert len(set(_sids(json.loads(lib.get_graph_json())))) < 7        # the planner reused storage
    gmod = lib["default"](relay.cpu())
    gmod.run(x=X)
    expected = X.astype("float64")
    for i in range(6):
        expected = np.exp(expected) if i % 2 == 0 else -expected
    np.testing.assert_allclose(gmod.get_output(0).numpy(), expected, rtol=1e-5)


def test_huge_shapes_raise_allocation_error_naming_the_entry_before_allocating(two_outputs):
    def huge(graph):
        graph["attrs"]["shape"][1][1] = [1 << 44]
    with pytest.raises(AllocationError, match=r"graph entry 1 \('tvmgen_default_fused_exp'\)"):
        graph_executor.create(_edited(two_outputs, huge), two_outputs.get_lib(), relay.cpu())


def test_storage_pools_together_over_the_limit_raise_allocation_error(two_outputs, monkeypatch):
    monkeypatch.setenv("RB_MAX_TENSOR_BYTES", "40")         # each 16-byte entry fits, 48 together do not
    config.reload()
    try:
        with pytest.raises(AllocationError, match=r"graph storage .*48 bytes"):
            graph_executor.create(two_outputs.get_graph_json(), two_outputs.get_lib(), relay.cpu())
    finally:
        monkeypatch.delenv("RB_MAX_TENSOR_BYTES")
        config.reload()


def _copy_node(graph):
    graph["nodes"][2]["attrs"]["func_name"] = "__copy"
    _sids(graph)[2] = max(_sids(graph)) + 1                 # a storage of its own


@pytest.mark.parametrize("edit, pattern", [
    (lambda g: g["attrs"]["shape"][1].__setitem__(2, [3, 3]), r"node 2 \('reshape_nop'\): __nop .*12.*9"),
    (lambda g: g["attrs"]["dltype"][1].__setitem__(2, "int32"), r"node 2 \('reshape_nop'\): __nop .*float32.*int32"),
    (lambda g: (_copy_node(g), g["attrs"]["shape"][1].__setitem__(2, [5])),
     r"node 2 \('reshape_nop'\): __copy .*12.*5"),
    (lambda g: (g["nodes"][2]["attrs"].update(num_inputs="2"), g["nodes"][2]["inputs"].append([0, 0, 0])),
     r"node 2 \('reshape_nop'\): __nop .*one input"),
])
def test_nop_and_copy_nodes_must_keep_dtype_and_size(nop_graph, edit, pattern):
    # before: numpy's reshape raised ValueError inside run()
    with pytest.raises(SerializationError, match=pattern):
        graph_executor.create(_edited(nop_graph, edit), nop_graph.get_lib(), relay.cpu())


@pytest.mark.parametrize("edit", [lambda g: None, _copy_node])
def test_nop_and_copy_of_matching_entries_run_and_match_numpy(nop_graph, edit):
    gmod = graph_executor.create(_edited(nop_graph, edit), nop_graph.get_lib(), relay.cpu())
    data = np.arange(-6, 6, dtype="float32").reshape(2, 6)
    gmod.run(x=data)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), np.exp(np.abs(data)).reshape(3, 4), rtol=1e-6)


def test_deeply_nested_graph_json_is_a_serialization_error(two_outputs):
    with pytest.raises(SerializationError, match="not JSON"):
        graph_executor.create("[" * 100000 + "]" * 100000, two_outputs.get_lib(), relay.cpu())


def _header_edit(change):
    def edit(blob):
        header = json.loads(blob)
        change(header)
        return json.dumps(header).encode()
    return edit


@pytest.mark.parametrize("change, pattern", [
    (lambda h: h.pop("graph_json"), r"graph executor section.*'graph_json' must be a str"),
    (lambda h: h.update(graph_json=5), r"graph executor section.*'graph_json' must be a str"),
    (lambda h: h.update(module_name=["default"]), r"graph executor section.*'module_name' must be a str"),
    (lambda h: h.update(target=None), r"graph executor section.*'target' must be a str"),
    (lambda h: h.update(graph_json=json.dumps(_shared_outputs(json.loads(h["graph_json"])))),
     r"storage_id.*both live"),
])
def test_exported_factory_with_an_edited_graph_section_is_rejected(two_outputs, tmp_path, change, pattern):
    path = tmp_path / "graph.so"
    two_outputs.export_library(str(path))
    path.write_bytes(edit_library_section(path.read_bytes(), GRAPH_SECTION, _header_edit(change)))
    with pytest.raises(SerializationError, match=pattern):
        relay.runtime.load_module(str(path))


def _shared_outputs(graph):
    _sids(graph)[2] = _sids(graph)[1]
    return graph


def test_exported_factory_round_trips_through_the_section_editor(two_outputs, tmp_path):
    path = tmp_path / "graph.so"
    two_outputs.export_library(str(path))
    path.write_bytes(edit_library_section(path.read_bytes(), GRAPH_SECTION, lambda blob: blob))
    gmod = relay.runtime.load_module(str(path))["default"](relay.cpu())
    gmod.run(x=X)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), np.exp(X), rtol=1e-6)
    np.testing.assert_array_equal(gmod.get_output(1).numpy(), -X)


@pytest.mark.parametrize("blob", [None, 5, "params.bin", [1, 2]])
def test_load_params_with_a_wrong_type_names_the_type(two_outputs, blob):
    # before: bytes(None) / bytes("...") raised TypeError and bytes(5) read five zero bytes
    gmod = two_outputs["default"](relay.cpu())
    with pytest.raises(InputError, match=rf"load_params expects the bytes of a params blob .* got {type(blob).__name__}"):
        gmod.load_params(blob)
