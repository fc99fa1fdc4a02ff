"""The C compiler: found once, used by the C backend, AOT builds and library linking.

A C compiler is needed only for the "c" target, the AOT executor, exporting libraries and the
exported standalone projects; everything else runs on LLVM in-process. `find_cc()` returns the
command as a tuple (argv prefix): $CC (it may hold words, e.g. "zig cc"), else cc, gcc or clang
on PATH, else the `zig cc` of the optional `ziglang` wheel (`pip install relay_backend[zig]`),
else a CompileError saying how to install one.
"""
import functools
import importlib.util
import os
import shlex
import shutil

from ..errors import CompileError

SYSTEM_COMPILERS = ("cc", "gcc", "clang")
INSTALL_HINT = ("install a C compiler (e.g. `apt-get install gcc`, `xcode-select --install`) or "
                "the ziglang wheel, which brings `zig cc`: pip install \"relay_backend[zig]\"")


@functools.lru_cache(maxsize=None)
def find_cc() -> tuple:
    """The C compiler command (a tuple to put before the arguments); see the module docstring."""
    from_env = os.environ.get("CC", "").strip()
    if from_env:
        words = shlex.split(from_env)
        resolved = shutil.which(words[0])
        if resolved is None:
            raise CompileError(f"$CC={from_env!r} is not on PATH; unset CC or {INSTALL_HINT}")
        return (resolved, *words[1:])
    for name in SYSTEM_COMPILERS:
        path = shutil.which(name)
        if path:
            return (path,)
    zig = zig_cc()
    if zig:
        return zig
    raise CompileError(f"no C compiler found ($CC, {', '.join(SYSTEM_COMPILERS)} on PATH, or the "
                       f"ziglang wheel); AOT builds, the 'c' target and exported projects need one: "
                       f"{INSTALL_HINT}")


def zig_cc() -> tuple:
    """("<ziglang>/zig", "cc") when the ziglang wheel is installed with its binary, else ()."""
    spec = importlib.util.find_spec("ziglang")
    if spec is None or not spec.origin:
        return ()
    binary = os.path.join(os.path.dirname(spec.origin), "zig.exe" if os.name == "nt" else "zig")
    if not os.access(binary, os.X_OK):
        return ()
    return (binary, "cc")


def command_text(cc: tuple) -> str:
    """The compiler command as one shell word list (for messages and Makefiles)."""
    return " ".join(shlex.quote(word) for word in cc)


# Libraries every C toolchain (zig's bundled libc included) finds by -l<name>.
LIBC_LIBRARIES = ("m", "c")


def host_library_args(libraries) -> list:
    """Linker arguments for host libraries the kernels call into: "-lm" for libc's parts, and
    for any other (GNU OpenMP's "gomp") the absolute path of the copy this process has loaded.

    Why: a toolchain other than gcc does not search gcc's private folder, and a runtime-only
    install ships libgomp.so.1 without the libgomp.so development link, so `zig cc ... -lgomp`
    fails where the process itself runs OpenMP fine. Linking the loaded file also gives the
    model the same OpenMP runtime as the process (one thread team). Falls back to "-l<name>"
    when the library is not found."""
    args = []
    for name in dict.fromkeys(libraries):
        path = None if name in LIBC_LIBRARIES else loaded_library_path(name)
        args.append(path or f"-l{name}")
    return args


def loaded_library_path(name: str):
    """The file of shared library `name` ("gomp") as this process has mapped it, or None (not
    loaded, or no /proc/self/maps on this system). It loads nothing: GNU OpenMP is loaded, after
    its environment is prepared, by whoever compiled the parallel kernels being linked."""
    prefix = f"lib{name}.so"                     # libgomp.so.1.0.0 for "gomp"
    try:
        with open("/proc/self/maps") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if fields and fields[-1].startswith("/") and os.path.basename(fields[-1]).startswith(prefix):
            return fields[-1]
    return None


__all__ = ["find_cc", "zig_cc", "command_text", "host_library_args", "INSTALL_HINT"]
