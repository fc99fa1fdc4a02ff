"""diagnostics: messages for developers through the `logging` module, under the `relay_backend` logger.

Every message the library prints for a developer goes through a child logger of
`relay_backend` (`relay_backend.passes`, `.kernels`, `.tir`, `.codegen`, `.runtime`, ...), so an
application controls it like any other library's logging:

    logging.getLogger("relay_backend").setLevel(logging.DEBUG)

RB_DEBUG levels map onto it: RB_DEBUG=1 pass timings, 2 one line per kernel run, 3 each kernel's
TIR, 4 the LLVM IR / C source. When RB_DEBUG is 1 or more, the `relay_backend` logger is set to
DEBUG and prints to stderr (one handler, attached once); with RB_DEBUG unset nothing is printed
unless the application configures logging itself. The expensive dumps (TIR, LLVM IR) are made
only when `wants(level)` says RB_DEBUG asks for them.

RB_DUMP_DIR=dir writes the same stages to files instead of the terminal (`dump`): the module
after every pass (Relay text), each kernel's TIR as it is lowered, and the LLVM IR, C or CUDA
source of every compiled module, numbered in the order they were made (after the files already
in the folder: a second run's follow the first's).
"""
import contextlib
import logging
import os
import re
import sys
import tempfile
import threading

from . import config

ROOT_NAME = "relay_backend"
ROOT = logging.getLogger(ROOT_NAME)
ROOT.addHandler(logging.NullHandler())        # a library never prints through logging.lastResort


class _CurrentStderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time of the record (pytest and notebooks swap it)."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value):
        pass


_HANDLER = _CurrentStderrHandler()
_HANDLER.setFormatter(logging.Formatter("[relay_backend] %(message)s"))


def get_logger(topic: str) -> logging.Logger:
    """The logger `relay_backend.<topic>` (topic e.g. "passes", "kernels", "tir", "codegen")."""
    sync_with_config()
    return logging.getLogger(f"{ROOT_NAME}.{topic}")


def sync_with_config() -> None:
    """Attach the stderr handler (and set DEBUG) when RB_DEBUG >= 1; detach it when RB_DEBUG is 0
    again (tests call config.reload())."""
    debug = config.get().debug
    attached = _HANDLER in ROOT.handlers
    if debug >= 1 and not attached:
        ROOT.addHandler(_HANDLER)
        ROOT.setLevel(logging.DEBUG)
    elif debug < 1 and attached:
        ROOT.removeHandler(_HANDLER)
        ROOT.setLevel(logging.NOTSET)


def wants(level: int) -> bool:
    """True when RB_DEBUG asks for diagnostics of `level` (1 passes ... 4 generated code)."""
    sync_with_config()
    return config.get().debug >= level


_FD_LOCK = threading.Lock()


@contextlib.contextmanager
def native_remarks_to(logger: logging.Logger, markers=("remark: ", "warning: <unknown>")):
    """Send what native code (LLVM) writes to file descriptor 2 meanwhile to `logger` at DEBUG.

    LLVM prints optimisation remarks such as "loop not vectorized" straight to the process's
    stderr, below Python; they would reach the user's terminal on every build. Lines starting
    with one of `markers` become DEBUG records (shown with RB_DEBUG >= 1); any other line written
    in that window (another thread's output) is passed on to stderr unchanged."""
    with _FD_LOCK:
        try:
            saved = os.dup(2)
        except OSError:                      # no fd 2 (a detached process): nothing to capture
            yield
            return
        with tempfile.TemporaryFile() as capture:
            try:
                sys.stderr.flush()
            except (AttributeError, OSError, ValueError):
                pass
            os.dup2(capture.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                capture.seek(0)
                text = capture.read().decode("utf-8", "replace")
        passed_on = []
        for line in text.splitlines():
            if line.startswith(markers):
                logger.debug("%s", line)
            elif line:
                passed_on.append(line)
        if passed_on:
            os.write(2, ("\n".join(passed_on) + "\n").encode())


_UNSAFE_IN_NAMES = re.compile(r"[^A-Za-z0-9_.-]+")
_NUMBERED = re.compile(r"^(\d+)_")
_DUMP_NEXT = {}                 # folder -> the next number this process gives a file there
_DUMP_LOCK = threading.Lock()


def dumping() -> bool:
    """True when RB_DUMP_DIR asks for each stage as a file (callers skip the printing otherwise)."""
    return bool(config.get().dump_dir)


def _first_free_number(folder: str) -> int:
    """One past the highest number a file in `folder` starts with (0 for a new folder)."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return 0
    return max((int(m.group(1)) + 1 for m in map(_NUMBERED.match, names) if m), default=0)


def _create_numbered(folder: str, rest: str):
    """(path, file open for writing) of a new `<number>_<rest>` in `folder`. Numbers continue
    after the files already there, so a second run's dumps follow the first's instead of
    overwriting them; the file is created exclusively, so a process writing the same folder at
    the same time makes this one take the next number rather than overwrite its file."""
    with _DUMP_LOCK:
        os.makedirs(folder, exist_ok=True)
        if folder not in _DUMP_NEXT:
            _DUMP_NEXT[folder] = _first_free_number(folder)
        while True:
            number = _DUMP_NEXT[folder]
            _DUMP_NEXT[folder] = number + 1
            path = os.path.join(folder, f"{number:05d}_{rest}")
            try:
                return path, open(path, "x", encoding="utf-8")
            except FileExistsError:
                continue


def dump(stage: str, name, text, suffix: str = "txt") -> None:
    """Write `text` (a str, or a callable making it) to RB_DUMP_DIR as
    `<number>_<stage>_<name>.<suffix>` when RB_DUMP_DIR is set; nothing otherwise. `stage` says
    what it is ("relay", "tir", "llvm", "c", "cuda"); the number orders the files as made, after
    any already in the folder (_create_numbered). `name` may list the kernels of one module: the
    file is named after the first and how many more."""
    folder = config.get().dump_dir
    if not folder:
        return
    from .errors import InputError
    if not isinstance(name, str):
        first, *rest = name
        name = f"{first}_and_{len(rest)}_more" if rest else first
    body = text() if callable(text) else text
    safe = _UNSAFE_IN_NAMES.sub("_", name)[:120] or "unnamed"
    rest = f"{stage}_{safe}.{suffix}"
    try:
        path, out = _create_numbered(folder, rest)
        with out:
            out.write(body)
    except OSError as err:
        raise InputError(f"RB_DUMP_DIR={folder!r}: cannot write <number>_{rest} ({err}); "
                         f"set RB_DUMP_DIR to a writable folder, or unset it") from None


__all__ = ["get_logger", "wants", "dumping", "dump", "sync_with_config", "native_remarks_to", "ROOT", "ROOT_NAME"]
