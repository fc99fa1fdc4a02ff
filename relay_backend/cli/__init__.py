"""Level 7: the `relay-backend` command line (also `python -m relay_backend`), after tvmc.

    relay-backend compile model.onnx -o model.tar [--executor graph|vm|aot] [--input-shapes ...]
    relay-backend run model.tar [--inputs in.npz | --fill-mode random] [--print-top 5] [--profile]
    relay-backend info model.tar
    relay-backend export-c model.onnx -o dir/
    relay-backend tune model.onnx -o log.json [--trials 64] [--tuner xgb|ga|random|...]
    relay-backend compile model.onnx -o model.tar --tuning-records log.json

commands.py holds the click commands, package.py the model.tar format, values.py the parsing of
shapes and inputs, tuning.py the `tune` driver over relay_backend.autotvm and records.py the
application of a tuning log at compile time. Errors are one line on stderr and a non-zero exit status.
"""
from .commands import cli, main

__all__ = ["cli", "main"]
