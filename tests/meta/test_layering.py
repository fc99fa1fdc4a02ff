"""The package's import graph points down only (ARCHITECTURE.md), and files stay small."""
import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[2] / "relay_backend"

LEVELS = {
    "runtime": 0, "config": 0, "errors": 0,
    "ir": 1, "tir": 1,
    "te": 2, "codegen": 2,
    "op": 3,
    "transform": 4, "analysis": 4, "strategy": 4,
    "te_compiler": 5,
    "interpreter": 6, "graph_executor": 6, "vm": 6, "aot": 6,
    "frontend": 7, "contrib": 7, "testing": 7, "build_module": 7, "backend": 7, "prelude": 7,
    "demo": 7, "__init__": 8,
}
# The interpreter is the oracle: it must never reach the compiler.
FORBIDDEN = {"interpreter": {"te_compiler", "te", "tir", "codegen", "strategy"}}
MAX_LINES = 600


def _top(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0].removesuffix(".py")


def _imported_tops(path: pathlib.Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    depth = len(path.relative_to(PKG).parts) - 1  # how many packages deep the file sits
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            up = node.level - 1
            if up < depth:
                continue  # relative import inside the same top-level package
            module = (node.module or "").split(".")[0]
            if module:
                yield module, node.lineno
            else:
                for alias in node.names:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("relay_backend."):
            yield node.module.split(".")[1], node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("relay_backend."):
                    yield alias.name.split(".")[1], node.lineno


def _files():
    return sorted(p for p in PKG.rglob("*.py"))


def test_imports_point_down():
    problems = []
    for path in _files():
        src = _top(path)
        if src not in LEVELS:
            problems.append(f"{path.relative_to(PKG)}: package {src!r} has no level in this test")
            continue
        for dst, line in _imported_tops(path):
            if dst not in LEVELS or dst == src:
                continue
            if LEVELS[dst] > LEVELS[src]:
                problems.append(f"{path.relative_to(PKG)}:{line}: level-{LEVELS[src]} {src} imports "
                                f"level-{LEVELS[dst]} {dst}")
            if dst in FORBIDDEN.get(src, ()):
                problems.append(f"{path.relative_to(PKG)}:{line}: {src} must not import {dst}")
    assert not problems, "upward or forbidden imports:\n" + "\n".join(problems)


def test_files_stay_small():
    big = [(str(p.relative_to(PKG)), n) for p in _files() if (n := len(p.read_text().splitlines())) > MAX_LINES]
    total = sum(len(p.read_text().splitlines()) for p in _files())
    assert not big, f"files over {MAX_LINES} lines (split them): {big}; package total {total} lines"


@pytest.mark.parametrize("name", ["upward"])
def test_checker_catches_an_upward_import(tmp_path, name, monkeypatch):
    # The checker itself must be able to fail: an ir/ file importing op/ is reported.
    fake = PKG / "ir" / "_layering_probe.py"
    fake.write_text("from ..op import registry\n")
    try:
        with pytest.raises(AssertionError, match="level-1 ir imports level-3 op"):
            test_imports_point_down()
    finally:
        fake.unlink()
