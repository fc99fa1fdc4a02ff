"""The README's examples run as written, its first screen gives exactly the two set-up-and-run
commands, and no document links outside the repository."""
import pathlib
import re
import runpy

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _python_blocks(text: str) -> list:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("index", range(2))
def test_readme_examples_run(index, tmp_path, monkeypatch):
    """The build + GraphModule example and the interpreter example (the ones needing no files)."""
    block = _python_blocks((ROOT / "README.md").read_text())[index]
    script = tmp_path / "example.py"
    script.write_text(block)
    monkeypatch.chdir(tmp_path)                     # export_library("model.so") writes here
    runpy.run_path(str(script), run_name="__main__")


def test_first_example_is_build_and_graph_module():
    first = _python_blocks((ROOT / "README.md").read_text())[0]
    assert "relay.build(" in first and "GraphModule(" in first


def test_first_screen_has_exactly_the_two_commands():
    screen = (ROOT / "README.md").read_text().splitlines()[:24]
    commands = [line.strip() for line in screen if line.startswith("    ")]
    assert commands == ['pip install -e ".[test]" && python -m relay_backend.demo',
                        'pip install -e ".[test]" && python -m pytest -q']


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_no_link_leaves_the_repository(doc):
    text = doc.read_text()
    assert "../shared" not in text and "shared/ARCHITECTURE" not in text
    links = re.findall(r"\]\(([^)]+)\)", text) + re.findall(r"https?://\S+", text)
    outside = [link for link in links if link.startswith(("http", "/", "..")) or "://" in link]
    assert not outside, f"{doc.name} links outside the repository: {outside}"


def test_docs_folder_has_the_promised_pages():
    names = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert {"architecture.md", "adding_an_operator.md", "executors.md", "debugging.md",
            "performance.md"} <= names
