"""Pack source: ``git:REV:DIR``, a directory of a revision of the repository (never the work tree)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from verdict_gate.host import git as gitcmd
from verdict_gate.pack.extract import safe_extract
from verdict_gate.pack.source import Context


@dataclass(frozen=True)
class GitSource:
    """``git:REV:DIR``: ``rev`` as given (resolved when materialised), ``subdir`` without slashes at its ends."""

    kind: ClassVar[str] = "git"
    rev: str
    subdir: str
    display: str

    def materialise(self, ctx: Context) -> str:
        commit = gitcmd.resolve(ctx.repo, self.rev, "pack revision")
        ctx.record["commit"] = commit
        tar_path = ctx.work / "pack.tar"
        gitcmd.archive(ctx.repo, f"{commit}:{self.subdir}" if self.subdir else commit, tar_path)
        try:
            safe_extract(tar_path, ctx.dest, source=self.display, **ctx.options.caps)
        finally:
            tar_path.unlink(missing_ok=True)
        return ""
