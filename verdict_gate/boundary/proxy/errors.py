"""The oracle side's exceptions, and how a class of this package is named (docs/design.md §8.1).

Every class of the package reports the package itself as its module (:func:`named`), as when the oracle side
was one module, ``proxy.py``: a class's module and name reach the evidence (a failure's ``exc_type``,
``_verdict_gate_boundary.proxy.WorkerCrashed``, and ``type(obj)`` in an assertion's message), which a
failure's signature digests (docs/design.md §5). So moving code between the modules of this package never
changes a signature, and the package re-exports each class under that name (pickle finds it there).
"""

from __future__ import annotations

import contextlib
import sys
from typing import TypeVar

PACKAGE = __name__.rpartition(".")[0]  # ``_verdict_gate_boundary.proxy`` in the oracle process

T = TypeVar("T", bound=type)


def named(cls: T) -> T:
    """``cls``, its module the package's (see the module docstring)."""
    cls.__module__ = PACKAGE
    return cls


@named
class WorkerCrashed(Exception):
    """The candidate worker died, hung up, or sent something malformed or oversized."""


@named
class BoundaryError(Exception):
    """A limit of the isolation boundary (not the candidate's doing): the property is the gate's failure
    (``isolation_unavailable``, outcome ``incomplete``), never frozen (docs/design.md §8.1)."""

    __verdict_gate_origin__ = "boundary"


@named
class NotCrossable(BoundaryError):
    """A value or an operation that cannot cross the isolation boundary."""


@named
class IsolationUnavailable(BoundaryError):
    """The host cannot give the isolation level the catalog asks for."""


@named
class BoundaryWarning(UserWarning):
    """Something the boundary did differently from plain Python, on purpose (a star import that would have
    rebound a builtin's name)."""


@named
class CandidateBaseException(Exception):
    """Stands for a candidate's ``BaseException`` subclass of its own (not ``SystemExit``,
    ``KeyboardInterrupt`` or ``GeneratorExit``): in the oracle process it would stop pytest itself."""


@named
class CandidateKeyboardInterrupt(KeyboardInterrupt):
    """A ``KeyboardInterrupt`` the candidate raised: ``pytest.raises(KeyboardInterrupt)`` catches it; the plugin
    turns one that reaches pytest into the test's failure (a real Ctrl-C still stops the run)."""


class CandidateStopIteration(Exception):
    """``StopIteration`` raised by a candidate call other than ``__next__``: an ordinary exception here, so it
    cannot end the oracle's own ``all(map(...))`` or generator early (docs/design.md §8.1)."""


CandidateStopIteration.__module__ = "builtins"
CandidateStopIteration.__name__ = CandidateStopIteration.__qualname__ = "StopIteration"


@named
class _NoLength(TypeError, AttributeError):
    """``len()`` of a handle whose candidate object has no ``__len__`` (a generator): a ``TypeError``, as plain
    ``len()`` raises, and an ``AttributeError``, so ``hasattr(h, "__len__")`` is false as for the object itself
    (multiprocessing's ``Pool.map`` asks it before taking the items with ``list()``)."""


@named
class _Refused(Exception):
    """A callback the oracle does not answer (a private attribute, an operation its object lacks)."""


def candidate_error(exc: BaseException) -> BaseException:
    """Mark an exception the proxy raises about a candidate object's behaviour as the candidate's."""
    with contextlib.suppress(Exception):
        exc.__verdict_gate_origin__ = "candidate"  # type: ignore[attr-defined]
    return exc


def control_flow(exc: BaseException) -> bool:
    """An exception the oracle raised in a callback that candidate code must not be able to swallow: an
    assertion, a pytest outcome (``pytest.fail``, ``skip`` …), Hypothesis's control flow (``StopTest`` is a
    ``BaseException``; the others are its real classes as this process loaded them, never a class named like
    one: the candidate's own arrives as a mirror)."""
    if isinstance(exc, AssertionError) or not isinstance(exc, Exception):
        return True
    errors = sys.modules.get("hypothesis.errors")
    kinds = [getattr(errors, name, None) for name in ("UnsatisfiedAssumption", "Frozen")]
    return any(isinstance(kind, type) and isinstance(exc, kind) for kind in kinds)
