"""Pack source: a local directory, copied (regular files only) into the private pack."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from verdict_gate.core.errors import GateError, VoidError
from verdict_gate.host.hashing import walk
from verdict_gate.pack.source import Context


@dataclass(frozen=True)
class DirectorySource:
    """A pack directory; its manifest is verified after the copy."""

    kind: ClassVar[str] = "directory"
    path: Path
    display: str

    def materialise(self, ctx: Context) -> str:
        try:
            entries = list(walk(self.path))
        except GateError as exc:
            raise VoidError("oracle pack", exc.where, exc.problem, exc.fix) from None
        ctx.dest.mkdir(parents=True)
        for entry in entries:
            target = ctx.dest / entry.path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(entry.file, target)
        return ""
