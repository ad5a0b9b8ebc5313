"""Safe extraction of pack archives (tar and zip) and removal of the read-only copies.

Every member is checked before anything is written (docs/design.md §2 step 1, §4): names,
kinds, counts and sizes; tar members then pass ``tarfile``'s ``data`` filter (PEP 706).
Anything wrong is :class:`~verdict_gate.core.errors.VoidError` (outcome ``void``).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tarfile
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO

from verdict_gate.core.errors import VoidError
from verdict_gate.host.workdir import make_writable

MAX_MEMBERS = 50_000  # archive members (files and directories) a pack may have
MAX_BYTES = 512 * 1024 * 1024  # uncompressed bytes an archive may expand to
REBUILD = "rebuild the pack with `verdict-gate pack build`"
_data_filter = getattr(tarfile, "data_filter", None)  # Python ≥ 3.11.4 (PEP 706)


def discard(path: Path) -> None:
    """Remove ``path`` (a partial or read-only copy), if it exists."""
    if path.exists():
        make_writable(path)
        shutil.rmtree(path, ignore_errors=True)


@dataclass(frozen=True)
class Extracted:
    """What :func:`safe_extract` wrote: regular ``files`` and their total ``bytes``."""

    files: int
    bytes: int


_BAD_CHAR = re.compile(r"[\x00-\x1f\x7f\\]")  # a C0 control character, DEL or a backslash
NAME_FIX = ("rename that file in the pack to a printable name without backslashes, then run "
            "`verdict-gate manifest write PACKDIR` and commit")


def bad_name(name: str) -> bool:
    """Whether a pack file's relative name has a control character or a backslash (never allowed in a
    pack: such a name cannot be shown in a log or extracted the same way everywhere)."""
    return _BAD_CHAR.search(name) is not None


class Names:
    """Member-name checks shared by tar, zip and git trees: relative, no ``..``, unique, no case or
    Unicode-normalisation collisions, no file where a directory is (and vice versa)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.files: dict[str, str] = {}
        self.dirs: dict[str, str] = {}
        self._folded: dict[str, str] = {}  # a directory's path → its key (a pack's members share few)

    def refuse(self, raw: str, problem: str, fix: str = REBUILD) -> VoidError:
        return VoidError("oracle pack", f"{self.source} member {raw!r}", problem, fix)

    def _fold(self, path: str) -> str:
        key = self._folded.get(path)
        if key is None:
            key = self._folded[path] = unicodedata.normalize("NFC", path).casefold()
        return key

    def check(self, raw: str, is_dir: bool) -> PurePosixPath | None:
        """The safe relative path of member ``raw``, or None for the archive root itself."""
        if bad_name(raw):
            raise self.refuse(raw, "has a control character or backslash in its name", NAME_FIX)
        if raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
            raise self.refuse(raw, "escapes the pack (absolute path)")
        # As PurePosixPath reads it (the name is relative): empty and "." components dropped.
        parts = [part for part in raw.split("/") if part and part != "."]
        if ".." in parts:
            raise self.refuse(raw, "escapes the pack ('..' component)")
        if not parts:
            return None
        norm = "/".join(parts)
        key = unicodedata.normalize("NFC", norm).casefold()
        # Nearest parent first, as PurePosixPath.parents gives them.
        spelled = ["/".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]
        parents = [self._fold(p) for p in spelled]
        for parent in parents:
            if parent in self.files:
                raise self.refuse(raw, f"is inside {self.files[parent]!r}, which is a file")
        if is_dir:
            if key in self.files:
                raise self.refuse(raw, f"collides with the file {self.files[key]!r} (same name, or same but for case)")
        else:
            other = self.files.get(key) or self.dirs.get(key)
            if other is not None:
                raise self.refuse(raw, f"is duplicated, or collides by case with {other!r}")
            self.files[key] = raw
        for parent, p in zip(parents, spelled, strict=True):
            self.dirs.setdefault(parent, p)
        if is_dir:
            self.dirs.setdefault(key, raw)
        return PurePosixPath(norm)


def _archive_format(archive: Path) -> str:
    with open(archive, "rb") as fh:
        head = fh.read(4)
    return "zip" if head in (b"PK\x03\x04", b"PK\x05\x06") else "tar"


def safe_extract(archive: Path, dest: Path, *, source: str, max_members: int = MAX_MEMBERS,
                 max_bytes: int = MAX_BYTES) -> Extracted:
    """Extract a tar (plain, gzip, bzip2, xz) or zip ``archive`` into ``dest``, a new directory.

    Every member is checked before anything is written: the name is relative, has no ``..``,
    control character or backslash, and collides with no other (case and Unicode normalisation
    folded); the member is a regular file or directory (no symlink, hard link, device or FIFO;
    no encrypted zip entry); there are at most ``max_members`` members and at most ``max_bytes``
    uncompressed bytes. Tar members then pass ``tarfile``'s ``data`` filter (PEP 706). Files
    are created exclusively (never through a link) and the bytes actually written are counted
    against ``max_bytes`` again.

    Args:
        source: how the archive is named in messages.
        max_members: members (files and directories) allowed.
        max_bytes: uncompressed bytes allowed.
    Returns:
        the number of files and bytes written.
    Raises:
        VoidError: naming the offending member; ``dest`` is removed again.
        FileExistsError: ``dest`` already exists (the caller passes a fresh path).
    """
    dest.mkdir()
    try:
        if _archive_format(archive) == "zip":
            return _extract_zip(archive, dest, source, max_members, max_bytes)
        return _extract_tar(archive, dest, source, max_members, max_bytes)
    except VoidError:
        discard(dest)
        raise
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError,
            RuntimeError, ValueError) as exc:
        discard(dest)
        raise VoidError("oracle pack", source, "cannot be read or extracted as a tar or zip archive "
                        f"({type(exc).__name__}: {exc})", REBUILD) from None
    except BaseException:
        discard(dest)
        raise


@dataclass(frozen=True)
class TreeEntry:
    """One line of ``git ls-tree -r -t -l``: git ``mode`` (``100644`` …), object ``kind`` (``blob``, ``tree``,
    ``commit``), ``size`` in bytes (-1 for a tree or a submodule) and ``path`` relative to the tree listed."""

    mode: str
    kind: str
    size: int
    path: str


GIT_LINK_FIX = "commit the file itself in place of the link (packs hold regular files only)"


def check_tree(entries: Sequence[TreeEntry], source: str, *, max_members: int = MAX_MEMBERS,
               max_bytes: int = MAX_BYTES) -> None:
    """Check a git tree's listing as :func:`safe_extract` checks an archive's members, before anything is
    written: the same name rules, regular files only (git modes ``100644`` and ``100755``: no symbolic
    link, no submodule), at most ``max_members`` entries (directories included) and ``max_bytes`` bytes.

    Raises:
        VoidError: naming the offending entry.
    """
    if len(entries) > max_members:
        raise _too_many(source, max_members)
    names = Names(source)
    declared = 0
    for entry in entries:
        names.check(entry.path, entry.kind == "tree")
        if entry.kind == "tree":
            continue
        if entry.mode == "120000":
            raise names.refuse(entry.path, "is a symbolic link", GIT_LINK_FIX)
        if entry.kind == "commit":
            raise names.refuse(entry.path, "is a submodule (a gitlink); packs hold regular files only",
                               "copy the files the properties need into the pack and commit them")
        if entry.kind != "blob" or entry.mode not in ("100644", "100755"):
            raise names.refuse(entry.path, f"has git mode {entry.mode} ({entry.kind}); packs hold regular files only",
                               GIT_LINK_FIX)
        if entry.size > max_bytes - declared:
            raise _too_big(source, max_bytes, entry.path)
        declared += entry.size


def _too_big(source: str, max_bytes: int, member: str) -> VoidError:
    return VoidError("oracle pack", f"{source} member {member!r}", f"expands the pack past {max_bytes} bytes",
                     "shrink the fixtures, or raise the byte cap if this size is expected")


def _too_many(source: str, max_members: int) -> VoidError:
    return VoidError("oracle pack", source, f"has more than {max_members} members",
                     "split the fixtures, or raise the member cap if this count is expected")


def _write(fh: IO[bytes], target: Path, budget: int, on_over: Callable[[], VoidError]) -> int:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    written = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := fh.read(1 << 20):
            written += len(chunk)
            if written > budget:
                raise on_over()
            out.write(chunk)
    return written


def _extract_tar(archive: Path, dest: Path, source: str, max_members: int, max_bytes: int) -> Extracted:
    names = Names(source)
    plan: list[tuple[tarfile.TarInfo, PurePosixPath]] = []
    declared = 0
    with tarfile.open(archive, "r:*") as tar:
        for count, member in enumerate(tar, start=1):
            if count > max_members:
                raise _too_many(source, max_members)
            if member.name.startswith("pax_global_header"):
                continue
            rel = names.check(member.name, member.isdir())
            if rel is None or member.isdir():
                continue
            if member.issym() or member.islnk():
                kind = "a symbolic link" if member.issym() else "a hard link"
                raise names.refuse(member.name, f"is {kind} (to {member.linkname!r}); packs hold regular files only")
            if not member.isreg():
                raise names.refuse(member.name, "is a device, FIFO or other special file; packs hold regular "
                                                "files only")
            if member.size > max_bytes - declared:
                raise _too_big(source, max_bytes, member.name)
            declared += member.size
            if _data_filter is not None:
                try:
                    _data_filter(member, str(dest))
                except tarfile.FilterError as exc:
                    raise names.refuse(member.name, f"is refused by tarfile's data filter ({exc})") from None
            plan.append((member, rel))
        written = 0
        for member, rel in plan:
            fh = tar.extractfile(member)
            if fh is None:
                raise names.refuse(member.name, "has no data")
            with fh:
                written += _write(fh, dest.joinpath(*rel.parts), max_bytes - written,
                                  partial(_too_big, source, max_bytes, member.name))
    return Extracted(files=len(plan), bytes=written)


def _extract_zip(archive: Path, dest: Path, source: str, max_members: int, max_bytes: int) -> Extracted:
    names = Names(source)
    plan: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
    declared = 0
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        if len(infos) > max_members:
            raise _too_many(source, max_members)
        for info in infos:
            is_dir = info.is_dir()
            rel = names.check(info.filename, is_dir)
            if rel is None or is_dir:
                continue
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise names.refuse(info.filename, "is a symbolic link; packs hold regular files only")
            if stat.S_IFMT(mode) not in (0, stat.S_IFREG):
                raise names.refuse(info.filename, "is a device, FIFO or other special file; packs hold regular "
                                                  "files only")
            if info.flag_bits & 0x1:
                raise names.refuse(info.filename, "is encrypted")
            if info.file_size > max_bytes - declared:
                raise _too_big(source, max_bytes, info.filename)
            declared += info.file_size
            plan.append((info, rel))
        written = 0
        for info, rel in plan:
            with zf.open(info) as fh:
                written += _write(fh, dest.joinpath(*rel.parts), max_bytes - written,
                                  partial(_too_big, source, max_bytes, info.filename))
    return Extracted(files=len(plan), bytes=written)
