"""The applier: the worker fences itself by its :class:`.policy.Policy`, for good, after its own imports and
before any candidate code (docs/design.md §8.2): a Landlock domain, then the seccomp filter."""

from __future__ import annotations

from typing import Any

from . import landlock, seccomp
from .errors import Unavailable
from .policy import Policy


def confine(policy: Policy) -> dict[str, Any]:
    """Apply the in-process fences of ``policy`` to this process.

    Returns:
        ``{"landlock": what Landlock enforced or None, "seccomp": bool, "errors": [why a fence is missing],
        "notes": [...]}``; a ``required`` fence that could not be applied is an error (the oracle then refuses
        the worker), a ``best-effort`` one (inside bubblewrap, which fences by namespaces) only a note.
    """
    out: dict[str, Any] = {"landlock": None, "seccomp": False, "errors": [], "notes": []}
    if policy.landlock:
        try:
            out["landlock"] = landlock.restrict(list(policy.read), list(policy.write))
        except Unavailable as exc:
            out["errors" if policy.landlock == "required" else "notes"].append(str(exc))
    if policy.seccomp:
        try:
            deny = (*seccomp.DENIED, *seccomp.METADATA) if policy.metadata else seccomp.DENIED
            seccomp.install(seccomp.Rules(deny=deny))
            out["seccomp"] = True
        except Unavailable as exc:
            out["errors" if policy.seccomp == "required" else "notes"].append(str(exc))
    return out
