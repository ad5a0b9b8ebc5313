"""A class statement of the oracle's whose base is a candidate class (docs/design.md §8.1, "Subclasses"): it
is built in the worker from the statement's source, with the names the statement uses sent along (its
instances must live beside their base class); the oracle holds a handle to the class, and its assertions
stay in the oracle process.

A spoke of the oracle side: :func:`build` is handed the client of the base class; this module imports only
the protocol and the errors.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

from ..protocol import SUBCLASS

if TYPE_CHECKING:
    from .client import Client


# A test file's class statements and lines, by (path, source): a file with many subclasses of candidate
# classes (cachetools' tests: 23 in 14 files) is parsed once, not once per statement (4-12 ms each).
_CLASS_STATEMENTS: dict[tuple[str, str], tuple[list[Any], list[str]]] = {}
MAX_CLASS_FILES = 64
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # a line, ended as the parser ends one


def _class_statements(filename: str, source: str) -> tuple[list[Any], list[str]]:
    """The ``ast.ClassDef`` nodes of ``source`` and its lines as the parser counts them (only ``\\r\\n``, ``\\r``
    and ``\\n`` end a line, as ``ast.get_source_segment`` splits them), parsed once per distinct text.

    Raises:
        SyntaxError, ValueError: ``source`` does not parse.
    """
    import ast

    key = (filename, source)
    found = _CLASS_STATEMENTS.get(key)
    if found is None:
        found = ([n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)], _LINE.findall(source))
        if len(_CLASS_STATEMENTS) >= MAX_CLASS_FILES:
            _CLASS_STATEMENTS.pop(next(iter(_CLASS_STATEMENTS)))
        _CLASS_STATEMENTS[key] = found
    return found


def _segment(lines: list[str], node: Any) -> str:
    """``ast.get_source_segment(source, node, padded=True)`` from the source's lines, already split: the
    node's text, its first line padded to its column with spaces (tabs and form feeds kept). Offsets are
    UTF-8 byte offsets, as the parser gives them."""
    first, last, start, end = node.lineno - 1, node.end_lineno - 1, node.col_offset, node.end_col_offset
    if first == last:
        return lines[first].encode()[start:end].decode()
    head = lines[first].encode()
    pad = "".join(c if c in "\f\t" else " " for c in head[:start].decode())
    return pad + head[start:].decode() + "".join(lines[first + 1:last]) + lines[last].encode()[:end].decode()


def build(client: Client, name: str, remote: Sequence[Any], namespace: dict[str, Any], frame: FrameType) -> Any:
    """An oracle class statement whose base is a candidate class (``remote``, the handles among its bases), run
    by ``frame``: the class is built in the worker from the statement's source (its instances live beside their
    base class), and the oracle holds a handle to it (docs/design.md §8.1, "Subclasses")."""
    import ast
    import textwrap

    filename, line = frame.f_code.co_filename, frame.f_lineno
    qualname = str(namespace.get("__qualname__", name))
    module = str(namespace.get("__module__", frame.f_globals.get("__name__", "")))
    try:
        with open(filename, encoding="utf-8") as fh:
            source = fh.read()
        classes, lines = _class_statements(filename, source)
        node = max((n for n in classes if n.name == name and n.lineno <= line), key=lambda n: n.lineno)
        # Blank lines first, so the worker's tracebacks name the lines of the oracle's file.
        text = "\n" * (node.lineno - 1) + textwrap.dedent(_segment(lines, node))
        used = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - {name})
    except (OSError, SyntaxError, ValueError) as exc:
        raise client.limit(f"class {qualname} derives from the candidate's "
                           f"{remote[0]._vg_type()}, and its source could not be read to build it in the candidate "
                           f"worker ({type(exc).__name__}: {exc}); set `isolation: none` for this property") from None
    # The names the statement uses, as its frame sees them: a class written inside a test function reads
    # that function's locals (a fixture, a closure variable) before the module's globals.
    scope = {**frame.f_globals, **frame.f_locals}
    globals_ = client.ModuleGlobals(scope, used)
    ref = client.reference(globals_)["o"]["id"]
    # The names the class statement uses go with it (a class body reads them with LOAD_NAME, which a lazy
    # globals mapping cannot answer); a method may still read a later one through the reference.
    values = [[n, client.encode(scope[n])] for n in used if n in scope and not n.startswith("__")
              and not (isinstance(scope[n], types.ModuleType) and not isinstance(scope[n], client.ProxyModule)
                       and scope[n].__name__.partition(".")[0] not in sys.stdlib_module_names)]
    cls = client.request({"op": SUBCLASS, "name": name, "qualname": qualname, "module": module, "src": text,
                          "file": filename, "names": used, "globals": ref, "values": values})
    if isinstance(cls, client.Handle):
        client.named.add((module, qualname))  # the property's own class, built in the worker
        t = cls._vg_desc.get("t") or []
        if t and (client.may_name is None or (str(t[0][0]), str(t[0][1])) == (module, qualname)):
            client.named.add((str(t[0][0]), str(t[0][1])))
    client.keep.append(globals_)  # the worker's class reads its globals for as long as the process runs
    return cls
