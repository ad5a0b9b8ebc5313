"""The layout keeps its promises (docs/design.md §10): an AST check of what each layer imports.

- ``verdict_gate/core/`` is pure: it imports nothing from ``verdict_gate`` outside ``core/`` and
  never reads the environment, the clock or the network (nor starts processes).
- ``verdict_gate/report/`` renders evidence: it never imports the pipeline (``run/``), the pack
  loader (``pack/``) or the GitHub edge.
- ``verdict_gate/run/results.py`` and ``verdict_gate_plugin.py`` are standalone: the plugin loads
  the first by path and neither imports the ``verdict_gate`` package. Other standalone modules in
  ``run/`` (the candidate worker, the codec) are loaded by path too and are not checked here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "verdict_gate"

# Modules an import of which means the environment, the clock, the network or a process.
FORBIDDEN_MODULES = ("time", "socket", "subprocess", "requests", "urllib.request", "http.client", "urllib3",
                     "ssl", "asyncio", "multiprocessing")
# Attribute reads that mean the same, on any object: os.environ, os.getenv, datetime.now() …
FORBIDDEN_ATTRIBUTES = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv",
                        "now", "today", "utcnow", "time_ns", "monotonic", "perf_counter"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in ``path``, relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = _module_name(path).rsplit(".", 0 if path.name == "__init__.py" else 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def _core_problems(path: Path) -> list[str]:
    rel = path.relative_to(ROOT)
    problems = []
    for line, name in _imports(path):
        if (name == "verdict_gate" or name.startswith("verdict_gate.")) and not (
                name.startswith("verdict_gate.core.") or name == "verdict_gate.core"):
            problems.append(f"{rel}:{line} imports {name}, outside verdict_gate/core/")
        if any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES):
            problems.append(f"{rel}:{line} imports {name} (the environment, clock, network or a process)")
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRIBUTES:
            problems.append(f"{rel}:{node.lineno} reads .{node.attr} (the environment or the clock)")
        elif isinstance(node, ast.ImportFrom) and any(a.name in FORBIDDEN_ATTRIBUTES for a in node.names):
            problems.append(f"{rel}:{node.lineno} imports {', '.join(a.name for a in node.names)} "
                            "(the environment or the clock)")
    return problems


CORE = sorted((PACKAGE / "core").glob("*.py"))


def test_core_exists() -> None:
    names = {p.stem for p in CORE}
    assert {"verdict", "signature", "digest", "diffsplit", "catalog", "ledger", "promotion", "score"} <= names


@pytest.mark.parametrize("path", CORE, ids=[p.name for p in CORE])
def test_core_is_pure(path: Path) -> None:
    problems = _core_problems(path)
    assert not problems, "the core must stay pure:\n" + "\n".join(problems)


def test_the_check_can_fail(tmp_path: Path) -> None:
    """The checker itself flags each kind of breach (so a green run means something)."""
    bad = PACKAGE / "core" / "_layout_probe.py"
    cases = ["from verdict_gate.run import git\n", "import os\nos.environ.get('X')\n",
             "import datetime as dt\ndt.date.today()\n", "import requests\n", "from time import monotonic\n",
             "from ..report import text\n", "import subprocess\n"]
    try:
        for source in cases:
            bad.write_text(source, encoding="utf-8")
            assert _core_problems(bad), source
    finally:
        bad.unlink(missing_ok=True)


REPORT = sorted((PACKAGE / "report").glob("*.py"))


@pytest.mark.parametrize("path", REPORT, ids=[p.name for p in REPORT])
def test_report_never_imports_the_edges(path: Path) -> None:
    edges = ("verdict_gate.run", "verdict_gate.pack", "verdict_gate.github", "verdict_gate.commands",
             "verdict_gate.cli", "verdict_gate.demo")
    bad = [f"{line}: {name}" for line, name in _imports(path) if any(name == e or name.startswith(e + ".")
                                                                     for e in edges)]
    assert bad == []


@pytest.mark.parametrize("path", [PACKAGE / "run" / "results.py", ROOT / "verdict_gate_plugin.py"],
                         ids=["results.py", "verdict_gate_plugin.py"])
def test_standalone_modules_never_import_the_package(path: Path) -> None:
    bad = [f"{line}: {name}" for line, name in _imports(path) if name.split(".")[0] == "verdict_gate"]
    assert bad == []


def test_cli_only_parses_and_dispatches() -> None:
    """Every command is a module of verdict_gate/commands/ with add_parser and run."""
    from verdict_gate.commands import COMMANDS

    names = {m.__name__.rsplit(".", 1)[1] for m in COMMANDS}
    assert names >= {"run", "replay", "freeze", "digest", "manifest", "pack", "demo"}
    assert all(callable(m.add_parser) and callable(m.run) for m in COMMANDS)
    allowed = ("verdict_gate", "verdict_gate.commands", "verdict_gate.core.errors", "verdict_gate.run.pipeline")
    cli_imports = {name for _, name in _imports(PACKAGE / "cli.py") if name.split(".")[0] == "verdict_gate"}
    assert all(any(n == a or n.startswith(a + ".") for a in allowed) for n in cli_imports), cli_imports
