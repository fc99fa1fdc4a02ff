"""Level 7: the `relay-backend` command line (also `python -m relay_backend`), after tvmc.

    relay-backend compile model.onnx -o model.tar [--executor graph|vm|aot] [--input-shapes ...]
    relay-backend run model.tar [--inputs in.npz | --fill-mode random] [--print-top 5] [--profile]
    relay-backend info model.tar
    relay-backend export-c model.onnx -o dir/
    relay-backend tune ...        (tuning is not available yet: says so and exits non-zero)

commands.py holds the click commands, package.py the model.tar format, values.py the parsing of
shapes and inputs. Errors are one line on stderr and a non-zero exit status.
"""
from .commands import cli, main

__all__ = ["cli", "main"]
