"""The classes a property may name: those the base revision's sources define (core/classes.py, the scan in
run/execute.py over a real git repository)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from verdict_gate.core.classes import defined_classes, module_name
from verdict_gate.host.git import python_sources
from verdict_gate.run.execute import base_classes

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)


@pytest.mark.parametrize(("path", "module"), [
    ("calc/ops.py", "calc.ops"), ("calc/__init__.py", "calc"), ("ops.py", "ops"),
    ("calc/ops.pyi", None), ("calc-x/ops.py", None), ("__init__.py", None), ("README.md", None),
])
def test_module_name(path: str, module: str | None) -> None:
    assert module_name(path) == module


def test_defined_classes_spell_qualnames_as_python_does() -> None:
    source = b'''
class Money:
    class Unit:
        pass
def tax_cents(a, r):
    class Local:
        pass
    return a
if True:
    class Guarded:
        def method(self):
            class Inner: ...
'''
    assert defined_classes("calc.ops", source) == {
        "calc.ops:Money", "calc.ops:Money.Unit", "calc.ops:tax_cents.<locals>.Local", "calc.ops:Guarded",
        "calc.ops:Guarded.method.<locals>.Inner"}
    assert defined_classes("calc.ops", b"def broken(:\n") == set()  # does not parse: defines none


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false",
                    "-C", str(repo), *args], check=True, capture_output=True)


def test_the_base_revisions_classes_not_the_candidates(tmp_path: Path) -> None:
    # A function of the base that a patch turns into a class is not a class a property may name.
    repo = tmp_path / "repo"
    (repo / "src" / "calc").mkdir(parents=True)
    (repo / "src" / "calc" / "__init__.py").write_text("class Money:\n    pass\n")
    (repo / "src" / "calc" / "ops.py").write_text("def tax_cents(a, r):\n    return a\n")
    (repo / "src" / "calc" / "data.bin").write_bytes(b"\0class Nope: pass\n")
    (repo / "tools.py").write_text("class Outside:\n    pass\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    (repo / "src" / "calc" / "ops.py").write_text("class tax_cents:\n    pass\n")
    _git(repo, "commit", "-qam", "candidate")
    assert set(python_sources(repo, "HEAD~1", ["src"])) == {"calc/__init__.py", "calc/ops.py"}
    assert base_classes(repo, "HEAD~1", ("src",)) == frozenset({"calc:Money"})
    assert base_classes(repo, "HEAD", ("src", "missing")) == frozenset({"calc:Money", "calc.ops:tax_cents"})
