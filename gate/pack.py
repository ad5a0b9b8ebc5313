"""Load the oracle pack (DESIGN.md §2 step 1, §6). An edge: files, git, temp dirs.

A pack source is a directory, a ``.tar.gz``/``.tgz``/``.tar`` or ``.zip`` archive, or
``git:REV:DIR`` (read from a revision of the repository, never from the work tree). Every
source is materialised into a fresh temp dir: the gate scores that private copy, made
read-only, never the source itself.

Anything wrong with the pack's contents (schema, manifest, links) is :class:`VoidError`
(outcome ``void``, exit 3); a source that does not exist is :class:`GateError` (exit 2).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gate import git
from gate.catalog import CATALOG_NAME, LEDGER_NAME, Catalog, parse_catalog
from gate.digest import MANIFEST_NAME, build_manifest, compare_manifest, walk
from gate.errors import GateError, VoidError
from gate.ledger import Ledger, parse_json, parse_ledger

MAX_MEMBERS = 50_000
MAX_BYTES = 512 * 1024 * 1024  # uncompressed bytes an archive may expand to


@dataclass(frozen=True)
class Pack:
    """A verified oracle pack.

    Attributes:
        dir: the private, read-only copy the gate scores.
        source: the source as given (``git:REV:DIR``, a path).
        sha256: sha256 hex of the archive bytes, or of the manifest file for directory and git sources.
        catalog, ledger: the validated control files.
        manifest: pack-relative path → sha256 hex.
    """

    dir: Path
    source: str
    sha256: str
    catalog: Catalog
    ledger: Ledger
    manifest: dict[str, str]


def load(source: str, repo: Path, work: Path) -> Pack:
    """Materialise ``source`` under ``work`` (an empty directory), validate and verify it.

    Raises:
        GateError: the source does not exist or cannot be read (exit 2); a property names
            an oracle file the pack does not have.
        VoidError: a link or special file, an unsafe archive member, an invalid catalog or
            ledger, or a manifest mismatch (exit 3).
    """
    dest = work / "pack"
    archive_sha = ""
    if source.startswith("git:"):
        rev, sep, sub = source[4:].partition(":")
        if not sep or not rev:
            raise GateError("oracle pack", source, "is not of the form git:REV:DIR", "write e.g. git:origin/main:oracle")
        commit = git.resolve(repo, rev, "pack revision")
        tar_path = work / "pack.tar"
        git.archive(repo, f"{commit}:{sub.strip('/')}" if sub.strip("/") else commit, tar_path)
        _extract_tar(tar_path, dest, source)
        tar_path.unlink()
    else:
        path = Path(source)
        if not path.exists():
            raise GateError("oracle pack", source, "does not exist",
                            "pass --pack with a directory, a .tar.gz/.zip archive or git:REV:DIR")
        if path.is_dir():
            _copy_tree(path, dest)
        elif path.name.endswith((".tar.gz", ".tgz", ".tar")):
            archive_sha = _sha256_file(path)
            _extract_tar(path, dest, source)
        elif path.name.endswith(".zip"):
            archive_sha = _sha256_file(path)
            _extract_zip(path, dest, source)
        else:
            raise GateError("oracle pack", source, "is neither a directory nor a .tar.gz/.tgz/.tar/.zip archive",
                            "pass a pack directory or archive")
    return _verify(dest, source, archive_sha)


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _copy_tree(src: Path, dest: Path) -> None:
    try:
        entries = list(walk(src))
    except GateError as exc:
        raise VoidError("oracle pack", exc.where, exc.problem, exc.fix) from None
    dest.mkdir(parents=True)
    for entry in entries:
        target = dest / entry.path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(entry.file, target)


def _member_name(name: str, source: str, seen: set[str]) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or name.startswith("\\") or "\0" in name:
        raise VoidError("oracle pack", f"{source} member {name!r}", "escapes the pack (absolute path or '..')",
                        "rebuild the pack with `verdict-gate pack build`")
    folded = str(path).casefold()
    if folded in seen:
        raise VoidError("oracle pack", f"{source} member {name!r}", "is duplicated (or collides by case)",
                        "rebuild the pack with `verdict-gate pack build`")
    seen.add(folded)
    return path


def _extract_tar(archive: Path, dest: Path, source: str) -> None:
    dest.mkdir(parents=True)
    seen: set[str] = set()
    total = 0
    try:
        with tarfile.open(archive, "r:*") as tar:
            for count, member in enumerate(tar, start=1):
                if count > MAX_MEMBERS:
                    raise VoidError("oracle pack", source, f"has more than {MAX_MEMBERS} members",
                                    "split fixtures or raise the limit")
                if member.name in ("", ".", "./") or member.name.startswith("pax_global_header"):
                    continue
                rel = _member_name(member.name.rstrip("/"), source, seen)
                if member.isdir():
                    continue
                if not member.isreg():
                    raise VoidError("oracle pack", f"{source} member {member.name!r}",
                                    "is a link or special file; packs hold regular files only",
                                    "replace links with the files they point to")
                total += member.size
                if total > MAX_BYTES:
                    raise VoidError("oracle pack", source, f"expands past {MAX_BYTES} bytes",
                                    "shrink the fixtures or raise the limit")
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                fh = tar.extractfile(member)
                assert fh is not None
                with fh, open(target, "wb") as out:
                    shutil.copyfileobj(fh, out)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise VoidError("oracle pack", source, f"is not a readable tar archive ({exc})",
                        "rebuild the pack archive") from None


def _extract_zip(archive: Path, dest: Path, source: str) -> None:
    dest.mkdir(parents=True)
    seen: set[str] = set()
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise VoidError("oracle pack", source, f"has more than {MAX_MEMBERS} members",
                                "split fixtures or raise the limit")
            if sum(i.file_size for i in infos) > MAX_BYTES:
                raise VoidError("oracle pack", source, f"expands past {MAX_BYTES} bytes",
                                "shrink the fixtures or raise the limit")
            for info in infos:
                rel = _member_name(info.filename.rstrip("/"), source, seen)
                if info.is_dir():
                    continue
                if stat.S_IFMT(info.external_attr >> 16) not in (0, stat.S_IFREG):
                    raise VoidError("oracle pack", f"{source} member {info.filename!r}",
                                    "is a link or special file; packs hold regular files only",
                                    "replace links with the files they point to")
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as fh, open(target, "wb") as out:
                    shutil.copyfileobj(fh, out, 1 << 20)
    except (zipfile.BadZipFile, OSError) as exc:
        raise VoidError("oracle pack", source, f"is not a readable zip archive ({exc})",
                        "rebuild the pack archive") from None


def _read_text(path: Path, what: str, source: str) -> str:
    if not path.is_file():
        raise VoidError(what, f"{source}/{path.name}", "is missing from the oracle pack",
                        f"add {path.name} to the pack (see DESIGN.md §6) and rewrite the manifest")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise VoidError(what, f"{source}/{path.name}", f"is not UTF-8 ({exc.reason} at byte {exc.start})",
                        "save the file as UTF-8") from None


def _verify(dest: Path, source: str, archive_sha: str) -> Pack:
    catalog = parse_catalog(_read_text(dest / CATALOG_NAME, "catalog", source), f"{source}/{CATALOG_NAME}", void=True)
    ledger = parse_ledger(_read_text(dest / LEDGER_NAME, "freeze ledger", source), f"{source}/{LEDGER_NAME}",
                          known_ids=[p.id for p in catalog.properties], void=True)
    manifest_text = _read_text(dest / MANIFEST_NAME, "manifest", source)
    manifest = parse_json(manifest_text, "manifest", f"{source}/{MANIFEST_NAME}", void=True)
    from gate import validate

    validate.check("manifest", manifest, f"{source}/{MANIFEST_NAME}", void=True)
    try:
        actual = build_manifest(dest)
    except GateError as exc:
        raise VoidError("oracle pack", exc.where, exc.problem, exc.fix) from None
    diff = compare_manifest(manifest, actual)
    if not diff.ok:
        raise VoidError("manifest", f"{source}/{MANIFEST_NAME}",
                        "does not match the pack's files:\n" + diff.describe(),
                        "restore the pack from its protected source; if the change is reviewed, "
                        "run `verdict-gate manifest write PACKDIR`")
    for i, prop in enumerate(catalog.properties):
        if not (dest / prop.oracle).is_file():
            raise GateError("catalog", f"{source}/{CATALOG_NAME} $.properties[{i}].oracle",
                            f"property {prop.id!r} names {prop.oracle!r}, which is not a file in the pack",
                            "fix the path (relative to the pack root) or add the property file")
    _make_read_only(dest)
    sha = archive_sha or hashlib.sha256(manifest_text.encode()).hexdigest()
    return Pack(dir=dest, source=source, sha256=sha, catalog=catalog, ledger=ledger, manifest=manifest)


def _make_read_only(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)


def make_writable(root: Path) -> None:
    """Undo :func:`_make_read_only` so the temp copy can be deleted."""
    for dirpath, _dirs, _files in os.walk(root):
        os.chmod(dirpath, 0o755)
