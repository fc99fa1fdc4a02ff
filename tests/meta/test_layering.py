"""The package's import graph points down only (ARCHITECTURE.md), and files stay small.

The size budget counts code, not documentation: docstring lines are left out (as tinygrad's
line budget does), so a numpydoc Parameters section never argues for splitting a file.

Imports between packages of the same level are allowed only where SAME_LEVEL lists them, and the
compiled executors never import the interpreter (the oracle they are checked against)."""
import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[2] / "relay_backend"

LEVELS = {
    "runtime": 0, "config": 0, "errors": 0, "target": 0, "diagnostics": 0, "progress": 0,
    "cache": 0, "docstrings": 0,
    "ir": 1, "tir": 1,
    "te": 2, "codegen": 2,
    "op": 3,
    "transform": 4, "analysis": 4, "strategy": 4,
    "te_compiler": 5,
    "executor": 6, "interpreter": 6, "graph_executor": 6, "vm": 6, "aot": 6,
    "frontend": 7, "contrib": 7, "testing": 7, "build_module": 7, "backend": 7, "prelude": 7, "loops": 7,
    "demo": 7, "qnn": 7, "_ffi": 7, "viz": 7, "session": 7, "cli": 7, "parser": 7, "__main__": 8, "__init__": 8,
}
# The interpreter is the oracle: it must never reach the compiler, and no compiled executor may
# lean on it (the debug executor's compare-with-interpreter is the one listed exception).
COMPILED = ("graph_executor", "vm", "aot")
FORBIDDEN = {"interpreter": {"te_compiler", "te", "tir", "codegen", "strategy"},
             **{name: {"interpreter"} for name in COMPILED}}
# file (relative to the package) -> the forbidden packages it may import all the same
FORBIDDEN_EXCEPTIONS = {"graph_executor/debug_executor.py": {"interpreter"}}
# The same-level imports that are allowed: (importer, imported). Anything else between two
# packages of one level is a layering error.
SAME_LEVEL = {
    ("runtime", "errors"), ("runtime", "config"), ("config", "errors"), ("target", "errors"),
    ("runtime", "target"), ("runtime", "diagnostics"), ("diagnostics", "config"), ("progress", "config"),
    ("cache", "config"), ("cache", "errors"), ("cache", "docstrings"), ("docstrings", "errors"),
    ("runtime", "docstrings"),
    ("ir", "tir"),                            # symbolic dims of tensor types are tir size vars
    ("graph_executor", "interpreter"),        # debug_executor only (FORBIDDEN_EXCEPTIONS)
    ("demo", "backend"),
    ("interpreter", "executor"), ("graph_executor", "executor"), ("vm", "executor"),
    ("aot", "executor"),
    ("transform", "analysis"), ("analysis", "transform"), ("strategy", "transform"),
    ("build_module", "backend"), ("frontend", "build_module"), ("testing", "frontend"),
    ("testing", "build_module"), ("demo", "build_module"), ("demo", "testing"),
    ("demo", "frontend"), ("backend", "te_compiler"), ("prelude", "build_module"),
    ("session", "frontend"), ("session", "build_module"),
    ("cli", "build_module"), ("cli", "frontend"), ("cli", "viz"), ("cli", "session"),
}
MAX_LINES = 600


def _top(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0].removesuffix(".py")


def _imported_tops(path: pathlib.Path, pkg: pathlib.Path = PKG):
    tree = ast.parse(path.read_text(), filename=str(path))
    depth = len(path.relative_to(pkg).parts) - 1  # how many packages deep the file sits
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


def layering_problems(pkg: pathlib.Path = PKG) -> list:
    """Every import in `pkg` that breaks the rules, one line each."""
    problems = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg)
        src = rel.parts[0].removesuffix(".py")
        if src not in LEVELS:
            problems.append(f"{rel}: package {src!r} has no level in this test")
            continue
        for dst, line in _imported_tops(path, pkg):
            if dst not in LEVELS or dst == src:
                continue
            if LEVELS[dst] > LEVELS[src]:
                problems.append(f"{rel}:{line}: level-{LEVELS[src]} {src} imports level-{LEVELS[dst]} {dst}")
            elif LEVELS[dst] == LEVELS[src] and (src, dst) not in SAME_LEVEL:
                problems.append(f"{rel}:{line}: level-{LEVELS[src]} {src} imports {dst} of the same "
                                f"level, which SAME_LEVEL does not allow")
            if dst in FORBIDDEN.get(src, ()) and dst not in FORBIDDEN_EXCEPTIONS.get(rel.as_posix(), ()):
                problems.append(f"{rel}:{line}: {src} must not import {dst}")
    return problems


def test_imports_point_down():
    problems = layering_problems()
    assert not problems, "upward or forbidden imports:\n" + "\n".join(problems)


def _docstring_lines(tree: ast.AST) -> set:
    """The line numbers taken by the docstrings of a module and of its classes and functions."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            value = getattr(first, "value", None)
            if isinstance(first, ast.Expr) and isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def code_lines(source: str) -> int:
    """The number of lines of `source` that are not docstring lines."""
    return len(source.splitlines()) - len(_docstring_lines(ast.parse(source)))


def test_code_lines_leave_out_docstrings():
    source = 'def f(x):\n    """Doc.\n\n    More.\n    """\n    return x\n'
    assert code_lines(source) == 2


def test_files_stay_small():
    big = [(str(p.relative_to(PKG)), n) for p in _files() if (n := code_lines(p.read_text())) > MAX_LINES]
    total = sum(code_lines(p.read_text()) for p in _files())
    assert not big, f"files over {MAX_LINES} lines (split them): {big}; package total {total} lines"


@pytest.mark.parametrize("path, source, message", [
    ("ir/probe.py", "from ..op import registry\n", "level-1 ir imports level-3 op"),
    ("vm/probe.py", "from ..interpreter import Interpreter\n", "vm must not import interpreter"),
    ("vm/probe.py", "from ..aot import factory\n", "vm imports aot of the same level"),
    ("aot/probe.py", "import relay_backend.graph_executor.runtime\n", "aot imports graph_executor"),
])
def test_checker_catches_a_bad_import(tmp_path, path, source, message):
    # The checker itself must be able to fail; it reads a scratch package, never the source tree.
    pkg = tmp_path / "relay_backend"
    target = pkg / path
    target.parent.mkdir(parents=True)
    target.write_text(source)
    problems = layering_problems(pkg)
    assert any(message in p for p in problems), problems
