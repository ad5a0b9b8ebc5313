"""The one error of the fences: the host cannot give what a level or a fence needs (docs/design.md §8.2)."""

from __future__ import annotations


class Unavailable(Exception):
    """The host cannot give an isolation level, or one of its fences cannot be applied here; ``str()`` names
    what is missing and the fix. Raised by the choice of a method (:func:`.host.method`), the launcher, and
    the fences themselves (:mod:`.landlock`, :mod:`.seccomp`); the gate scores the property
    ``isolation_unavailable`` (outcome ``incomplete``)."""
