"""Doctests of candidate code never run in the oracle's process (docs/design.md §8.1): a docstring or a text
file of the candidate's is the candidate's text, and a doctest runs it as code.

- ``doctest.testmod(module)`` of a candidate module runs in the worker, as plain pytest runs it in one
  process (``name``, ``verbose``, ``report``, ``optionflags`` and ``exclude_empty`` go with it; what it
  prints is the worker's output, forwarded) and returns its ``TestResults``; so does
  ``doctest.testfile(path)`` of a file outside the pack (the candidate's README).
- Every other doctest of candidate text is refused as a boundary limit: ``DocTestFinder.find`` and ``_find``
  on a candidate module, class, function or object (``run_docstring_examples``, a ``testmod`` with the
  oracle's ``globs`` or ``raise_on_error``, pytest's doctest finder, a module's ``__test__``);
  ``DocTestParser.parse`` of a text whose examples are those of a text the worker sent (a docstring read
  as a string); a doctest file outside the pack read any other way (``DocFileSuite``, ``testfile`` with
  the oracle's ``globs``).

A spoke of the oracle side: :func:`install` is handed the client; this module imports only the protocol.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol import DOCTEST

if TYPE_CHECKING:
    from .client import Client

FIX = ("run it with doctest.testmod(module) or doctest.testfile(path) and no globs (run in the candidate "
       "worker), in the project's own test suite, or set isolation: none for this property")


def install(client: Client) -> Any:
    """Put the fence on this process's ``doctest`` for ``client`` (see the module docstring).

    Returns the originals, to undo it: ``find``, ``_find``, ``testmod``, ``parse``, ``testfile``,
    ``_load_testfile``."""
    import doctest

    original, testmod, testfile = doctest.DocTestFinder.find, doctest.testmod, doctest.testfile
    walk = doctest.DocTestFinder._find  # type: ignore[attr-defined]
    parse, load = doctest.DocTestParser.parse, doctest._load_testfile  # type: ignore[attr-defined]
    doctest.DocTestFinder.find = _named(_finder(client, original))  # type: ignore[method-assign]
    doctest.DocTestFinder._find = _named(_walker(client, walk))  # type: ignore[attr-defined]
    doctest.DocTestParser.parse = _named(_parser(client, parse))  # type: ignore[method-assign]
    doctest._load_testfile = _named(_loader(client, load))  # type: ignore[attr-defined]
    doctest.testmod = _named(_testmod(client, testmod))
    doctest.testfile = _named(_testfile(client, testfile))
    return original, walk, testmod, parse, testfile, load


def _named(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` under the qualified name it had as a local of one function (``_fence_doctest``): a property's
    failed assertion shows the function it called (``<function _fence_doctest.<locals>.in_worker at …>``),
    and that message is part of the failure's signature, which moving code must not change."""
    fn.__qualname__ = f"_fence_doctest.<locals>.{fn.__name__}"
    return fn


def _refuse(client: Client, obj: Any, name: Any) -> None:
    if isinstance(obj, (client.ProxyModule, client.Handle)) or client.is_candidate_class(obj):
        raise client.limit(f"a doctest of the candidate's {name or 'object'!s:.200}: its docstring is the "
                           f"candidate's text, which a doctest runs as code in the oracle's process; {FIX}")


def _finder(client: Client, original: Callable[..., Any]) -> Callable[..., Any]:
    def find(self: Any, obj: Any, name: Any = None, *args: Any, **kwargs: Any) -> Any:
        _refuse(client, obj, name)
        return original(self, obj, name, *args, **kwargs)

    return find


def _walker(client: Client, walk: Callable[..., Any]) -> Callable[..., Any]:
    def find_in(self: Any, tests: Any, obj: Any, name: Any, *args: Any, **kwargs: Any) -> Any:
        _refuse(client, obj, name)  # a module's members and its __test__ entries
        return walk(self, tests, obj, name, *args, **kwargs)

    return find_in


def _parser(client: Client, parse: Callable[..., Any]) -> Callable[..., Any]:
    import doctest

    seen: dict[str, frozenset[str]] = {}  # a text the worker sent → the sources of its examples

    def parsed(self: Any, string: Any, name: Any = "<string>") -> Any:
        found = parse(self, string, name)
        mine = {part.source for part in found if isinstance(part, doctest.Example)}
        texts = client.texts
        if mine and texts.doc_texts_full:
            raise client.limit(f"a doctest of {name!s:.200} in a property whose candidate code sent more than "
                               f"{texts.max_doc_texts} texts with doctest examples: which are the candidate's "
                               f"cannot be told; {FIX}")
        if mine and texts.doc_texts:
            for text in texts.doc_texts:
                if text not in seen:
                    try:
                        seen[text] = frozenset(p.source for p in parse(self, text, "<candidate>")
                                               if isinstance(p, doctest.Example))
                    except ValueError:  # not a doctest's layout: none of its lines is an example doctest runs
                        seen[text] = frozenset()
                if mine & seen[text]:
                    raise client.limit(f"a doctest of {name!s:.200} runs examples of a text the candidate's code "
                                       "sent (a docstring read as a string): they would run as code in the "
                                       f"oracle's process; {FIX}")
        return found

    return parsed


def _in_the_worker(client: Client, request: dict[str, Any]) -> Any:
    import doctest

    got = client.request(request)
    if not (type(got) is list and len(got) == 2 and all(type(n) is int and n >= 0 for n in got)):
        raise client.crash("the worker sent a malformed doctest result")
    return doctest.TestResults(*got)


def _outside_pack(client: Client, path: str) -> bool:
    real = os.path.realpath(path)
    return not any(real.startswith(root) for root in client.oracle_roots)


def _loader(client: Client, load: Callable[..., Any]) -> Callable[..., Any]:
    def loaded(filename: Any, package: Any, module_relative: Any, encoding: Any) -> Any:
        if module_relative and package is None:  # resolved from the caller's module, as doctest resolves it
            package = sys.modules.get(sys._getframe(2).f_globals.get("__name__", ""))
        text, path = load(filename, package, module_relative, encoding)
        if _outside_pack(client, path):
            raise client.limit(f"a doctest of the file {path!s:.300}, outside the pack: its text is the "
                               f"candidate's (its tree), which a doctest runs as code in the oracle's process; {FIX}")
        return text, path

    return loaded


def _testfile(client: Client, testfile: Callable[..., Any]) -> Callable[..., Any]:
    import doctest

    def file_in_worker(filename: Any, module_relative: Any = True, name: Any = None, package: Any = None,
                       globs: Any = None, verbose: Any = None, report: Any = True, optionflags: Any = 0,
                       extraglobs: Any = None, raise_on_error: Any = False, parser: Any = None,
                       encoding: Any = None) -> Any:
        if module_relative and package is None:
            package = sys.modules.get(sys._getframe(1).f_globals.get("__name__", ""))
        path = filename
        if module_relative:
            path = doctest._module_relative_path(package, filename)  # type: ignore[attr-defined]
        options = {"name": name, "verbose": verbose, "report": report, "optionflags": optionflags,
                   "encoding": encoding}
        plain = (type(filename) is str and type(name) in (str, type(None)) and type(verbose) in (bool, type(None))
                 and type(report) is bool and type(optionflags) is int and type(encoding) in (str, type(None)))
        if _outside_pack(client, path) and globs is None and extraglobs is None and not raise_on_error \
                and parser is None and plain:
            return _in_the_worker(client, {"op": DOCTEST, "path": os.path.abspath(path), "opts": options})
        return testfile(filename, module_relative, name, package, globs, verbose, report, optionflags, extraglobs,
                        raise_on_error, doctest.DocTestParser() if parser is None else parser, encoding)

    return file_in_worker


def _testmod(client: Client, testmod: Callable[..., Any]) -> Callable[..., Any]:
    def in_worker(m: Any = None, name: Any = None, globs: Any = None, verbose: Any = None, report: Any = True,
                  optionflags: Any = 0, extraglobs: Any = None, raise_on_error: Any = False,
                  exclude_empty: Any = False) -> Any:
        options = {"name": name, "verbose": verbose, "report": report, "optionflags": optionflags,
                   "exclude_empty": exclude_empty}
        plain = (type(name) in (str, type(None)) and type(verbose) in (bool, type(None)) and type(report) is bool
                 and type(optionflags) is int and type(exclude_empty) is bool)
        if not isinstance(m, client.ProxyModule) or globs is not None or extraglobs is not None or raise_on_error \
                or not plain:
            return testmod(m, name, globs, verbose, report, optionflags, extraglobs, raise_on_error, exclude_empty)
        return _in_the_worker(client, {"op": DOCTEST, "mod": m.__name__, "opts": options})

    return in_worker
