"""The boundary's one table and its names (verdict_gate/boundary/protocol.py, docs/design.md §8.1): each side's
registry of handlers answers exactly its operations, the boundary's README names each of them, and every class
of a side reports that side's package as its module, whichever of its modules defines it (the evidence names
them: a failure's ``exc_type``, a type in an assertion's message)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

from verdict_gate.boundary import protocol, proxy, worker
from verdict_gate.boundary.proxy import callbacks
from verdict_gate.boundary.worker import server

pytestmark = pytest.mark.fast

README = Path(protocol.__file__).with_name("README.md")


def test_the_worker_answers_exactly_the_oracle_s_operations() -> None:
    assert set(server.HANDLERS) == set(protocol.OPS)
    assert all(op.name == name for name, op in protocol.OPS.items())


def test_the_oracle_answers_exactly_the_worker_s_callback_verbs() -> None:
    assert set(callbacks.HANDLERS) == set(protocol.VERBS)
    assert all(op.name == name for name, op in protocol.VERBS.items())


def test_the_readme_names_every_operation_and_verb() -> None:
    text = README.read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_]+)`", text))
    assert set(protocol.OPS) - named == set() and set(protocol.VERBS) - named == set()


@pytest.mark.parametrize("package", [proxy, worker], ids=["proxy", "worker"])
def test_every_class_of_a_side_is_named_as_its_package(package: object) -> None:
    found = []
    for info in pkgutil.iter_modules(package.__path__):  # type: ignore[attr-defined]
        module = importlib.import_module(f"{package.__name__}.{info.name}")  # type: ignore[attr-defined]
        found += [cls for _name, cls in inspect.getmembers(module, inspect.isclass)
                  if cls.__dict__.get("__module__") == package.__name__  # type: ignore[attr-defined]
                  or getattr(cls, "__module__", None) == module.__name__]
    assert found
    for cls in found:
        assert cls.__module__ == package.__name__, cls  # type: ignore[attr-defined]
        assert getattr(package, cls.__qualname__) is cls, cls


def test_what_a_property_can_see_of_the_oracle_side_keeps_its_names() -> None:
    """A failed assertion shows the doctest function a property called (its qualified name), and a handle's
    pickle names the function that unpickles it: both reach the evidence (a message is part of a signature),
    so each keeps the name it had when the oracle side was one module."""
    import doctest
    import pickle

    from verdict_gate.boundary.proxy import doctests, handles

    before = (doctest.DocTestFinder.find, doctest.DocTestFinder._find, doctest.testmod, doctest.DocTestParser.parse,
              doctest.testfile, doctest._load_testfile)
    try:
        originals = doctests.install(object())  # type: ignore[arg-type]
        installed = (doctest.DocTestFinder.find, doctest.DocTestFinder._find, doctest.testmod,
                     doctest.DocTestParser.parse, doctest.testfile, doctest._load_testfile)
    finally:
        (doctest.DocTestFinder.find, doctest.DocTestFinder._find, doctest.testmod, doctest.DocTestParser.parse,
         doctest.testfile, doctest._load_testfile) = before
    assert originals == before
    assert [f.__qualname__ for f in installed] == [f"_fence_doctest.<locals>.{name}" for name in (
        "find", "find_in", "in_worker", "parsed", "file_in_worker", "loaded")]
    assert f"{proxy.__name__}\n_unpickle".encode() in pickle.dumps(handles._unpickle, protocol=0)
