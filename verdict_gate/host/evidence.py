"""Reading an evidence directory back (``verdict-gate audit`` and ``explain``): every entry, as bytes.

Nothing is followed: a symbolic link, a directory or any other non-regular entry is reported by name
(the audit makes it a finding), never read; each file is capped at :data:`MAX_BYTES`.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from verdict_gate.core.errors import GateError

MAX_BYTES = 256 * 1024 * 1024  # one evidence file (runs.json of 10,000 properties is about 30 MB)
MAX_ENTRIES = 1000  # an evidence directory holds a dozen files


@dataclass(frozen=True)
class Read:
    """An evidence directory's regular files (name → bytes) and the names of the entries that are not one
    (``odd``: name → what it is)."""

    files: dict[str, bytes]
    odd: dict[str, str] = field(default_factory=dict)


def read_dir(directory: Path, what: str = "evidence directory") -> Read:
    """Every regular file directly in ``directory``.

    Raises:
        GateError: ``directory`` does not exist, is not a directory (or is a link to one), holds more than
            :data:`MAX_ENTRIES` entries, or a file is larger than :data:`MAX_BYTES` or cannot be read (exit 2).
    """
    fix = "pass the directory `verdict-gate run --out DIR` (or merge) wrote, e.g. a downloaded evidence artifact"
    if directory.is_symlink() or not directory.is_dir():
        problem = "is a symbolic link" if directory.is_symlink() else \
            ("does not exist" if not directory.exists() else "is not a directory")
        raise GateError(what, str(directory), problem, fix)
    names = sorted(os.listdir(directory))
    if len(names) > MAX_ENTRIES:
        raise GateError(what, str(directory), f"holds {len(names)} entries; an evidence directory holds a dozen", fix)
    files: dict[str, bytes] = {}
    odd: dict[str, str] = {}
    for name in names:
        path = directory / name
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            odd[name] = "a symbolic link" if path.is_symlink() else "an entry that cannot be opened"
            continue
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                odd[name] = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
                continue
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(MAX_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) > MAX_BYTES:
            raise GateError(what, str(path), f"is larger than {MAX_BYTES:,} bytes", fix)
        files[name] = data
    return Read(files, odd)
