"""The catalog's ``generated:`` files, written into a tree the gate checks out (docs/design.md §7).

A package whose build writes a file git ignores (hatch-vcs and setuptools-scm write ``_version.py``)
cannot be imported from a plain checkout. The pack declares that file's literal content; this edge
writes it into each tree the gate made (the candidate's, the base replay's, ``check --rev``'s) before
anything runs there. Never a build command: no code of the candidate runs to make it.

The tree is the candidate's, so every step is taken without following a symbolic link (a committed
link named like a parent directory could point anywhere): directories are opened with ``O_NOFOLLOW``
from the tree's own descriptor, and the file is created with ``O_EXCL``. A path the tree already holds
(the candidate or the base commits that file) is left as committed and the run says so: the gate never
overwrites a committed file.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Sequence
from pathlib import Path

MODE = 0o644  # readable by a worker of another uid (the landlock method as root)


def write_generated(tree: Path, files: Sequence[tuple[str, str]], label: str) -> tuple[int, list[str]]:
    """Write each ``(path, content)`` of ``files`` (repository-relative, checked by the catalog, which
    refuses unprintable paths) into ``tree``, content as UTF-8. ``label`` names the tree in notices
    (e.g. ``"the tree of 1a2b3c4d5e6f"``).

    Returns the number of files written and a notice per file not written: one the tree already holds
    (kept as committed) or one whose directory in the tree is a symbolic link or a file. Never follows a
    link, never writes outside ``tree``, never overwrites.
    """
    written, notices = 0, []
    for path, content in files:
        problem = _write_one(tree, path, content.encode("utf-8", "surrogatepass"))
        if problem is None:
            written += 1
        else:
            notices.append(f"generated file {path} was not written into {label}: {problem}")
    return written, notices


def missing(tree: Path, files: Sequence[tuple[str, str]]) -> list[str]:
    """The paths of ``files`` that ``tree`` (a work tree the gate does not write into) lacks."""
    return [path for path, _ in files if not os.path.lexists(tree / path)]


def _write_one(tree: Path, path: str, data: bytes) -> str | None:
    """Create ``path`` under ``tree`` with ``data``; ``None``, or why it was not written."""
    *parents, name = path.split("/")
    fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for i, part in enumerate(parents):
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    return (f"{'/'.join(parents[:i + 1])} in that tree is a symbolic link or a file, "
                            "not a directory (the gate never writes through a link)")
                raise
            os.close(fd)
            fd = child
        try:
            out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, MODE, dir_fd=fd)
        except FileExistsError:
            return "that tree already has it (committed); the committed file is used"
        try:
            os.fchmod(out, MODE)  # whatever the umask
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
        finally:
            os.close(out)
        return None
    finally:
        os.close(fd)
