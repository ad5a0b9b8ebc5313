"""What a freeze cannot see (docs/rules.md, "What a freeze can and cannot see"): two shapes of a test whose
frozen failure hides more than itself, found in its text (pure: a parsed module in, warnings out; the caller
parses under :data:`verdict_gate.host.modules.AST_LOCK`).

- **An assertion inside a loop** of an example test: the first row that fails ends the test, so a freeze of that
  failure forgives the test's node, and a patch that breaks every row after it shows the same failure. Written
  with ``@pytest.mark.parametrize``, each row is a test node with a failure of its own.
- **An expected value computed from an argument after candidate code had it**: ``out = sort(xs)`` then
  ``assert out == sorted(xs)`` compares the candidate with what the candidate left in ``xs``; a candidate that
  rewrites its argument agrees with itself. Computed before the call (or from a copy), it cannot.

Both are as true of plain pytest; the gate warns (``verdict-gate check``, ``freeze``) before such a freeze is
recorded, naming the line and how to write it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from verdict_gate.core.classes import every_node


@dataclass(frozen=True)
class Blind:
    """One warning: the test (``name`` or ``Class::name``), the line, what it hides and how to write it."""

    test: str
    line: int
    kind: str  # "loop" or "rewrite"
    text: str


def blind_spots(tree: ast.Module, candidate: Iterable[str], node: str | None = None) -> list[Blind]:
    """The warnings for the tests of ``tree`` (only those ``node`` names, when given): at most one of each kind
    per test. ``candidate``: the top-level module names that are the candidate's (whose functions a test calls
    as candidate code)."""
    modules = set(candidate)
    names = _candidate_names(tree, modules)
    found: list[Blind] = []
    for test, func in _tests(tree):
        if node is not None and not _named(test, node):
            continue
        if not _decorated(func, "given"):
            loop = next(_asserts_in_loops(func.body, in_loop=False), None)
            if loop is not None:
                found.append(Blind(test, loop.lineno, "loop", (
                    f"{test} asserts inside a loop (line {loop.lineno}): the first row that fails ends the test, so "
                    "a freeze of that failure hides every row after it, and a patch that breaks them is promoted; "
                    "parametrize the rows (@pytest.mark.parametrize) so each row is a test node that fails on its "
                    "own")))
        rewrite = _rewrite(test, func, names)
        if rewrite is not None:
            found.append(rewrite)
    return found


def _named(test: str, node: str) -> bool:
    parts = [p.partition("[")[0] for p in node.split("::")]
    return test == "::".join(parts) or test.startswith(parts[0] + "::") and len(parts) == 1


def _tests(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"):
            yield stmt.name, stmt
        elif isinstance(stmt, ast.ClassDef) and stmt.name.startswith("Test"):
            for inner in stmt.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and inner.name.startswith("test"):
                    yield f"{stmt.name}::{inner.name}", inner


def _decorated(func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    for dec in func.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if (isinstance(target, ast.Name) and target.id == name) or (
                isinstance(target, ast.Attribute) and target.attr == name):
            return True
    return False


def _asserts_in_loops(body: Iterable[ast.stmt], in_loop: bool) -> Iterator[ast.Assert]:
    """``assert`` statements inside a ``for`` or ``while`` body, in order (not in nested functions or classes)."""
    for stmt in body:
        if isinstance(stmt, ast.Assert) and in_loop:
            yield stmt
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        else:
            looping = in_loop or isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
            for field in ("body", "orelse", "finalbody"):
                yield from _asserts_in_loops(getattr(stmt, field, ()) or (), looping)
            for handler in getattr(stmt, "handlers", ()) or ():
                yield from _asserts_in_loops(handler.body, looping)
            for case in getattr(stmt, "cases", ()) or ():
                yield from _asserts_in_loops(case.body, looping)


def _candidate_names(tree: ast.Module, modules: set[str]) -> set[str]:
    """Names the module binds to candidate code: ``from calc import sort`` → ``sort``, ``import calc`` → ``calc``."""
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module and \
                stmt.module.partition(".")[0] in modules:
            names.update(alias.asname or alias.name for alias in stmt.names if alias.name != "*")
        elif isinstance(stmt, ast.Import):
            names.update((alias.asname or alias.name).partition(".")[0] for alias in stmt.names
                         if alias.name.partition(".")[0] in modules)
    return names


def _calls_candidate(call: ast.Call, names: set[str]) -> bool:
    func: ast.expr = call.func
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in names


def _statements(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a test's body, nested blocks included, in source order (not nested functions)."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                yield from _statements(getattr(stmt, field, ()) or ())
            for handler in getattr(stmt, "handlers", ()) or ():
                yield from _statements(handler.body)


def _computed_from(expr: ast.AST, param: str, after: tuple[int, int]) -> ast.AST | None:
    """Where ``expr`` (an assertion) computes a value from ``param`` at or after position ``after``: ``param``
    handed to a call (``sorted(xs)``, ``len(xs)``), subscripted (``xs[0]``), read through an attribute
    (``xs.copy()``) or iterated in a comprehension."""
    for node in every_node(expr):
        uses: list[ast.AST] = []
        if isinstance(node, ast.Call):
            uses = [*node.args, *(kw.value for kw in node.keywords)]
        elif isinstance(node, (ast.Subscript, ast.Attribute)):
            uses = [node.value]
        elif isinstance(node, ast.comprehension):
            uses = [node.iter]
        for use in uses:
            if isinstance(use, ast.Name) and use.id == param and (use.lineno, use.col_offset) > after:
                return use
    return None


def _rewrite(test: str, func: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str]) -> Blind | None:
    """The warning for the first assertion that computes its expected value from a parameter the candidate
    had before (by a call of candidate code in an earlier statement, or earlier in the same one), else ``None``."""
    params = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]} - {"self", "cls"}
    handed: dict[str, tuple[ast.Call, tuple[int, int]]] = {}
    for stmt in _statements(func.body):
        for node in sorted((n for n in every_node(stmt) if isinstance(n, ast.Call) and _calls_candidate(n, names)),
                           key=lambda n: (n.lineno, n.col_offset)):
            for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                if isinstance(arg, ast.Name) and arg.id in params and arg.id not in handed:
                    handed[arg.id] = (node, (arg.lineno, arg.col_offset))
        if not isinstance(stmt, ast.Assert):
            continue
        for param, (call, at) in handed.items():
            use = _computed_from(stmt.test, param, at)
            if use is not None:
                called = ast.unparse(call.func)
                line = getattr(use, "lineno", 0)
                return Blind(test, line, "rewrite", (
                    f"{test} computes its expected value from {param} (line {line}) after calling candidate code "
                    f"with it ({called}, line {at[0]}), which can change {param}: a candidate that rewrites its "
                    f"argument agrees with itself; compute the expected value before the call (expected = ... "
                    f"from {param}), or pass a copy (e.g. {called}(list({param})))"))
    return None
