"""Channel blocks on x86: how many channels one block of a channel-blocked tensor holds
(NCHW{b}c data, a dense weight packed NC{b}n), by default and as a tuning knob.

By default a block is one SIMD register of float32 (8 with AVX2, 16 with AVX-512), or the
largest divisor of the channel count below that. The block is a layout decision, made by
AlterOpLayout before any kernel is chosen, so it is tuned as TVM tunes it: the template of the
blocked op (conv2d_NCHWc.x86, dense_pack_prepacked.x86) has the block among its knobs, its
workload names the *default* blocking (whatever the config picks, one task, one record key),
and AlterOpLayout asks the dispatch context for that workload's config to pick the layout
(`tuned_blocks`); without a record it keeps the default. The weights are then packed at
compile time in the chosen blocks (FoldConstant), and the kernel's compute checks that the
config's blocks are the ones it was given (a build whose layouts were picked without that
config uses the default tile instead).
"""
from ..autotvm.task.config_space import ConfigEntity, FallbackConfigEntity
from ..autotvm.task.dispatcher import query_config
from ..autotvm.task.task import args_to_workload, is_task_argument
from .x86_common import divisor_at_most, lanes, split_knob


def channel_block_limit(dtype: str = "float32") -> int:
    """The largest default channel block: one SIMD register of `dtype`."""
    return lanes(dtype)


def channel_block(channels: int, limit: int) -> int:
    """The largest divisor of `channels` that is at most `limit`."""
    return divisor_at_most(channels, limit, floor=1)


def default_block(channels: int) -> int:
    """The block AlterOpLayout picks without a tuning record."""
    return channel_block(channels, channel_block_limit())


def block_candidates(channels: int) -> list:
    """The blocks a tuner tries for `channels`: half a register, one, two (those dividing the
    channels), and the default."""
    width = channel_block_limit()
    return sorted({b for b in (width // 2, width, 2 * width) if b >= 1 and channels % b == 0} |
                  {default_block(channels)})


def block_knob(cfg, name: str, channels: int, default: int) -> int:
    """Knob `name`: the block of `channels` (block_candidates; `default` for the fallback)."""
    return split_knob(cfg, name, channels, block_candidates(channels), default)


def tuned_blocks(task_name: str, workload_args, target, knobs) -> dict:
    """{knob: block} of the config the current dispatch context holds for task `task_name` on
    `workload_args` (the default blocking's args), or {} when it holds none with those knobs
    (no record, or a record from before the blocks were knobs)."""
    cfg = query_config(target, args_to_workload(workload_args, task_name))
    if getattr(cfg, "is_fallback", True) or not all(k in cfg for k in knobs):
        return {}
    return {k: int(cfg[k].size[-1]) for k in knobs}


def config_blocks(cfg, spec: dict, inputs) -> tuple:
    """(cfg, {knob: block}) for a blocked op's compute: `spec` is {knob: (channels, the block
    the inputs have)}. The config's blocks when the inputs are a task's own (the template then
    re-blocks them) or already have those blocks; otherwise (a build whose layouts were picked
    without this config, or a record from before the blocks were knobs) a fallback config with
    the inputs' blocks and the default tile."""
    stale = isinstance(cfg, ConfigEntity) and not all(k in cfg for k in spec)
    if not stale:
        wanted = {k: block_knob(cfg, k, channels, given) for k, (channels, given) in spec.items()}
        if all(wanted[k] == given for k, (_, given) in spec.items()) or all(is_task_argument(t) for t in inputs):
            return cfg, wanted
    fallback = FallbackConfigEntity()
    return fallback, {k: block_knob(fallback, k, channels, given) for k, (channels, given) in spec.items()}
