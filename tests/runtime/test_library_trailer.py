"""Exported libraries whose trailer JSON was hand-edited (checksum recomputed): load_module
validates every function signature (dims, shape variables, output count, symbol names) and
raises SerializationError naming the function and the field, instead of a ZeroDivisionError,
IndexError, TypeError or a call through a Python object taken for a symbol. The checked call
binds every shape variable before comparing any dim, so no axis goes unchecked."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from relay_backend.errors import InputError, SerializationError
from relay_backend.runtime import load_module, nd
from relay_backend.runtime.module import Function, FunctionInfo, ParamInfo

from ..artifact_edit import edit_library, replace_library_metadata
from .kernels import add3_and_scale

pytestmark = pytest.mark.compile


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    path = tmp_path_factory.mktemp("lib") / "kernels.so"
    add3_and_scale().export_library(str(path))
    return path.read_bytes()


def _fn(meta, name):
    return next(f for f in meta["functions"] if f["name"] == name)


def _set_dim(name, param, axis, value):
    def edit(meta):
        _fn(meta, name)["params"][param]["shape"][axis] = value
    return edit


def _set_param(name, param, key, value):
    def edit(meta):
        _fn(meta, name)["params"][param][key] = value
    return edit


def _both(first, second):
    def edit(meta):
        first(meta)
        second(meta)
    return edit


def _nested(depth):
    """3 + 0 + 0 ... as a dim expression `depth` levels deep."""
    dim = 3
    for _ in range(depth):
        dim = ["+", dim, 0]
    return dim


def _set(name, key, value):
    def edit(meta):
        _fn(meta, name)[key] = value
    return edit


def _top(key, value):
    def edit(meta):
        meta[key] = value
    return edit


CASES = {
    # name: (edit, message pattern)
    "functions is a number": (_top("functions", 5), r"'functions' must be a list"),
    "function is a string": (_top("functions", ["add3"]), r"function 0 .* must be an object"),
    "dim divides by zero": (_set_dim("add3", 0, 0, ["//", 3, 0]), r"add3.*A.*divides by zero"),
    "dim modulo zero": (_set_dim("add3", 0, 1, ["%", 4, ["-", 2, 2]]), r"add3.*A.*divides by zero"),
    "dim list too short": (_set_dim("add3", 0, 0, ["+", 3]), r"add3.*A.*bad shape dim"),
    "dim empty list": (_set_dim("add3", 1, 0, []), r"add3.*B.*bad shape dim"),
    "dim unknown op": (_set_dim("add3", 1, 0, ["**", 3, 1]), r"add3.*B.*bad shape dim"),
    "dim is an object": (_set_dim("add3", 2, 0, {"n": 3}), r"add3.*C.*bad shape dim"),
    "dim negative": (_set_dim("add3", 2, 0, -3), r"add3.*C.*negative"),
    "dim nested too deep": (_set_dim("add3", 0, 0, _nested(200)), r"add3.*A.*nested"),
    "dim names an undeclared variable": (_set_dim("add3", 0, 0, ["+", "m", 0]),
                                         r"add3.*A.*'m' is not one of its shape variables"),
    "shape variable bound by no plain dim": (_both(_set_dim("scale", 0, 0, ["+", "n", 0]),
                                                   _set_dim("scale", 1, 0, ["+", "n", 0])),
                                             r"scale.*shape variable 'n' is not a plain dim"),
    "shape is a number": (_set_param("add3", 0, "shape", 12), r"add3.*A.*'shape' must be a list"),
    "dtype is a list": (_set_param("add3", 1, "dtype", ["float32"]), r"add3.*B.*dtype"),
    "num_outputs too large": (_set("add3", "num_outputs", 9), r"add3.*num_outputs=9"),
    "num_outputs negative": (_set("add3", "num_outputs", -1), r"add3.*num_outputs=-1"),
    "symbol of a Python attribute": (_set("add3", "symbol", "_handle"), r"add3.*symbol '_handle'"),
    "symbol dunder": (_set("add3", "symbol", "__class__"), r"add3.*symbol '__class__'"),
    "symbol with a NUL": (_set("add3", "symbol", "rb_add3\x00x"), r"add3.*symbol"),
    "symbol not a string": (_set("add3", "symbol", 7), r"add3.*symbol"),
    "symbol of another function": (_set("scale", "symbol", "rb_add3"),
                                   r"scale.*symbol 'rb_add3' is not 'rb_scale'"),
    "shape_vars not a list": (_set("scale", "shape_vars", "n"), r"scale.*shape_vars"),
    "params not a list": (_set("scale", "params", {"X": 1}), r"scale.*params"),
    "sections not a list": (_top("sections", 5), r"section table"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_edited_trailer_is_rejected_on_load(case, library, tmp_path):
    edit, pattern = CASES[case]
    path = tmp_path / "edited.so"
    path.write_bytes(edit_library(library, edit))
    with pytest.raises(SerializationError, match=pattern):
        load_module(str(path))


def test_deeply_nested_trailer_json_is_a_serialization_error(library, tmp_path):
    path = tmp_path / "deep.so"
    path.write_bytes(replace_library_metadata(library, b"[" * 100000 + b"]" * 100000))
    with pytest.raises(SerializationError, match="metadata"):
        load_module(str(path))


def test_unedited_library_still_loads_and_runs(library, tmp_path):
    path = tmp_path / "same.so"
    path.write_bytes(edit_library(library, lambda meta: None))
    mod = load_module(str(path))
    a = np.arange(12, dtype="float32").reshape(3, 4)
    out = nd.empty((3, 4), "float32")
    mod["add3"](nd.array(a), nd.array(a), out)
    np.testing.assert_array_equal(out.numpy(), 2 * a)
    x = np.arange(5, dtype="int32")
    y = nd.empty((5,), "int32")
    mod["scale"](nd.array(x), y)
    np.testing.assert_array_equal(y.numpy(), 3 * x)


def test_every_dim_is_checked_after_all_shape_variables_are_bound():
    # A's dim refers to n, which only B's shape binds: before, A's axis was compared while n was
    # still unbound and skipped, so a 2-element A passed for a kernel that reads n = 4 elements
    info = FunctionInfo("f", (ParamInfo("A", (("+", "n", 0),), "float32"), ParamInfo("B", ("n",), "float32")),
                        ("n",), "rb_f", 1)
    fn = Function(info, 0, owner=None)           # never called natively: only its argument check
    with pytest.raises(InputError, match=r"f: argument 0 \(A\): shape \(2,\) does not match .* expected 4"):
        fn.check_args((nd.array(np.zeros(2, "float32")), nd.array(np.zeros(4, "float32"))))
    assert fn.check_args((nd.array(np.zeros(4, "float32")), nd.array(np.zeros(4, "float32")))) == [4]


def test_a_divisor_bound_to_zero_at_call_time_is_an_input_error():
    info = FunctionInfo("g", (ParamInfo("A", ("n",), "float32"), ParamInfo("B", (("//", 8, "n"),), "float32")),
                        ("n",), "rb_g", 1)
    fn = Function(info, 0, owner=None)
    with pytest.raises(InputError, match=r"g: .*\(8 // n\) divides by zero.*n=0"):
        fn.check_args((nd.array(np.zeros(0, "float32")), nd.array(np.zeros(1, "float32"))))


_TRUNCATED = textwrap.dedent("""
    import sys
    from relay_backend.errors import SerializationError
    from relay_backend.runtime import load_module
    try:
        load_module(sys.argv[1])
        print("LOADED")
    except SerializationError as err:
        print("REJECTED", err)
""")


@pytest.mark.parametrize("cut", [8, 3000, 9000])
def test_a_section_table_that_truncates_the_shared_object_is_rejected(library, tmp_path, cut):
    # growing a section's size moves the split point into the ELF: dlopen of the truncated
    # object died with SIGBUS. Run in a subprocess so a crash fails the test instead of pytest.
    path = tmp_path / "kernels.so"
    path.write_bytes(library)
    mod = load_module(str(path))
    with_section = tmp_path / "sections.so"
    mod.export_library(str(with_section), sections={"extra": b"x" * 100})

    def grow(meta):
        meta["sections"][0][1] = 100 + cut
    edited = tmp_path / "truncated.so"
    edited.write_bytes(edit_library(with_section.read_bytes(), grow))
    done = subprocess.run([sys.executable, "-c", _TRUNCATED, str(edited)], capture_output=True, text=True,
                          timeout=120, cwd=os.getcwd())
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert "REJECTED" in done.stdout and "truncated" in done.stdout, done.stdout
