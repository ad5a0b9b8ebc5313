"""Pack source: ``git:REV:DIR``, a directory of a revision of the repository (never the work tree)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import ClassVar

from verdict_gate.core.errors import VoidError
from verdict_gate.host import git as gitcmd
from verdict_gate.host.hashing import walk
from verdict_gate.pack.extract import TreeEntry, check_tree
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
        treeish = f"{commit}:{self.subdir}" if self.subdir else commit
        # The listing is checked as an archive's members are (pack.extract) before git writes a file:
        # git's own checkout is then five times quicker than a tar read in Python (benchmarks/README.md).
        entries = [TreeEntry(*entry) for entry in gitcmd.tree_entries(ctx.repo, treeish)]
        caps = ctx.options.caps
        check_tree(entries, self.display, **caps)
        ctx.dest.mkdir()
        gitcmd.checkout_tree(ctx.repo, treeish, ctx.dest, ctx.work / "pack.index")
        # What git wrote, against the cap again (a checkout filter may change a file's size).
        written = sum(os.lstat(entry.file).st_size for entry in walk(ctx.dest))
        if written > caps["max_bytes"]:
            raise VoidError("oracle pack", self.display, f"expands to {written} bytes when checked out, past the "
                            f"{caps['max_bytes']}-byte cap", "shrink the fixtures, or raise the byte cap if this "
                            "size is expected")
        return ""
