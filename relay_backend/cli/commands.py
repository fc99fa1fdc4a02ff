"""The click commands of `relay-backend` (see relay_backend.cli)."""
import click

from ..errors import RelayError
from .values import FILL_MODES

EXECUTORS = ("graph", "vm", "aot")
TUNER_NAMES = ("xgb", "xgb_knob", "xgb_rank", "ga", "random", "gridsearch")     # tuning.TUNERS' keys


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
@click.option("--tuning-records", type=click.Path(exists=True, dir_okay=False), default=None,
              help="a tuning log (from `relay-backend tune`) whose best configs the kernels use")
@click.option("--viz", "viz_dir", type=click.Path(file_okay=False), default=None,
              help="also write pictures of the Relay graph, kernels and memory plan here")
def compile_command(model, output, target, executor, input_shapes, opt_level, tuning_records, viz_dir):
    """Compile MODEL (.onnx) into a package for `run` and `info`."""
    from .compiling import compile_model
    meta = compile_model(model, output, target, executor, input_shapes, opt_level, viz_dir, tuning_records)
    click.echo(f"wrote {output}: {executor} executor, {len(meta['kernels'])} kernels, target {meta['target']}")
    tuning = meta.get("tuning_records")
    if tuning:
        click.echo(f"tuning records: {tuning['tuned']} of {tuning['tunable']} tunable workloads tuned "
                   f"by {tuning['file']}")
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
    tuning = meta.get("tuning_records")
    if isinstance(tuning, dict):
        tuned = tuning.get("tuned", "?")
        click.echo(f"tuning records: {tuning.get('file', '?')} ({tuned} workload{'' if tuned == 1 else 's'} tuned)")
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


@cli.command("tune")
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="the tuning log to write (appended to; an existing one is resumed)")
@click.option("--target", default="llvm", show_default=True, help='"llvm" or "llvm -mcpu=..."')
@click.option("--input-shapes", default="", help="NAME:[d0,d1,...] items separated by spaces")
@click.option("--opt-level", type=click.IntRange(0, 4), default=3, show_default=True)
@click.option("--trials", type=click.IntRange(min=1), default=1000, show_default=True,
              help="configs to measure per task (at most its space)")
@click.option("--tuner", type=click.Choice(sorted(TUNER_NAMES)), default="xgb", show_default=True,
              help="search strategy (xgb* need `pip install relay_backend[tune]`)")
@click.option("--early-stopping", type=click.IntRange(min=1), default=None,
              help="stop a task after this many trials without a better config")
@click.option("--parallel", type=click.IntRange(min=1), default=None,
              help="configs built at once (default: the number of CPUs)")
@click.option("--number", type=click.IntRange(min=1), default=4, show_default=True,
              help="runs averaged into one timing")
@click.option("--repeat", type=click.IntRange(min=1), default=3, show_default=True, help="timings per config")
@click.option("--min-repeat-ms", type=click.IntRange(min=0), default=0, show_default=True,
              help="raise --number until one timing lasts this long")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True,
              help="seconds one build or one run may take")
def tune_command(model, output, target, input_shapes, opt_level, trials, tuner, early_stopping, parallel,
                 number, repeat, min_repeat_ms, timeout):
    """Tune MODEL's (.onnx) kernels: measure configs of each tunable operator on this machine and
    write the measurements to a log for `compile --tuning-records`."""
    from .tuning import tune_model
    summary = tune_model(model, output, target=target, input_shapes=input_shapes, trials=trials, tuner=tuner,
                         early_stopping=early_stopping, opt_level=opt_level, n_parallel=parallel, number=number,
                         repeat=repeat, min_repeat_ms=min_repeat_ms, timeout=timeout, echo=click.echo)
    click.echo(f"wrote {output}: {summary['records']} records ({summary['measured']} measured now, "
               f"{summary['resumed']} resumed) for {summary['tasks']} tasks; apply them with "
               f"`relay-backend compile {model} -o model.tar --tuning-records {output}`")


def main(argv=None):
    """The console entry point (`relay-backend`, `python -m relay_backend`)."""
    cli.main(args=argv, prog_name="relay-backend")


__all__ = ["cli", "main"]
