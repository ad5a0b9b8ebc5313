"""The classes a revision's Python sources define, by module and qualified name (pure: text in, names out).

The oracle lets a candidate class's operators answer against its own values only for a class the property
*named* (docs/design.md §8.1). What a name is comes from the candidate's process, so a function the
property imports, turned into a class by a patch, would count as named, and its objects' ``__eq__`` would
answer every comparison (found by a red-team run). A name counts only if the base revision, which the pack
was reviewed against, defines a class of that module and qualified name in its sources.
"""

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


def defined_classes(module: str, source: bytes | str) -> set[str]:
    """``module:qualname`` of every ``class`` statement in ``source``, as ``__qualname__`` spells it
    (``Outer.Inner``, ``make.<locals>.Local``). A source that does not parse defines none."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    found: set[str] = set()

    def walk(nodes: Iterable[ast.AST], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                found.add(f"{module}:{prefix}{node.name}")
                walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                walk(node.body, f"{prefix}{node.name}.<locals>.")
            else:  # a class statement is a statement: expressions (the bulk of a tree) hold none
                walk(statements_in(node), prefix)

    walk(tree.body, "")
    return found


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
