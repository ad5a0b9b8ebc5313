"""Candidate modules the properties import that are also installed beside the gate (docs/design.md §7,
catalog ``modules:``): a configuration error found before any property runs, never a verdict.

Without ``modules:``, the oracle process's import hook serves every top-level module the candidate's
``python_path`` directories provide, except one that the oracle's own ``sys.path`` also finds (a package
installed beside verdict-gate: more-itertools through twine, attrs through Hypothesis). Which of the two
a property means cannot be told, so that import fails in the oracle process, and every property that
makes it would be ``crashed`` and the run ``blocked``: a fault of the catalog reported against the
candidate. :func:`ambiguous` finds those names on the host first, by the hook's own rule, for the
modules the pack's code imports, so the run stops with exit 2 and the fix (``modules: [...]``).
"""

from __future__ import annotations

import ast
import functools
import importlib.machinery
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from verdict_gate.boundary.names import pack_module_names, provided_names
from verdict_gate.core.catalog import Catalog
from verdict_gate.core.classes import walk_statements
from verdict_gate.core.errors import GateError

# Held around every ``ast.parse`` of the gate's process: the base replay runs beside the candidate run, and
# CPython 3.11's ``ast.parse`` in two threads at once can fail (``SystemError: AST constructor recursion depth
# mismatch``: the depth it counts is the interpreter's, not the thread's; python/cpython#106905).
AST_LOCK = threading.Lock()


def imported_by(pack_dir: Path) -> set[str]:
    """Top-level names the pack's own Python files import (``import x.y``, ``from x import y``; relative
    imports and the pack's ``fixtures/`` left out), read with :mod:`ast`, never run. A file that does not
    parse is skipped (pytest reports it). Parsed under :data:`AST_LOCK`, once per pack directory (a pack's
    files do not change while it is in use: it is extracted read-only at a path of its own)."""
    with AST_LOCK:
        return set(_imported_by(pack_dir))


@functools.lru_cache(maxsize=8)
def _imported_by(pack_dir: Path) -> frozenset[str]:
    names: set[str] = set()
    for root, dirs, files in os.walk(pack_dir):
        dirs[:] = sorted(d for d in dirs if not (root == str(pack_dir) and d == "fixtures") and not d.startswith("."))
        for name in files:
            if not name.endswith(".py"):
                continue
            try:
                tree = ast.parse(Path(root, name).read_bytes())
            except (SyntaxError, ValueError, OSError):
                continue
            for node in walk_statements(tree):  # imports are statements: expressions are not walked
                if isinstance(node, ast.Import):
                    names.update(alias.name.partition(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    names.add(node.module.partition(".")[0])
    return frozenset(names)


@functools.lru_cache(maxsize=8)
def mentions(pack_dir: Path, word: bytes) -> bool:
    """Whether any Python file under ``pack_dir`` holds ``word`` anywhere: in an import, a string
    (``importlib.import_module("hypothesis")``), a comment. A superset of the files that import it, read
    without parsing, once per pack directory (a pack is materialised read-only at a path of its own)."""
    for root, dirs, files in os.walk(pack_dir):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                try:
                    if word in Path(root, name).read_bytes():
                        return True
                except OSError:
                    return True  # unread: assume it does
    return False


def installed_paths(repo_like: Sequence[Path]) -> list[str]:
    """The gate's own import path as the oracle process gets it: this interpreter's ``sys.path`` without
    the current directory (the oracle process runs with ``-P``) and without anything under ``repo_like``
    (the trees being gated)."""
    cwd = os.getcwd()
    roots = [os.path.realpath(r) for r in repo_like]
    out = []
    for entry in sys.path:
        if not entry or not os.path.isabs(entry) or os.path.realpath(entry) == os.path.realpath(cwd):
            continue
        real = os.path.realpath(entry)
        if any(real == r or real.startswith(r + os.sep) for r in roots):
            continue
        out.append(entry)
    return out


@functools.lru_cache(maxsize=1)
def preloaded() -> frozenset[str]:
    """Top-level modules an oracle process has loaded before its import hook is in place: those that
    importing pytest and Hypothesis loads, measured in a child of this interpreter started as the oracle
    process is (``-P -s``, no ``PYTHONPATH``). Empty if that child fails (then nothing is left out)."""
    code = "import sys, pytest, hypothesis; print(' '.join(sorted({m.partition('.')[0] for m in sys.modules})))"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")}
    try:
        out = subprocess.run([sys.executable, "-P", "-s", "-c", code], capture_output=True, text=True, env=env,
                             cwd="/", timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(out.split())


def ambiguous(catalog: Catalog, tree: Path, pack_dir: Path, repo: Path | None = None) -> dict[str, str]:
    """Candidate module names the properties import that the gate's environment also provides: name →
    where the installed one is. Empty when the catalog lists ``modules:`` (then exactly those names are
    the candidate's)."""
    if catalog.modules:
        return {}
    root = tree.resolve()
    dirs = [d for d in ((tree / entry).resolve() for entry in catalog.python_path) if d == root or root in d.parents]
    candidates = (provided_names(str(p) for p in dirs) & imported_by(pack_dir)) - pack_module_names(str(pack_dir))
    if not candidates:
        return {}
    path = installed_paths([tree, pack_dir, *([repo] if repo is not None else [])])
    installed = {name for name in candidates if importlib.machinery.PathFinder.find_spec(name, path) is not None}
    # The oracle process's own imports (pytest, Hypothesis and what they load) are never the candidate's: the
    # hook leaves them alone, so they are not ambiguous (a candidate `hypothesis.py` changes nothing there).
    if installed:
        installed -= preloaded()
    found = {}
    for name in sorted(installed):
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None:
            found[name] = spec.origin or (list(spec.submodule_search_locations or [""])[0])
    return found


def check_modules(catalog: Catalog, tree: Path, pack_dir: Path, repo: Path | None = None) -> None:
    """Raise the configuration error for :func:`ambiguous` names, if any.

    Raises:
        GateError: a candidate module the properties import is installed beside the gate too, and the
            catalog has no ``modules:``.
    """
    found = ambiguous(catalog, tree, pack_dir, repo)
    if not found:
        return
    names = list(found)
    where = "; ".join(f"{name} at {origin}" for name, origin in found.items())
    raise GateError(
        "catalog", f"{catalog.source} $.modules",
        f"is not set, and the properties import {', '.join(names)}, which the candidate's python_path "
        f"({', '.join(catalog.python_path)}) provides and the gate's own environment also has ({where}): "
        "which one a property means is ambiguous, so every property importing it would crash",
        f"list the candidate's top-level modules in the catalog, e.g. `modules: [{', '.join(names)}]` "
        "(exactly those names are then served from the candidate), or run the gate from an environment "
        "without that package")


def check_nodes(catalog: Catalog, pack_dir: Path) -> None:
    """Every catalog ``node:`` checked against its oracle file's text (:func:`verdict_gate.core.nodes.missing`),
    before any property runs: a typo is the catalog's error, never a verdict after the whole run.

    Raises:
        GateError: naming each property whose node its file does not define, the closest name, and the fix.
    """
    from verdict_gate.core.nodes import missing

    problems = []
    for index, prop in enumerate(catalog.properties):
        path = pack_dir / prop.oracle
        if not prop.node or path.suffix != ".py":
            continue
        try:
            with AST_LOCK:
                why = missing(ast.parse(path.read_bytes()), prop.node)
        except (SyntaxError, ValueError, OSError):
            continue  # pytest reports a file that does not parse (the oracle's fault, V18)
        if why:
            problems.append(f"$.properties[{index}] {prop.id!r}: node {prop.node!r}: {prop.oracle} {why}")
    if problems:
        raise GateError("catalog", catalog.source, "names tests its oracle files do not define:\n    "
                        + "\n    ".join(problems),
                        "set each property's node: to a test of its oracle file (test_x, or TestClass::test_x), "
                        "or drop node: to run every test in the file")


def blind_spots(catalog: Catalog, pack_dir: Path, tree: Path, only: Sequence[str] | None = None) -> list[str]:
    """The warnings of :func:`verdict_gate.core.blind.blind_spots` for the catalog's properties (or ``only``),
    each ``PROPERTY: PATH:LINE: what it hides and how to write it``. Candidate code is what the catalog's
    ``modules:`` names, else what its ``python_path`` directories of ``tree`` provide."""
    from verdict_gate.core.blind import blind_spots as find

    root = tree.resolve()
    dirs = [d for d in ((tree / entry).resolve() for entry in catalog.python_path) if d == root or root in d.parents]
    candidate = set(catalog.modules) or (provided_names(str(d) for d in dirs) - pack_module_names(str(pack_dir)))
    out: list[str] = []
    for prop in catalog.properties:
        path = pack_dir / prop.oracle
        if (only is not None and prop.id not in only) or path.suffix != ".py":
            continue
        try:
            with AST_LOCK:
                found = find(ast.parse(path.read_bytes()), candidate, prop.node)
        except (SyntaxError, ValueError, OSError):
            continue
        out += [f"{prop.id}: {prop.oracle}:{b.line}: {b.text}" for b in found]
    return out
