"""Cold build of one model at opt_level 3 with sha256 of every kernel's object code.

Why: a change to the code generator that is meant to make compilation cheaper without changing
the generated code is checked by running this on the old and the new commit and comparing the
two files (they must be equal), and its figure is the process CPU time of the build alone.

    RB_COMPILE_JOBS=1 RB_CACHE_DIR=$(mktemp -d) PYTHONPATH=. \\
        python -m benchmarks.kernel_object_hashes resnet50 /tmp/hashes.json

RB_COMPILE_JOBS=1 keeps LLVM in this process (its CPU time counted); the cache directory must
be empty (a kernel loaded from the cache is not compiled, so its time would be missing).
"""
import hashlib
import json
import sys
import time

import relay_backend as relay
from relay_backend.codegen import llvm, llvm_cache
from relay_backend.frontend import from_onnx
from relay_backend.testing import onnx_models


def build_with_hashes(model: str, image: int = 224):
    """(sorted [(kernel symbol, sha256 of its object code)], CPU seconds of relay.build)."""
    compile_kernels = llvm_cache.compile_kernels
    seen = []

    def recording(funcs, *args, **kwargs):
        funcs = list(funcs)
        results = compile_kernels(funcs, *args, **kwargs)
        seen.extend((str(f.name), hashlib.sha256(r.object_code).hexdigest())
                    for f, r in zip(funcs, results))
        return results
    onnx_model, shape = getattr(onnx_models, model)(image=image)
    mod, params = from_onnx(onnx_model, {"data": shape})
    llvm.compile_kernels = recording
    try:
        start = time.process_time()
        with relay.transform.PassContext(opt_level=3):
            relay.build(mod, target="llvm", params=params)
        cpu = time.process_time() - start
    finally:
        llvm.compile_kernels = compile_kernels
    return sorted(seen), cpu


def main(argv) -> None:
    model, out = argv[0], argv[1]
    hashes, cpu = build_with_hashes(model)
    with open(out, "w") as f:
        json.dump(hashes, f, indent=0)
    print(f"{model}: {len(hashes)} kernels, build CPU {cpu:.2f} s -> {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
