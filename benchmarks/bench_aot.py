"""AOT executor vs graph executor latency on the same models, same schedules (target="llvm").

Both run the kernels the TECompiler selects for "llvm"; the graph executor compiles them with
LLVM and calls them from Python one by one, the AOT executor compiles them as C with cc and
runs the whole model in one native call over its static workspace. Rows: one per model and
executor, ratio = median / the graph executor's median for that model. The debug interpreter
checks both outputs first (a benchmark of wrong results is worthless).
"""
import numpy as np

import relay_backend as relay
from relay_backend.testing import mlp, resnet, seed_cnn

from .common import interleaved_medians


def _models():
    return [
        ("MLP 784-512-512-10", mlp.get_workload(batch_size=1, num_hidden=(512, 512)), (1, 1, 28, 28)),
        ("seed CNN", seed_cnn.get_workload(), (1, 3, 32, 32)),
        ("ResNet block 64ch 56x56", resnet.get_block_workload(), (1, 64, 56, 56)),
    ]


def run(repeats: int = 15) -> list:
    rows = []
    for name, (mod, params), shape in _models():
        data = np.random.default_rng(0).standard_normal(shape).astype("float32")
        gmod = relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))
        factory = relay.build(mod, target="llvm", params=params, executor="aot")
        amod = relay.aot.AotModule(factory["default"](relay.cpu(0)))
        gmod.set_input("data", data)
        amod.set_input("data", data)
        gmod.run()
        amod.run()
        ref = relay.create_executor("debug", mod=mod, params=params).evaluate()(data).numpy()
        for label, out in (("graph", gmod.get_output(0).numpy()), ("aot", amod.get_output(0).numpy())):
            np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3, err_msg=f"{name} on {label}")
        timing = interleaved_medians({"graph": gmod.run, "aot": amod.run}, repeats=repeats * 4)
        base = timing["graph"][0]
        rows.append((f"{name}, graph executor", "ms", base * 1e3, 1.0, timing["graph"][1]))
        rows.append((f"{name}, AOT (ws {factory.workspace_size // 1024} KiB)", "ms",
                     timing["aot"][0] * 1e3, timing["aot"][0] / base, timing["aot"][1]))
    return rows


if __name__ == "__main__":
    for row in run(5):
        print(f"{row[0]:48} {row[2]:8.3f} {row[1]} {row[3]:6.2f} {row[4]:5.0%}")
