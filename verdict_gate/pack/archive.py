"""Pack source: a local ``.tar.gz``/``.tgz``/``.tar``/``.zip`` archive, optionally pinned by sha256."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from verdict_gate.core.errors import VoidError
from verdict_gate.host.hashing import sha256_file
from verdict_gate.pack.extract import safe_extract
from verdict_gate.pack.source import Context


@dataclass(frozen=True)
class ArchiveSource:
    """A local archive; ``pin`` is the sha256 hex its bytes must have, or None."""

    kind: ClassVar[str] = "archive"
    path: Path
    display: str
    pin: str | None = None

    def materialise(self, ctx: Context) -> str:
        sha = sha256_file(self.path)
        ctx.record["sha256"] = sha
        if self.pin and sha != self.pin:
            raise VoidError("oracle pack", self.display, f"has sha256 {sha}, not the pinned {self.pin}",
                            "use the archive you reviewed, or pin the sha256 `verdict-gate pack build` printed")
        safe_extract(self.path, ctx.dest, source=self.display, **ctx.options.caps)
        return sha
