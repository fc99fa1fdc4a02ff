"""Winograd against the channel-blocked direct kernel on ResNet-50's 3x3 stride-1 convolutions,
one core, interleaved.

    python -m benchmarks.winograd_layers [--rounds 20] [--tiles 2,4] [--workload resnet50|densenet121]
                                         [--as-avx2]

For each layer (ResNet-50: 64 channels at 56x56, 128 at 28x28, 256 at 14x14, 512 at 7x7;
DenseNet-121: 128 -> 32 channels at 56x56, 28x28, 14x14 and 7x7; padding 1,
batch 1) three one-kernel graphs are built and called alone with OMP_NUM_THREADS=1:
conv2d_NCHWc.x86 on NCHW{b}c data with a pre-packed kernel, b the host's default channel block
(what AlterOpLayout makes today: 8 with AVX2, 16 with AVX-512), and
conv2d_winograd.x86 F(m x m, 3x3) for each tile size m on NCHW data with a pre-transformed
kernel, and conv2d_winograd_nchwc.x86 on the NCHW{b}c data with that kernel packed along its
output channels (what AlterOpLayout makes on x86). Each round calls every candidate once (interleaved); thread CPU time (time.thread_time,
which other processes do not inflate), minimum and median over the rounds. The figures decide
strategy/x86_alter_layout.py's WINOGRAD_LAYERS.

--as-avx2, on an AVX-512 host: every kernel is built as for an AVX2 host (the host CPU reported
as znver3 with the AVX-512 features removed: 8-lane blocks, 16 vector registers, AVX2 code),
a stand-in for measuring the AVX2 table on a machine without one. On a Zen 4 the 256-bit FMAs
issue two per cycle, the same float32 peak as its one 512-bit FMA per cycle.
"""
import argparse
import os
import time

import numpy as np

# (input channels, output channels, size) of each workload's 3x3 stride-1 convolutions
WORKLOADS = {"resnet50": ((64, 64, 56), (128, 128, 28), (256, 256, 14), (512, 512, 7)),
             "densenet121": ((128, 32, 56), (128, 32, 28), (128, 32, 14), (128, 32, 7))}


def _module(expr, inputs: dict):
    import relay_backend as relay
    params = [relay.var(name, shape=v.shape, dtype=str(v.dtype)) for name, v in inputs.items()]
    mod = relay.IRModule.from_expr(relay.Function(params, expr(*params)))
    gmod = relay.build(mod, target="llvm")["default"](relay.cpu())
    gmod.set_input(**inputs)
    return gmod


def candidates(channels: int, size: int, tiles, out_channels: int = None) -> dict:
    """name -> (graph module, flops of the direct convolution)."""
    import relay_backend as relay
    from relay_backend.op.nn.conv_nchwc import pack_oihw
    from relay_backend.op.nn.layout_view import pack_nchw
    from relay_backend.op.nn.winograd import ConvWinogradWeightTransformAttrs, WEIGHT_TRANSFORM, pack_transformed
    from relay_backend.strategy.x86_blocks import default_block
    out_channels = out_channels or channels
    b, ob = default_block(channels), default_block(out_channels)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, channels, size, size)).astype("float32")
    w = rng.standard_normal((out_channels, channels, 3, 3)).astype("float32")
    out = {"NCHWc direct": _module(
        lambda xv, kv: relay.nn.contrib_conv2d_nchwc(xv, kv, padding=(1, 1), data_layout=f"NCHW{b}c",
                                                     kernel_layout=f"OIHW{b}i{ob}o", out_layout=f"NCHW{ob}c"),
        {"x": pack_nchw(x, b), "k": pack_oihw(w, b, ob)})}
    for m in tiles:
        weight = WEIGHT_TRANSFORM.ref(w, ConvWinogradWeightTransformAttrs(m))
        out[f"winograd F({m}x{m})"] = _module(
            lambda xv, uv, m=m: relay.nn.contrib_conv2d_winograd_without_weight_transform(xv, uv, m, padding=(1, 1)),
            {"x": x, "u": weight})
        out[f"NCHWc winograd F({m}x{m})"] = _module(
            lambda xv, uv, m=m: relay.nn.contrib_conv2d_winograd_without_weight_transform(
                xv, uv, m, padding=(1, 1), data_layout=f"NCHW{b}c", out_layout=f"NCHW{ob}c"),
            {"x": pack_nchw(x, b), "u": pack_transformed(weight, ob)})
    return out


def as_avx2_host() -> None:
    """Make this process build as on an AVX2 host (see the module docstring): the CPU name and
    features every later code generation and strategy choice reads."""
    from relay_backend.codegen import llvm_target
    name, features = llvm_target.host_cpu()
    kept = ",".join(f if not f.startswith("+avx512") else "-" + f[1:] for f in features.split(","))
    llvm_target.host_cpu = lambda: ("znver3", kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--tiles", default="2,4")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="resnet50")
    parser.add_argument("--as-avx2", action="store_true", help="build as on an AVX2 host")
    args = parser.parse_args()
    if args.as_avx2:
        as_avx2_host()
    os.environ["OMP_NUM_THREADS"] = "1"
    tiles = [int(t) for t in args.tiles.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f}; thread CPU ms, min / median of {args.rounds} interleaved rounds")
    for channels, out_channels, size in WORKLOADS[args.workload]:
        mods = candidates(channels, size, tiles, out_channels)
        flops = 2 * channels * out_channels * 9 * size * size
        times = {name: [] for name in mods}
        for gmod in mods.values():
            gmod.run()
        for _ in range(args.rounds):
            for name, gmod in mods.items():
                start = time.thread_time()
                gmod.run()
                times[name].append(time.thread_time() - start)
        for name, samples in times.items():
            best, median = min(samples), float(np.median(samples))
            print(f"{channels:4}->{out_channels:<4}ch {size:3}x{size:<3} {name:24} {1e3 * best:8.3f} / {1e3 * median:8.3f} ms "
                  f"{flops / best / 1e9:6.1f} GFLOP/s (direct-equivalent)")


if __name__ == "__main__":
    main()
