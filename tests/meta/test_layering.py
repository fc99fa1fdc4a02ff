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
    # autotvm spans two levels: its spaces, tasks, records and dispatch contexts are read by
    # schedules and selection (4); measurement, tuners and task extraction compile and run
    # code (7); its package facades load the level-7 parts lazily (8).
    "autotvm": 4, "autotvm/__init__": 8, "autotvm/task/__init__": 8,
    "autotvm/task/relay_integration": 7, "autotvm/measure": 7, "autotvm/tuner": 7,
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
    ("runtime", "target"), ("runtime", "diagnostics"), ("diagnostics", "config"), ("diagnostics", "errors"),
    ("progress", "config"),
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
    ("strategy", "autotvm"),                  # tunable schedules declare their config spaces
    ("autotvm/tuner", "autotvm/measure"),     # a tuner measures through the builder and runner
    ("autotvm/measure", "testing"),           # candidates are checked with testing.tolerances
    ("autotvm/__init__", "autotvm/task/__init__"), ("__init__", "autotvm/__init__"),
    ("session", "frontend"), ("session", "build_module"),
    ("cli", "build_module"), ("cli", "frontend"), ("cli", "viz"), ("cli", "session"),
    ("cli", "autotvm/measure"), ("cli", "autotvm/tuner"),       # `relay-backend tune` drives a tuner
    ("cli", "autotvm/task/relay_integration"),                  # ... over the model's extracted tasks
}
MAX_LINES = 600


def unit_of(parts) -> str:
    """The layering unit of a module path inside the package (parts without ".py"): the longest
    prefix named in LEVELS ("autotvm/tuner/tuner" -> "autotvm/tuner"), else its top package."""
    parts = list(parts)
    for n in range(len(parts), 0, -1):
        key = "/".join(parts[:n])
        if key in LEVELS:
            return key
    return parts[0] if parts else ""


def _module_parts(path: pathlib.Path, pkg: pathlib.Path) -> list:
    parts = list(path.relative_to(pkg).with_suffix("").parts)
    return parts


def _imported_modules(path: pathlib.Path, pkg: pathlib.Path = PKG):
    """(module path parts inside the package, line) of every import of the package in `path`;
    `from . import x` names module x when x is a file or package, else the module it is in."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = _module_parts(path, pkg)
    package = here[:-1] if here[-1] != "__init__" else here[:-1]
    for node in ast.walk(tree):
        module = None
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            base = package[:len(package) - (node.level - 1)] if node.level > 1 else list(package)
            module = base + [p for p in (node.module or "").split(".") if p]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("relay_backend."):
            module = node.module.split(".")[1:]
        if module is not None:
            for alias in node.names:
                sub = module + [alias.name]
                is_module = (pkg.joinpath(*sub).with_suffix(".py").is_file() or pkg.joinpath(*sub).is_dir())
                yield (sub if is_module else module), node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("relay_backend."):
                    yield alias.name.split(".")[1:], node.lineno


def _as_unit_module(parts, pkg: pathlib.Path) -> list:
    """A package import means its __init__ (a facade with its own level, where LEVELS says so)."""
    if parts and pkg.joinpath(*parts).is_dir():
        return list(parts) + ["__init__"]
    return list(parts)


def _files():
    return sorted(p for p in PKG.rglob("*.py"))


def layering_problems(pkg: pathlib.Path = PKG) -> list:
    """Every import in `pkg` that breaks the rules, one line each."""
    problems = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg)
        src = unit_of(_module_parts(path, pkg))
        if src not in LEVELS:
            problems.append(f"{rel}: package {src!r} has no level in this test")
            continue
        for parts, line in _imported_modules(path, pkg):
            dst = unit_of(_as_unit_module(parts, pkg))
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
    counts = {str(p.relative_to(PKG)): code_lines(p.read_text()) for p in _files()}
    big = [(name, n) for name, n in counts.items() if n > MAX_LINES]
    total = sum(counts.values())
    assert not big, f"files over {MAX_LINES} lines (split them): {big}; package total {total} lines"


@pytest.mark.parametrize("path, source, message", [
    ("ir/probe.py", "from ..op import registry\n", "level-1 ir imports level-3 op"),
    ("vm/probe.py", "from ..interpreter import Interpreter\n", "vm must not import interpreter"),
    ("vm/probe.py", "from ..aot import factory\n", "vm imports aot of the same level"),
    ("aot/probe.py", "import relay_backend.graph_executor.runtime\n", "aot imports graph_executor"),
    ("autotvm/task/probe.py", "from ..measure import LocalRunner\n",
     "level-4 autotvm imports level-7 autotvm/measure"),
    ("strategy/probe.py", "from ..autotvm.tuner import XGBTuner\n", "level-4 strategy imports level-7 autotvm/tuner"),
])
def test_checker_catches_a_bad_import(tmp_path, path, source, message):
    # The checker itself must be able to fail; it reads a scratch package, never the source tree.
    pkg = tmp_path / "relay_backend"
    target = pkg / path
    target.parent.mkdir(parents=True)
    target.write_text(source)
    problems = layering_problems(pkg)
    assert any(message in p for p in problems), problems
