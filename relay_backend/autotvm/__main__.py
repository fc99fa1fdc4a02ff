"""`python -m relay_backend.autotvm --mode read|pick --i LOG`: read or distill a tuning log
(record.py's command line)."""
from .record import _main

_main()
