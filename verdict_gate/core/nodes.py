"""Whether a catalog ``node:`` names a test its oracle file defines, read from the file's text (pure: text in,
an answer out; the caller parses under :data:`verdict_gate.host.modules.AST_LOCK`).

A ``node:`` typo is the catalog's error (exit 2), found before any property runs (docs/design.md §2, step 1):
the first part of the node (``test_x``, ``TestClass`` of ``TestClass::test_x``, ``test_x`` of
``test_x[case-1]``) must be bound at the top of the module, and a method of a class with no base class must be
bound in its body. Anything a module could bind at run time (a star import, ``globals()``, ``exec``,
``setattr``, a module ``__getattr__``) or inherit from elsewhere leaves the answer to pytest's collection,
which the runner watches too (an uncollected node stops the run at once).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable

from verdict_gate.core.classes import every_node, statements_in

DYNAMIC = frozenset({"globals", "exec", "setattr", "__getattr__", "vars", "locals"})


def missing(tree: ast.Module, node: str) -> str | None:
    """``None`` when ``node`` may be a test of the module ``tree`` (or the text cannot tell); else why it is not,
    with the closest name the module binds (``defines no test_ad (did you mean test_add?)``)."""
    parts = node.split("::")
    first = parts[0].partition("[")[0]
    if not first.isidentifier() or _dynamic(tree):
        return None  # a doctest's dotted name, or a module that binds names at run time
    top = _bound(tree.body)
    if first not in top:
        return f"defines no {first}{_closest(first, top)}"
    if len(parts) < 2:
        return None
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == first), None)
    method = parts[1].partition("[")[0]
    if cls is None or cls.bases or cls.keywords or len(parts) > 2 or not method.isidentifier():
        return None  # inherited methods, nested classes: pytest decides
    inside = _bound(cls.body)
    if method not in inside:
        return f"defines no {method} in class {first}{_closest(method, inside)}"
    return None


def _bound(body: Iterable[ast.stmt]) -> set[str]:
    """The names a block binds at its own level (functions, classes, assignments, imports, loops, ``with``), and
    in the branches of its ``if``/``try``/``with`` statements."""
    names: set[str] = set()
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).partition(".")[0] for alias in stmt.names)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.With,
                               ast.AsyncWith)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else (
                [item.optional_vars for item in stmt.items if item.optional_vars is not None]
                if isinstance(stmt, (ast.With, ast.AsyncWith)) else [stmt.target])
            names.update(n.id for t in targets for n in every_node(t) if isinstance(n, ast.Name))
        if isinstance(stmt, (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)) or \
                type(stmt).__name__ == "TryStar":
            names |= _bound(s for s in statements_in(stmt) if isinstance(s, ast.stmt))
            for handler in getattr(stmt, "handlers", ()):
                names |= _bound(handler.body)
    return names


def _dynamic(tree: ast.Module) -> bool:
    """Whether the module can bind a name the text does not show: a star import, or a name such as ``globals``."""
    for node in every_node(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return True
        if isinstance(node, ast.Name) and node.id in DYNAMIC:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in DYNAMIC:
            return True
    return False


def _closest(name: str, names: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""
