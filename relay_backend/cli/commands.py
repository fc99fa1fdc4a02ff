"""The click commands of `relay-backend` (see relay_backend.cli)."""
import sys

import click

from ..errors import RelayError
from .values import FILL_MODES

EXECUTORS = ("graph", "vm", "aot")


class _OneLineErrors(click.Group):
    """A group whose commands report a RelayError (or an OSError) as one line and exit 1."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (RelayError, OSError) as err:
            message = " ".join(str(err).split("\n")[0].split())
            click.echo(f"error: {message}", err=True)
            ctx.exit(1)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="relay_backend", prog_name="relay-backend",
                      version=__import__("relay_backend").config.VERSION)
def cli():
    """Compile ONNX models, run, inspect and export them (relay_backend's tvmc)."""


@cli.command("compile")
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="the package to write (.tar)")
@click.option("--target", default="llvm", show_default=True, help='"llvm", "llvm -mcpu=...", "c" or "cuda"')
@click.option("--executor", type=click.Choice(EXECUTORS), default="graph", show_default=True)
@click.option("--input-shapes", default="", help="NAME:[d0,d1,...] items separated by spaces")
@click.option("--opt-level", type=click.IntRange(0, 4), default=3, show_default=True)
@click.option("--tuning-records", type=click.Path(dir_okay=False), default=None,
              help="tuning log to apply (not available yet)")
@click.option("--viz", "viz_dir", type=click.Path(file_okay=False), default=None,
              help="also write pictures of the Relay graph, kernels and memory plan here")
def compile_command(model, output, target, executor, input_shapes, opt_level, tuning_records, viz_dir):
    """Compile MODEL (.onnx) into a package for `run` and `info`."""
    from .compiling import compile_model
    if tuning_records:
        _tuning_unavailable("--tuning-records")
    meta = compile_model(model, output, target, executor, input_shapes, opt_level, viz_dir)
    click.echo(f"wrote {output}: {executor} executor, {len(meta['kernels'])} kernels, target {meta['target']}")
    for line in meta.get("viz", []):
        click.echo(line)


@cli.command("run")
@click.argument("package", type=click.Path(exists=True, dir_okay=False))
@click.option("--inputs", "inputs_path", type=click.Path(dir_okay=False), default=None,
              help=".npz file of input arrays by name")
@click.option("--fill-mode", type=click.Choice(FILL_MODES), default="random", show_default=True,
              help="values for inputs not in --inputs")
@click.option("--print-top", type=click.IntRange(min=0), default=0, help="print the N largest values of output 0")
@click.option("--outputs", "outputs_path", type=click.Path(dir_okay=False), default=None,
              help="write the outputs to this .npz file")
@click.option("--profile", is_flag=True, help="time every kernel (graph and vm executors)")
@click.option("--profile-json", type=click.Path(dir_okay=False), default=None, help="write the profile as JSON")
@click.option("--trace", type=click.Path(dir_okay=False), default=None, help="write a Chrome trace of the profile")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="timed runs (also the profile's runs)")
def run_command(package, inputs_path, fill_mode, print_top, outputs_path, profile, profile_json, trace, repeat):
    """Run a compiled PACKAGE on given or generated inputs."""
    from .running import run_package
    report = run_package(package, inputs_path, fill_mode, outputs_path, repeat,
                         profile or bool(profile_json or trace))
    outputs = report["outputs"]
    for i, out in enumerate(outputs):
        click.echo(f"output {i}: shape {tuple(out.shape)} {out.dtype}")
    if print_top:
        from .values import top_k
        for rank, (index, value) in enumerate(top_k(outputs[0], print_top), start=1):
            click.echo(f"  top {rank}: index {index} value {value:.6g}")
    click.echo(f"mean {report['mean_ms']:.3f} ms over {repeat} run(s)")
    if report.get("profile") is not None:
        prof = report["profile"]
        if profile:
            click.echo(prof.table())
        if profile_json:
            prof.save_json(profile_json)
            click.echo(f"wrote {profile_json}")
        if trace:
            prof.save_chrome_trace(trace)
            click.echo(f"wrote {trace} (open it in a browser's tracing tool: chrome://tracing or Perfetto)")
    if outputs_path:
        click.echo(f"wrote {outputs_path}")


@cli.command("info")
@click.argument("package", type=click.Path(exists=True, dir_okay=False))
def info_command(package):
    """Describe a PACKAGE: inputs, outputs, kernels and memory plan (loads no native code)."""
    from .package import read_metadata
    meta = read_metadata(package)
    click.echo(f"{package}: {meta['executor']} executor, target {meta['target']}, "
               f"relay_backend {meta.get('relay_backend_version', '?')}")
    for title, key in (("inputs", "inputs"), ("outputs", "outputs")):
        click.echo(f"{title}:")
        for spec in meta[key]:
            shape = ", ".join("?" if d is None else str(d) for d in spec["shape"])
            click.echo(f"  {spec['name']}: Tensor[({shape}), {spec['dtype']}]")
    click.echo(f"kernels ({len(meta['kernels'])}):")
    for kernel in meta["kernels"]:
        click.echo(f"  {kernel['name']}: {', '.join(kernel['ops'])}" + (f"  ({kernel['macs']} MACs)" if kernel.get("macs") else ""))
    click.echo("memory plan:")
    for line in meta["memory_plan"].splitlines():
        click.echo(f"  {line}")


@cli.command("export-c")
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False), help="the folder to write")
@click.option("--input-shapes", default="", help="NAME:[d0,d1,...] items separated by spaces")
@click.option("--opt-level", type=click.IntRange(0, 4), default=3, show_default=True)
def export_c_command(model, output, input_shapes, opt_level):
    """Export MODEL (.onnx) as a standalone C project (AOT): model.c, model.h, main.c, Makefile."""
    from .compiling import export_c
    folder = export_c(model, output, input_shapes, opt_level)
    click.echo(f"wrote {folder}: build it with `make -C {folder}` (no Python needed)")


@cli.command("tune", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("model", required=False)
@click.option("-o", "--output", default=None)
@click.option("--trials", type=int, default=None)
def tune_command(model, output, trials):
    """Tune MODEL's kernels (not available yet: exits with an error saying so)."""
    del model, output, trials
    _tuning_unavailable("tune")


def _tuning_unavailable(what: str):
    click.echo(f"error: {what}: tuning is not available yet in relay_backend (kernels use their "
               f"default schedules); compile without it", err=True)
    sys.exit(2)


def main(argv=None):
    """The console entry point (`relay-backend`, `python -m relay_backend`)."""
    cli.main(args=argv, prog_name="relay-backend")


__all__ = ["cli", "main"]
