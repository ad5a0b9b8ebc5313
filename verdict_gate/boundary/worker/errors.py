"""The worker's one exception, and how a class of this package is named (docs/design.md §8.1).

Every class of the package reports the package itself as its module (:func:`named`), as when the worker was
one module, ``worker.py``: candidate code sees these classes (``type(sys.stdout)``, a reference's class, the
globals of a class statement built here) and may put their names in a message, and an exception of the
worker's that reaches the oracle (:class:`BoundaryFault`) is named there by its module and qualified name,
which a failure's signature digests (docs/design.md §5). So moving code between this package's modules never
changes what candidate code or the evidence sees.
"""

from __future__ import annotations

from typing import TypeVar

PACKAGE = __name__.rpartition(".")[0]  # ``_verdict_gate_boundary.worker`` in the worker

T = TypeVar("T", bound=type)


def named(cls: T) -> T:
    """``cls``, its module the package's (see the module docstring)."""
    cls.__module__ = PACKAGE
    return cls


@named
class BoundaryFault(Exception):
    """The oracle could not answer a callback (a value it cannot send back, a nesting too deep). The
    oracle records it on its side too, so the candidate swallowing it changes nothing."""
