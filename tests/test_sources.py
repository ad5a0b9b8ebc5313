"""Candidate modules are imported from their source (verdict_gate/boundary/sources.py, docs/design.md §8):
a table of what a candidate directory holds against what ``import`` finds there."""

from __future__ import annotations

import importlib.machinery as machinery
import sys
from pathlib import Path

import pytest

from verdict_gate.boundary import sources

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)

EXT = machinery.EXTENSION_SUFFIXES[0]  # e.g. .cpython-311-x86_64-linux-gnu.so (never loaded here)

CASES = [
    # id, files in the directory, the module imported, what import finds (a file) or the refusal
    ("source", ["calc.py"], "calc", "calc.py"),
    ("package-bytecode-beside-source", ["calc.py", "calc/__init__.pyc"], "calc", "calc.py"),
    ("bytecode-beside-source", ["calc.py", "calc.pyc"], "calc", "calc.py"),
    ("extension-beside-source", ["calc.py", f"calc{EXT}"], "calc", "calc.py"),
    ("package-extension-beside-source", ["calc.py", f"calc/__init__{EXT}"], "calc", "refused: compiled code"),
    ("bytecode-alone", ["helper.pyc"], "helper", "refused: bytecode without its source"),
    ("package-bytecode-alone", ["helper/__init__.pyc"], "helper", "refused: bytecode without its source"),
    ("extension-alone", [f"fast{EXT}"], "fast", f"fast{EXT}"),
    ("package-source-and-extension", ["pkg/__init__.py", f"pkg/__init__{EXT}"], "pkg", "pkg/__init__.py"),
    ("nothing", [], "calc", None),
]


@pytest.mark.parametrize(("files", "name", "found"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_candidate_directory_imports_source_first_and_never_bytecode(tmp_path: Path, files: list[str],
                                                                       name: str, found: str | None) -> None:
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"not loaded: the finder only looks")
    finder = sources.SourceFirst(str(tmp_path))
    if found is not None and found.startswith("refused: "):
        with pytest.raises(ImportError, match=found.removeprefix("refused: ")):
            finder.find_spec(name)
        return
    spec = finder.find_spec(name)
    assert (spec.origin if spec is not None else None) == (str(tmp_path / found) if found else None)


def test_the_hook_takes_only_candidate_directories(tmp_path: Path) -> None:
    inside, outside = tmp_path / "src", tmp_path / "elsewhere"
    (inside / "sub").mkdir(parents=True)
    outside.mkdir()
    hooks = list(sys.path_hooks)
    try:
        hook = sources.source_only([str(inside)])
        assert sys.path_hooks[0] is hook
        assert isinstance(hook(str(inside / "sub")), sources.SourceFirst)  # a package's directory too
        with pytest.raises(ImportError):
            hook(str(outside))  # the next hook (the default finder) takes it
    finally:
        sys.path_hooks[:] = hooks
        sys.path_importer_cache.clear()
