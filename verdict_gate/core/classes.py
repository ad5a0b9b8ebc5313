"""Reading Python sources without running them (pure: text in, names out): the module a source file is, and
the statements of a parsed file (imports are statements: expressions are never walked). The gate uses them
for the modules a revision provides (``run.execute.base_modules``) and the modules the pack imports
(``host.modules``)."""

from __future__ import annotations

import ast
from collections.abc import Iterable


def module_name(path: str) -> str | None:
    """``calc/ops.py`` → ``calc.ops``; ``calc/__init__.py`` → ``calc``; ``None`` for anything else (a path
    relative to a ``python_path`` entry, ``/``-separated)."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def statements_in(node: ast.AST) -> Iterable[ast.AST]:
    """The child nodes of ``node`` that are not expressions: the statements of its bodies (``if``, ``for``,
    ``with``, ``try`` …), its ``except`` handlers and ``match`` cases, and what else is no ``ast.expr``. Every
    statement nested in ``node`` is reached through these, never through an expression."""
    return (child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.expr))


def walk_statements(tree: ast.AST) -> Iterable[ast.AST]:
    """Every node of ``tree`` that :func:`statements_in` reaches, ``tree`` first: ``ast.walk`` without descending
    into expressions (an ``import`` or ``class`` statement is never inside one)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(statements_in(node))


def every_node(tree: ast.AST) -> Iterable[ast.AST]:
    """Every node of ``tree``, ``tree`` first, expressions included (what ``ast.walk`` gives)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(ast.iter_child_nodes(node))
