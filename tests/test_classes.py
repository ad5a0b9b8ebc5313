"""The classes a property may name: those the base revision's sources define (core/classes.py, the scan in
run/execute.py over a real git repository)."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from verdict_gate.core.classes import module_name
from verdict_gate.host.git import python_sources
from verdict_gate.host.modules import imported_by
from verdict_gate.run.execute import base_modules

pytestmark = pytest.mark.fast  # in `make check` (pyproject.toml, markers)


@pytest.mark.parametrize(("path", "module"), [
    ("calc/ops.py", "calc.ops"), ("calc/__init__.py", "calc"), ("ops.py", "ops"),
    ("calc/ops.pyi", None), ("calc-x/ops.py", None), ("__init__.py", None), ("README.md", None),
])
def test_module_name(path: str, module: str | None) -> None:
    assert module_name(path) == module


NESTED = b'''
import a
try:
    import b.c
    class InTry: ...
except ImportError:
    from d import e
    class InExcept: ...
else:
    class InElse: ...
finally:
    class InFinally: ...
with open("x") as f, open("y"):
    class InWith: ...
for i in range(2):
    class InFor: ...
else:
    import f
while False:
    async def g():
        async with h:
            class InAsyncWith: ...
        async for j in k:
            import l
match m:
    case [1, *_] if n:
        class InCase: ...
        from o.p import q
@decorator(lambda: None)
class Decorated(Base, metaclass=Meta):
    x = [y for y in range(3)]
'''


def _full_walk(source: bytes) -> tuple[set[str], set[str]]:
    """What ast.walk over the whole tree finds: every class statement's name, and every absolute import."""
    import ast

    names, imports = set(), set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import):
            imports.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            imports.add(node.module.partition(".")[0])
    return names, imports


def _sources() -> list[Path]:
    root = Path(__file__).resolve().parent.parent
    return sorted([*root.glob("verdict_gate/**/*.py"), *root.glob("tests/fidelity/projects/*/**/*.py")])


def test_a_walk_of_the_statements_finds_what_a_walk_of_everything_finds() -> None:
    """Over a file with every kind of nested body and over real sources (this tree, the fidelity projects)."""
    import ast

    from verdict_gate.core.classes import walk_statements

    sources = [NESTED, *(p.read_bytes() for p in _sources())]
    assert len(sources) > 100
    for source in sources:
        names, imports = _full_walk(source)
        got = list(walk_statements(ast.parse(source)))
        assert {n.name for n in got if isinstance(n, ast.ClassDef)} == names
        found = {a.name.partition(".")[0] for n in got if isinstance(n, ast.Import) for a in n.names}
        found |= {n.module.partition(".")[0] for n in got if isinstance(n, ast.ImportFrom) and not n.level and n.module}
        assert found == imports
        assert not any(isinstance(n, ast.expr) for n in got)  # expressions are never walked


def test_nested_statements_are_all_found() -> None:
    names, imports = _full_walk(NESTED)
    assert names == {"InTry", "InExcept", "InElse", "InFinally", "InWith", "InFor", "InAsyncWith", "InCase",
                     "Decorated"}
    assert imports == {"a", "b", "d", "f", "l", "o"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false",
                    "-C", str(repo), *args], check=True, capture_output=True)


def test_the_base_revisions_modules_not_the_candidates(tmp_path: Path) -> None:
    # A module a patch adds (a `yaml.py` that would shadow the pack's own PyYAML) is not one the base provides:
    # the pack is served the candidate's module over the judge's own only for the base revision's (docs/design.md
    # §8.1).
    repo = tmp_path / "repo"
    (repo / "src" / "calc").mkdir(parents=True)
    (repo / "src" / "calc" / "__init__.py").write_text("class Money:\n    pass\n")
    (repo / "src" / "calc" / "ops.py").write_text("def tax_cents(a, r):\n    return a\n")
    (repo / "src" / "calc" / "data.bin").write_bytes(b"\0class Nope: pass\n")
    (repo / "src" / "single.py").write_text("X = 1\n")
    (repo / "tools.py").write_text("class Outside:\n    pass\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    (repo / "src" / "yaml.py").write_text("def safe_load(text):\n    return {}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "candidate")
    assert set(python_sources(repo, "HEAD~1", ["src"])) == {"calc/__init__.py", "calc/ops.py", "single.py"}
    assert base_modules(repo, "HEAD~1", ("src",)) == frozenset({"calc", "single"})
    assert base_modules(repo, "HEAD", ("src", "missing")) == frozenset({"calc", "single", "yaml"})


def _let_others_in(phase: str, info: dict) -> None:
    time.sleep(0)  # releases the GIL: another thread runs in the middle of the collection's caller


def test_the_gate_parses_in_one_thread_at_a_time(tmp_path: Path) -> None:
    """The base replay's thread and the candidate run's both read the pack's imports and the base's classes;
    CPython 3.11 counts ``ast.parse``'s depth per interpreter, so a parse that lets the other thread in (a
    garbage collection while it builds the tree runs Python code: a finalizer, a ``gc.callbacks`` entry) fails
    with ``SystemError`` unless every parse of the gate holds ``AST_LOCK``. Here each collection lets the other
    thread in. Each call reads a pack directory of its own (a pack's imports are read once per directory)."""
    source = "\n".join(f"import mod{i}\ndef f{i}(x):\n    return [(a, b) for a in range({i}) for b in (x, {i}, 'q')]"
                       for i in range(120))
    packs = [tmp_path / f"pack{n}" for n in range(4)]
    for pack in packs:
        pack.mkdir()
        (pack / "test_big.py").write_text(source)
    interval, threshold = sys.getswitchinterval(), gc.get_threshold()
    errors: list[BaseException] = []
    found: list[set[str]] = []

    def parse(mine: list[Path]) -> None:
        for pack in mine:
            try:
                found.append(imported_by(pack))
            except SystemError as exc:
                errors.append(exc)
                return

    sys.setswitchinterval(1e-6)
    gc.set_threshold(50, 1, 1)
    gc.callbacks.append(_let_others_in)
    try:
        threads = [threading.Thread(target=parse, args=(packs[k::2],)) for k in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.callbacks.remove(_let_others_in)
        sys.setswitchinterval(interval)
        gc.set_threshold(*threshold)
    assert errors == [] and len(found) == 4 and all(names == found[0] for names in found)
    assert "mod119" in found[0]
