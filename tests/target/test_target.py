"""target.Target: parsing strings and dicts once, typed options, keys, canonical str() round
trips, errors naming the valid kinds and options, host, Target.current()."""
import threading

import pytest

from relay_backend.errors import CompileError, TargetError
from relay_backend.target import Target, arm_cpu, as_target, cuda, host_triple

ROUND_TRIP = [
    "llvm -mcpu=znver4 -mattr=+avx2 -num-cores=2",
    "llvm -mtriple=aarch64-linux-gnu",
    "c",
    "cuda -arch=sm_90 -max_num_threads=1024",
    "llvm",
    "llvm -device=arm_cpu -mattr=+neon,+dotprod",
    "llvm -mcpu=native -opt-level=2 -fast-math",
    "llvm -model='board rev 2'",
    "c -march=x86-64-v2 -workspace-byte-alignment=16",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_str_round_trips(text):
    target = Target(text)
    again = Target(str(target))
    assert again == target and hash(again) == hash(target)
    assert str(again) == str(target)
    assert Target(target.export()) == target


def test_typed_options():
    t = Target("llvm -mcpu=znver4 -mattr=+avx2,+fma -num-cores=2 -fast-math=true")
    assert t.kind.name == "llvm" and t.mcpu == "znver4"
    assert t.mattr == ("+avx2", "+fma") and t.attrs["num-cores"] == 2
    assert t.attrs["fast-math"] is True
    # "-key value" and a bare "-flag" (a true boolean) as TVM accepts them
    assert Target("llvm -mcpu znver4 -fast-math").attrs == {"mcpu": "znver4", "fast-math": True}
    c = Target("cuda -arch=sm_90 -max_num_threads=512")
    assert c.arch == "sm_90" and c.max_num_threads == 512 and c.thread_warp_size == 32
    assert c.device_type == 2 and Target("c").device_type == 1


def test_canonical_form():
    assert str(Target("cuda -arch=sm_80")) == \
        "cuda -keys=cuda,gpu -arch=sm_80 -max_num_threads=1024 -thread_warp_size=32"
    # llvm without -mtriple/-mcpu gets the host triple, as TVM's CPU parser does
    assert Target("llvm").attrs["mtriple"] == host_triple()
    assert "-mtriple" not in str(Target("llvm -mcpu=native"))


@pytest.mark.parametrize("text, keys", [
    ("llvm -mtriple=aarch64-linux-gnu", ("arm_cpu", "cpu")),
    ("llvm -mtriple=armv7l-linux-gnueabihf", ("arm_cpu", "cpu")),
    ("llvm -device=arm_cpu", ("arm_cpu", "cpu")),
    ("llvm -mtriple=x86_64-linux-gnu", ("x86", "cpu")),
    ("c", ("cpu",)),
    ("c -device=arm_cpu", ("arm_cpu", "cpu")),
    ("cuda", ("cuda", "gpu")),
    ("llvm -keys=mykey -mtriple=x86_64-linux-gnu", ("mykey", "x86", "cpu")),
])
def test_keys_derived_as_tvm_does(text, keys):
    assert Target(text).keys == keys


@pytest.mark.parametrize("text, message", [
    ("opencl", r"unknown target kind 'opencl'; valid kinds are \['c', 'cuda', 'llvm'\]"),
    ("llvm -mcpux=a", r"unknown option -mcpux; valid options are .*-mattr, -mcpu,.* -mtriple"),
    ("cuda -mtriple=x", r"target cuda: unknown option -mtriple; valid options are .*-arch"),
    ("llvm -num-cores=two", r"-num-cores expects an integer, got 'two'"),
    ("llvm -fast-math=maybe", r"-fast-math expects a boolean"),
    ("cuda -arch=80", r"invalid CUDA arch -arch=80"),
    ("llvm mcpu=x", r"'mcpu=x' is not an option"),
    ("llvm -mcpu=a -mcpu=b", r"-mcpu is given twice"),
    ("llvm -libs=cudnn", r"external libraries .* are not supported"),
    ("", r"empty target string"),
    ("llvm -model='x", r"cannot parse target"),
])
def test_errors_name_what_is_valid(text, message):
    with pytest.raises(TargetError, match=message) as info:
        Target(text)
    assert isinstance(info.value, (CompileError, ValueError))


def test_dict_errors():
    with pytest.raises(TargetError, match="needs a 'kind'"):
        Target({"arch": "sm_80"})
    with pytest.raises(TargetError, match=r"option -num-cores expects an int, got list"):
        Target({"kind": "llvm", "num-cores": [2]})
    with pytest.raises(TargetError, match=r"option -num-cores expects an integer, got 'x'"):
        Target({"kind": "llvm", "num-cores": "x"})
    with pytest.raises(TargetError, match="a str, a dict or a Target"):
        Target(3)
    assert Target({"kind": "llvm", "mattr": ["+avx2"], "num-cores": 4}).attrs["num-cores"] == 4


def test_targets_are_immutable_values():
    import copy
    t = Target("cuda -arch=sm_80", host="llvm")
    assert copy.deepcopy(t) is t and copy.copy(t) is t
    assert {t: 1}[Target("cuda -arch=sm_80", host="llvm")] == 1
    with pytest.raises(TypeError):
        t.attrs["arch"] = "sm_90"


def test_host():
    t = Target("cuda", host="llvm")
    assert t.host == Target("llvm") and t != Target("cuda")
    assert Target(t.export()) == t
    assert Target("cuda -host=llvm").host == Target("llvm")
    assert Target("cuda").with_host("c").host.kind.name == "c"
    with pytest.raises(TargetError, match="host of a target must be a CPU target"):
        Target("llvm", host="cuda")


def test_current_is_a_context_manager_per_thread():
    assert Target.current() is None
    with pytest.raises(TargetError, match="no target is set"):
        Target.current(allow_none=False)
    seen = []
    with Target("cuda") as outer:
        assert Target.current() is outer
        with Target("c"):
            assert Target.current().kind.name == "c"
            worker = threading.Thread(target=lambda: seen.append(Target.current()))
            worker.start()
            worker.join()
        assert Target.current() is outer
        assert as_target(None) is outer
    assert Target.current() is None and seen == [None]
    assert as_target(None) == Target("llvm")


def test_helpers():
    assert cuda(arch="sm_80").arch == "sm_80" and cuda().model == "unknown"
    board = arm_cpu("rasp4b64")
    assert board.keys == ("arm_cpu", "cpu") and board.triple == "aarch64-linux-gnu"
    assert arm_cpu().keys == ("arm_cpu", "cpu") and "-device=arm_cpu" in str(arm_cpu())


def test_host_mismatch_says_why():
    assert Target("llvm").host_mismatch() == "" and Target("llvm -mcpu=native").host_mismatch() == ""
    assert "aarch64 code" in Target("llvm -mtriple=aarch64-linux-gnu").host_mismatch()
    assert "-mcpu=some-other-cpu" in Target("llvm -mcpu=some-other-cpu").host_mismatch()
    assert "not have" in Target("llvm -mattr=+nonexistent-feature").host_mismatch()
    assert "cuda device" in Target("cuda").host_mismatch()
