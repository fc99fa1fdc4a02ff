"""model_params.bin's digest is verified before the constants are first used, in the exported C
program, in the standalone library (weights compiled in) and in the library loaded in-process
(which reads the packed params buffer): a flipped byte in the weights is a clear error,
an intact file runs and matches numpy. The C digest is checked against hashlib's BLAKE2b."""
import hashlib
import os
import shutil
import subprocess

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.aot.build import AotLibrary, compile_model
from relay_backend.aot.params import HEADER_BYTES, _BLAKE2B_C
from relay_backend.codegen.c_compiler import find_cc
from relay_backend.errors import CompileError, ExecutionError, SerializationError

pytestmark = pytest.mark.compile
WEIGHTS = np.arange(1, 97, dtype="float32").reshape(96) / 7.0     # 384 bytes: three 128-byte blocks


@pytest.fixture(scope="module")
def factory():
    x = relay.var("x", shape=(96,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.multiply(x, relay.const(WEIGHTS))))
    return relay.build(mod, executor="aot")


def _flip_weight_byte(data: bytes, at: int) -> bytes:
    corrupt = bytearray(data)
    corrupt[at] ^= 0x01
    return bytes(corrupt)


def test_exported_program_verifies_the_digest(factory, tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out_dir = factory.export_library(str(tmp_path / "model"))
    params = os.path.join(out_dir, "model_params.bin")
    assert subprocess.run(["make", "-s", "model_run"], cwd=out_dir, capture_output=True).returncode == 0
    x = np.linspace(-1, 1, 96, dtype="float32")
    x.tofile(os.path.join(out_dir, "in.bin"))
    proc = subprocess.run(["./model_run", "in.bin", "out.bin"], cwd=out_dir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.fromfile(os.path.join(out_dir, "out.bin"), "float32"), x * WEIGHTS, rtol=1e-6)

    with open(params, "rb") as f:
        intact = f.read()
    with open(params, "wb") as f:      # one flipped bit in the last weight
        f.write(_flip_weight_byte(intact, HEADER_BYTES + WEIGHTS.nbytes - 1))
    assert subprocess.run(["make", "-s", "-B", "model_run"], cwd=out_dir, capture_output=True).returncode == 0
    proc = subprocess.run(["./model_run", "in.bin", "out2.bin"], cwd=out_dir, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "-5" in proc.stderr and "corrupt" in proc.stderr, proc.stderr
    assert not os.path.exists(os.path.join(out_dir, "out2.bin"))


def test_standalone_library_verifies_the_digest(factory, tmp_path):
    # a corrupt blob never reaches the C compiler
    bad_blob = _flip_weight_byte(factory.params_blob, HEADER_BYTES + 5)
    with pytest.raises(SerializationError, match="digest"):
        compile_model(factory.c_source, factory.h_source, bad_blob)
    # a library whose embedded weights were damaged after it was built (on disk, say)
    path = factory.standalone_library()
    with open(path, "rb") as f:
        library = f.read()
    at = library.find(WEIGHTS.tobytes())
    assert at > 0 and library.count(WEIGHTS.tobytes()) == 1
    damaged = str(tmp_path / "damaged.so")
    with open(damaged, "wb") as f:
        f.write(_flip_weight_byte(library, at + 17))
    module = factory["default"](relay.cpu(0))
    module.lib = AotLibrary(damaged, factory.program.prefix)
    with pytest.raises(ExecutionError, match=r"ERR_PARAMS_CORRUPT.*do not match its digest"):
        module.run(x=np.ones(96, "float32"))
    # the intact library, loaded the same way, runs and matches numpy
    module.lib = AotLibrary(path, factory.program.prefix)
    x = np.linspace(-1, 1, 96, dtype="float32")
    module.run(x=x)
    np.testing.assert_allclose(module.get_output(0).numpy(), x * WEIGHTS, rtol=1e-6)


def test_in_process_library_reads_and_verifies_the_params_buffer(factory, tmp_path):
    """The library relay.build loads holds no weights: it reads the packed buffer, checked the
    same way (a flipped byte: ERR_PARAMS_CORRUPT; another size: ERR_PARAMS); loaded without a
    buffer it refuses to run, and a library with the weights compiled in takes none."""
    with open(factory.lib.path, "rb") as f:
        assert WEIGHTS.tobytes() not in f.read()
    assert factory.params.buffer.ctypes.data % 64 == 0
    x = np.linspace(-1, 1, 96, dtype="float32")
    module = factory["default"](relay.cpu(0))
    module.run(x=x)
    np.testing.assert_allclose(module.get_output(0).numpy(), x * WEIGHTS, rtol=1e-6)
    cases = {"corrupt": (_flip_weight_byte(factory.params_blob, HEADER_BYTES + 9), r"ERR_PARAMS_CORRUPT"),
             "short": (factory.params_blob[:-64], r"ERR_PARAMS: .* not the one generated"),
             "none": (None, r"ERR_PARAMS: .* not the one generated")}
    for name, (blob, error) in cases.items():
        copy = str(tmp_path / f"{name}.so")        # another file: its own instance of the library
        shutil.copyfile(factory.lib.path, copy)
        other = factory["default"](relay.cpu(0))
        other.lib = AotLibrary(copy, factory.program.prefix, params=blob)
        with pytest.raises(ExecutionError, match=error):
            other.run(x=x)
    with pytest.raises(CompileError, match="set_params"):
        AotLibrary(factory.standalone_library(), factory.program.prefix, params=factory.params)
    module.run(x=x)                                # the original is untouched
    np.testing.assert_allclose(module.get_output(0).numpy(), x * WEIGHTS, rtol=1e-6)


def test_c_digest_matches_hashlib(tmp_path):
    """The C BLAKE2b-64 against hashlib on every length 0..300 (block edges at 128 and 256)."""
    data = bytes((i * 37 + 11) % 256 for i in range(300))
    source = ("#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n" + _BLAKE2B_C +
              "\nint main(void) {\n  static uint8_t data[300];\n  int n;\n"
              "  for (n = 0; n < 300; ++n) data[n] = (uint8_t)((n * 37 + 11) % 256);\n"
              "  for (n = 0; n <= 300; ++n) printf(\"%016llx\\n\", (unsigned long long)rb_blake2b_64(data, n));\n"
              "  return 0;\n}\n")
    (tmp_path / "digest.c").write_text(source)
    build = subprocess.run([*find_cc(), "-O2", "-std=c99", "digest.c", "-o", "digest"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    got = subprocess.run(["./digest"], cwd=tmp_path, capture_output=True, text=True).stdout.split()
    want = [f"{int.from_bytes(hashlib.blake2b(data[:n], digest_size=8).digest(), 'little'):016x}"
            for n in range(301)]
    assert got == want
