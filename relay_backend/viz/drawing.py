"""Writing pictures: the DOT text always, SVG/PNG when Graphviz's `dot` program is installed."""
import os
import shutil
import subprocess

from .. import diagnostics
from ..errors import InputError

FORMATS = ("svg", "png")
_LOG = diagnostics.get_logger("viz")


def can_draw() -> bool:
    """Whether Graphviz's `dot` program is on PATH (needed for SVG/PNG, not for DOT text)."""
    return shutil.which("dot") is not None


def render(dot, path_prefix, formats=("svg",)) -> dict:
    """Write a graph's DOT text, and pictures of it when graphviz's `dot` program is installed.

    Parameters
    ----------
    dot : graphviz.Digraph
        The graph, e.g. from relay_graph or kernel_graph.
    path_prefix : str or os.PathLike
        The path without extension: <path_prefix>.dot, <path_prefix>.svg, ... are written
        (folders are created).
    formats : tuple of str, optional
        The picture formats, among "svg" and "png". Defaults to ("svg",).

    Returns
    -------
    written : dict of str to str
        {"dot": path, format: path, ...} for what was written, plus "skipped" (the reason)
        when pictures were not drawn.
    """
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise InputError(f"viz.render: unknown format(s) {unknown}; choose from {list(FORMATS)}")
    prefix = os.fspath(path_prefix)
    folder = os.path.dirname(prefix)
    if folder:
        os.makedirs(folder, exist_ok=True)
    written = {"dot": prefix + ".dot"}
    with open(written["dot"], "w") as f:
        f.write(dot.source)
    if not formats:
        return written
    if not can_draw():
        written["skipped"] = ("Graphviz's `dot` program is not installed (e.g. apt-get install graphviz); "
                              f"wrote {written['dot']} only")
        _LOG.info("%s", written["skipped"])
        return written
    for fmt in formats:
        out = f"{prefix}.{fmt}"
        proc = subprocess.run(["dot", f"-T{fmt}", written["dot"], "-o", out], capture_output=True, text=True)
        if proc.returncode != 0:
            raise InputError(f"viz.render: dot -T{fmt} failed: {proc.stderr.strip()[:500]}")
        written[fmt] = out
    return written


__all__ = ["render", "can_draw", "FORMATS"]
