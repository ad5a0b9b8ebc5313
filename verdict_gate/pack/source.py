"""What every pack source shares: the options, the materialisation context and the interface.

A source is a frozen dataclass (one module each: :mod:`.directory`, :mod:`.archive`,
:mod:`.url`, :mod:`.git`, :mod:`.artifact`) with ``kind``, ``display`` (how it is shown in
messages and evidence) and ``materialise(ctx) -> str``: put the pack's files into
``ctx.dest`` and return the sha256 hex of the fetched bytes ("" when nothing was fetched).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from verdict_gate.core.errors import GateError
from verdict_gate.core.progress import Progress
from verdict_gate.pack import http
from verdict_gate.pack.extract import MAX_BYTES, MAX_MEMBERS

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")



@dataclass(frozen=True)
class PackOptions:
    """Options of a pack source; empty strings count as unset.

    Attributes:
        sha256: pin (64 hex digits): required for ``https://`` (unless the URL has
            ``#sha256=``); optional for archives (their bytes) and artifacts (the zip, as the API's
            ``digest`` and ``actions/upload-artifact``'s ``artifact-digest`` output give it).
        workflow: ``artifact:`` only: the workflow file name (``oracle-pack.yml``) or id. Required.
        branch: ``artifact:`` only: default the repository's default branch (asked from the API).
        repository: ``artifact:`` only: ``OWNER/NAME``, default ``GITHUB_REPOSITORY``.
        limits: network timeouts, retries and the download cap (bytes).
        max_members, max_bytes: extraction caps (members; uncompressed bytes).
    """

    sha256: str | None = None
    workflow: str | None = None
    branch: str | None = None
    repository: str | None = None
    limits: http.Limits = field(default_factory=http.Limits)
    max_members: int = MAX_MEMBERS
    max_bytes: int = MAX_BYTES

    @property
    def caps(self) -> dict[str, int]:
        return {"max_members": self.max_members, "max_bytes": self.max_bytes}


@dataclass
class Context:
    """Where and how a source is materialised.

    Attributes:
        repo: the repository ``git:`` sources are read from.
        work: a private directory for downloads and intermediate files.
        dest: where the pack's files go (must not exist yet).
        options: pin, artifact options, limits.
        env: where ``GITHUB_TOKEN``, ``GITHUB_API_URL`` and ``GITHUB_REPOSITORY`` are read
            (``None``: the process environment); only ``artifact:`` sources read it.
        record: the evidence record, filled in as facts become known (kind, sha256, artifact).
        say: one-line progress messages.
    """

    repo: Path
    work: Path
    dest: Path
    options: PackOptions
    env: Mapping[str, str] | None
    record: dict[str, Any]
    say: Progress


class Source(Protocol):
    """The interface every pack source has."""

    kind: ClassVar[str]

    @property
    def display(self) -> str: ...

    def materialise(self, ctx: Context) -> str: ...


def pin(value: str, where: str) -> str:
    """A sha256 pin as 64 lowercase hex digits (a ``sha256:`` prefix is allowed).

    Raises:
        GateError: anything else.
    """
    hexed = value.strip().lower().removeprefix("sha256:")
    if not _HEX64.match(hexed):
        raise GateError("sha256 pin", where, f"{value!r} is not 64 hexadecimal digits",
                        "copy the sha256 printed by `verdict-gate pack build` (or `sha256sum FILE`)")
    return hexed
