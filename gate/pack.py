"""Load the oracle pack (DESIGN.md §2 step 1, §6). An edge: files, git, the network, temp dirs.

A pack source (:func:`parse_source`, one parser for the CLI and the action) is one of:

- a directory, or a ``.tar.gz``/``.tgz``/``.tar``/``.zip`` archive (optionally pinned);
- ``https://…`` with a sha256 pin, ``#sha256=HEX`` or :attr:`PackOptions.sha256`; refused
  without one (plain ``http://`` only to a loopback address, e.g. a local mirror);
- ``git:REV:DIR``: read from a revision of the repository, never from the work tree;
- ``artifact:NAME``: the newest unexpired artifact ``NAME`` of a successful run of
  :attr:`PackOptions.workflow` on :attr:`PackOptions.branch` (default: the repository's default
  branch) of :attr:`PackOptions.repository` (default: ``GITHUB_REPOSITORY``), via the GitHub
  REST API (:mod:`gate.fetch`). The artifact zip either holds the pack files or one pack
  archive (what ``verdict-gate pack build`` writes).

Every source is materialised into a fresh temp dir: the gate scores that private copy, made
read-only, never the source itself. Downloaded bytes are checked against their sha256 before
anything is extracted; archives are extracted by :func:`safe_extract` (our member checks, then
``tarfile``'s ``data`` filter); the manifest is verified afterwards. On any failure the partial
copy is removed and the load raises: a pack is only scored when :func:`load` returns.

Anything wrong with the pack's bytes or contents (sha256, unsafe member, schema, manifest,
links) is :class:`VoidError` (outcome ``void``, exit 3); a source that does not exist, a bad
option or a network failure is :class:`GateError` (exit 2).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tarfile
import unicodedata
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO, Any

from gate import fetch, git
from gate.catalog import CATALOG_NAME, LEDGER_NAME, Catalog, parse_catalog
from gate.digest import (
    MANIFEST_NAME,
    Scan,
    compare_manifest,
    manifest_of,
    pack_fixture_path,
    scan,
    sha256_file,
    walk,
)
from gate.errors import GateError, VoidError
from gate.ledger import Ledger, parse_json, parse_ledger

MAX_MEMBERS = 50_000  # archive members (files and directories) a pack may have
MAX_BYTES = 512 * 1024 * 1024  # uncompressed bytes an archive may expand to
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
SOURCE_FORMS = "a directory, a .tar.gz/.tgz/.tar/.zip archive, https://…#sha256=HEX, git:REV:DIR or artifact:NAME"
REBUILD = "rebuild the pack with `verdict-gate pack build`"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_BAD_ARTIFACT_CHARS = set('":<>|*?\\/\r\n')  # characters actions/upload-artifact refuses in a name
_data_filter = getattr(tarfile, "data_filter", None)  # Python ≥ 3.11.4 (PEP 706)

Progress = Callable[[str], None]


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
    limits: fetch.Limits = field(default_factory=fetch.Limits)
    max_members: int = MAX_MEMBERS
    max_bytes: int = MAX_BYTES


@dataclass(frozen=True)
class Source:
    """A parsed pack source.

    Attributes:
        kind: ``directory``, ``archive``, ``url``, ``git`` or ``artifact``.
        display: the source as shown in messages and evidence (a URL without user info or
            query values).
        path: local directory or archive. url: the URL without its fragment.
        pin: sha256 hex the fetched bytes must have, or None.
        rev, subdir: ``git:REV:DIR``. name: ``artifact:NAME``.
    """

    kind: str
    display: str
    path: Path | None = None
    url: str | None = None
    pin: str | None = None
    rev: str | None = None
    subdir: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class Pack:
    """A verified oracle pack.

    Attributes:
        dir: the private, read-only copy the gate scores.
        source: the source as displayed (``git:REV:DIR``, a path, a redacted URL, ``artifact:NAME``).
        sha256: sha256 hex of the fetched bytes (the archive, or the artifact zip), or of the
            manifest file for directory and git sources.
        catalog, ledger: the validated control files.
        manifest: pack-relative path → sha256 hex.
        origin: the evidence record (``verdicts.json`` ``pack``): source, kind, sha256 and, for
            artifacts, the resolved artifact and run.
    """

    dir: Path
    source: str
    sha256: str
    catalog: Catalog
    ledger: Ledger
    manifest: dict[str, str]
    fixtures: Scan | None = None  # the pack's share of the fixture digest, from the manifest's one read
    origin: dict[str, Any] = field(default_factory=dict)


def _pin(value: str, where: str) -> str:
    pin = value.strip().lower().removeprefix("sha256:")
    if not _HEX64.match(pin):
        raise GateError("sha256 pin", where, f"{value!r} is not 64 hexadecimal digits",
                        "copy the sha256 printed by `verdict-gate pack build` (or `sha256sum FILE`)")
    return pin


def redact(source: str) -> str:
    """``source`` as it may be shown: URLs lose user info and query values, others are unchanged."""
    if _SCHEME.match(source):
        url, sep, frag = source.partition("#")
        return fetch.redact_url(url) + (sep + frag if frag.startswith("sha256=") else "")
    return source


def parse_source(text: str, options: PackOptions | None = None) -> Source:
    """Parse a ``--pack`` value (see the module docstring for the forms).

    Raises:
        GateError: an empty or unknown form, a URL without a sha256 pin (or with two different
            pins), plain http to a non-loopback host, an ``artifact:`` source without a
            workflow, artifact options on another kind of source, a pin on a directory or git
            source, or a local path that does not exist.
    """
    opts = options or PackOptions()
    pin = _pin(opts.sha256, "--pack-sha256") if opts.sha256 else None
    if not text:
        raise GateError("oracle pack", "--pack", "is empty", f"pass {SOURCE_FORMS}")
    artifact_only = [flag for flag, value in (("--pack-workflow", opts.workflow), ("--pack-branch", opts.branch),
                                              ("--pack-repository", opts.repository)) if value]
    if text.startswith("artifact:"):
        name = text[len("artifact:"):]
        if not name or set(name) & _BAD_ARTIFACT_CHARS:
            raise GateError("oracle pack", text, "does not name an artifact",
                            "write artifact:NAME with the name given to actions/upload-artifact")
        if not opts.workflow:
            raise GateError("oracle pack", text, "needs the workflow that uploads the artifact",
                            "pass --pack-workflow FILE (e.g. oracle-pack.yml, the file under .github/workflows)")
        return Source(kind="artifact", display=text, name=name, pin=pin)
    if artifact_only:
        raise GateError("oracle pack", redact(text), f"{', '.join(artifact_only)} apply only to artifact:NAME sources",
                        "drop those options, or use --pack artifact:NAME")
    if text.startswith("git:"):
        rev, sep, sub = text[4:].partition(":")
        if not sep or not rev or not sub.strip("/"):
            raise GateError("oracle pack", text, "is not of the form git:REV:DIR (with a directory)",
                            "write e.g. git:origin/main:oracle")
        if pin:
            raise GateError("--pack-sha256", text, "does not apply to a git: source (its revision names the contents)",
                            "drop --pack-sha256, or pin a commit id in REV")
        return Source(kind="git", display=text, rev=rev, subdir=sub.strip("/"))
    scheme = _SCHEME.match(text)
    if scheme:
        url, _, fragment = text.partition("#")
        shown = fetch.redact_url(url)
        kind = scheme.group(1).lower()
        if kind == "http" and not fetch.is_loopback(url):
            raise GateError("oracle pack", shown, "is plain http; only https (or http to a loopback address) is used",
                            "serve the pack over https")
        if kind not in ("http", "https"):
            raise GateError("oracle pack", shown, f"uses the unsupported scheme {kind}://", f"pass {SOURCE_FORMS}")
        url_pin = None
        if fragment:
            if not fragment.startswith("sha256="):
                raise GateError("oracle pack", shown, f"has the fragment #{fragment[:40]}; only #sha256=HEX is known",
                                "end the URL with #sha256=HEX")
            url_pin = _pin(fragment[len("sha256="):], "the URL's #sha256=")
        if url_pin and pin and url_pin != pin:
            raise GateError("oracle pack", shown, f"has two different pins: #sha256={url_pin} and --pack-sha256 {pin}",
                            "keep one of them")
        pin = pin or url_pin
        if not pin:
            raise GateError("oracle pack", shown, "is a URL without a sha256 pin; unpinned downloads are refused",
                            "append #sha256=HEX to the URL or pass --pack-sha256 HEX (the sha256 that "
                            "`verdict-gate pack build` printed)")
        return Source(kind="url", display=f"{shown}#sha256={pin}", url=url, pin=pin)
    path = Path(text)
    if not path.exists():
        raise GateError("oracle pack", text, "does not exist", f"pass --pack with {SOURCE_FORMS}")
    if path.is_dir():
        if pin:
            raise GateError("--pack-sha256", text, "does not apply to a directory (its manifest is verified instead)",
                            "drop --pack-sha256, or pass the pack as an archive")
        return Source(kind="directory", display=text, path=path)
    if path.name.endswith(ARCHIVE_SUFFIXES):
        return Source(kind="archive", display=text, path=path, pin=pin)
    raise GateError("oracle pack", text, "is neither a directory nor a .tar.gz/.tgz/.tar/.zip archive",
                    f"pass {SOURCE_FORMS}")


def load(source: str, repo: Path, work: Path, *, options: PackOptions | None = None,
         env: Mapping[str, str] | None = None, origin: dict[str, Any] | None = None,
         progress: Progress | None = None) -> Pack:
    """Materialise ``source`` under ``work`` (an existing directory) as ``work/pack``, validate and verify it.

    Args:
        source: the ``--pack`` value. options: pin, artifact options, limits.
        repo: the repository ``git:`` sources are read from.
        env: where ``GITHUB_TOKEN``, ``GITHUB_API_URL`` and ``GITHUB_REPOSITORY`` are read (default
            the process environment); only ``artifact:`` sources read it.
        origin: a dict filled in as facts become known (source, kind, sha256, artifact, inner
            archive), so a caller can record them even when the load fails.
        progress: called with one-line progress messages.
    Raises:
        GateError: the source does not exist, cannot be fetched or is malformed (exit 2); a
            property names an oracle file the pack does not have.
        VoidError: bytes other than the pinned ones, a link or special file, an unsafe archive
            member, a bomb, an invalid catalog or ledger, or a manifest mismatch (exit 3).
    """
    opts = options or PackOptions()
    src = parse_source(source, opts)
    record: dict[str, Any] = {} if origin is None else origin
    record.update(source=src.display, kind=src.kind)
    dest = work / "pack"
    try:
        archive_sha = _materialise(src, repo, work, dest, opts, env, record, progress or (lambda _m: None))
        pack = _verify(dest, src.display, archive_sha)
    except BaseException:
        _discard(dest)
        raise
    record["sha256"] = pack.sha256
    return replace(pack, origin=dict(record))


def _materialise(src: Source, repo: Path, work: Path, dest: Path, opts: PackOptions,
                 env: Mapping[str, str] | None, record: dict[str, Any], say: Progress) -> str:
    """Put the pack files into ``dest``; return the sha256 of the fetched archive bytes ("" if none)."""
    caps = {"max_members": opts.max_members, "max_bytes": opts.max_bytes}
    if src.kind == "git":
        assert src.rev is not None
        commit = git.resolve(repo, src.rev, "pack revision")
        record["commit"] = commit
        tar_path = work / "pack.tar"
        git.archive(repo, f"{commit}:{src.subdir}" if src.subdir else commit, tar_path)
        try:
            safe_extract(tar_path, dest, source=src.display, **caps)
        finally:
            tar_path.unlink(missing_ok=True)
        return ""
    if src.kind == "directory":
        assert src.path is not None
        _copy_tree(src.path, dest)
        return ""
    if src.kind == "archive":
        assert src.path is not None
        sha = sha256_file(src.path)
        record["sha256"] = sha
        if src.pin and sha != src.pin:
            raise VoidError("oracle pack", src.display, f"has sha256 {sha}, not the pinned {src.pin}",
                            "use the archive you reviewed, or pin the sha256 `verdict-gate pack build` printed")
        safe_extract(src.path, dest, source=src.display, **caps)
        return sha
    with fetch.Client(opts.limits) as client:
        if src.kind == "url":
            assert src.url is not None
            say(f"downloading {src.display}")
            got = client.download(src.url, work / "pack.download", expected_sha256=src.pin, what="oracle pack")
            record["sha256"] = got.sha256
            try:
                safe_extract(got.path, dest, source=src.display, **caps)
            finally:
                got.path.unlink(missing_ok=True)
            return got.sha256
        return _materialise_artifact(src, client, work, dest, opts, env, record, say)


def _materialise_artifact(src: Source, client: fetch.Client, work: Path, dest: Path, opts: PackOptions,
                          env: Mapping[str, str] | None, record: dict[str, Any], say: Progress) -> str:
    environ = fetch.default_env() if env is None else env
    repository = opts.repository or fetch.env_repository(environ)
    if not repository:
        raise GateError("oracle pack", src.display, "needs the repository that holds the artifact",
                        "pass --pack-repository OWNER/NAME, or set GITHUB_REPOSITORY (GitHub Actions sets it)")
    assert src.name is not None and opts.workflow
    github = fetch.GitHub.from_env(environ, client)
    say(f"looking up artifact {src.name} of {opts.workflow} in {repository}")
    artifact = github.find_artifact(repository, opts.workflow, opts.branch or None, src.name)
    record["artifact"] = artifact.record()
    say(f"downloading artifact {artifact.name} (id {artifact.artifact_id}) of run {artifact.run_id} "
        f"({artifact.head_sha[:12]} on {artifact.branch})")
    got = github.download_artifact(artifact, work / "artifact.zip", expected_sha256=src.pin)
    record["sha256"] = got.sha256
    caps = {"max_members": opts.max_members, "max_bytes": opts.max_bytes}
    unpacked = work / "artifact"
    try:
        safe_extract(got.path, unpacked, source=f"{src.display} (artifact {artifact.artifact_id})", **caps)
    finally:
        got.path.unlink(missing_ok=True)
    entries = list(unpacked.rglob("*"))
    inner = entries[0] if len(entries) == 1 and entries[0].is_file() else None
    if inner is not None and inner.name.endswith(ARCHIVE_SUFFIXES):
        record["inner_archive"] = {"name": inner.name, "sha256": sha256_file(inner)}
        try:
            safe_extract(inner, dest, source=f"{src.display} ({inner.name})", **caps)
        finally:
            _discard(unpacked)
    else:
        unpacked.rename(dest)
    return got.sha256


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


def _discard(path: Path) -> None:
    if path.exists():
        make_writable(path)
        shutil.rmtree(path, ignore_errors=True)


# --- safe extraction ----------------------------------------------------------------------


@dataclass(frozen=True)
class Extracted:
    """What :func:`safe_extract` wrote: regular ``files`` and their total ``bytes``."""

    files: int
    bytes: int


class _Names:
    """Member-name checks shared by tar and zip: relative, no ``..``, unique, no case or
    Unicode-normalisation collisions, no file where a directory is (and vice versa)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.files: dict[str, str] = {}
        self.dirs: dict[str, str] = {}

    def refuse(self, raw: str, problem: str) -> VoidError:
        return VoidError("oracle pack", f"{self.source} member {raw!r}", problem, REBUILD)

    def check(self, raw: str, is_dir: bool) -> PurePosixPath | None:
        """The safe relative path of member ``raw``, or None for the archive root itself."""
        if any(ord(c) < 32 or ord(c) == 127 for c in raw) or "\\" in raw:
            raise self.refuse(raw, "has a control character or backslash in its name")
        if raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
            raise self.refuse(raw, "escapes the pack (absolute path)")
        path = PurePosixPath(raw)
        if ".." in path.parts:
            raise self.refuse(raw, "escapes the pack ('..' component)")
        if str(path) in ("", "."):
            return None
        key = unicodedata.normalize("NFC", str(path)).casefold()
        parents = [unicodedata.normalize("NFC", str(p)).casefold() for p in path.parents if str(p) != "."]
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
        for parent, p in zip(parents, (str(p) for p in path.parents if str(p) != "."), strict=True):
            self.dirs.setdefault(parent, p)
        if is_dir:
            self.dirs.setdefault(key, raw)
        return path


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
        _discard(dest)
        raise
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError,
            RuntimeError, ValueError) as exc:
        _discard(dest)
        raise VoidError("oracle pack", source, "cannot be read or extracted as a tar or zip archive "
                        f"({type(exc).__name__}: {exc})", REBUILD) from None
    except BaseException:
        _discard(dest)
        raise


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
    names = _Names(source)
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
    names = _Names(source)
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


# --- verification -------------------------------------------------------------------------


def _read_text(path: Path, what: str, source: str) -> str:
    if not path.is_file():
        raise VoidError(what, f"{source}/{path.name}", "is missing from the oracle pack",
                        f"add {path.name} to the pack (README.md, section 'The oracle pack'), then run "
                        "`verdict-gate manifest write PACKDIR`")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise VoidError(what, f"{source}/{path.name}", f"is not UTF-8 ({exc.reason} at byte {exc.start})",
                        "save the file as UTF-8") from None


def _verify(dest: Path, source: str, archive_sha: str) -> Pack:
    catalog = parse_catalog(_read_text(dest / CATALOG_NAME, "catalog", source), f"{source}/{CATALOG_NAME}", void=True)
    # A pack without a ledger has no freezes yet (a new oracle): nothing can be forgiven.
    ledger_text = (_read_text(dest / LEDGER_NAME, "freeze ledger", source) if (dest / LEDGER_NAME).exists()
                   else '{"version": 1, "freezes": []}')
    ledger = parse_ledger(ledger_text, f"{source}/{LEDGER_NAME}",
                          known_ids=[p.id for p in catalog.properties], void=True)
    manifest_text = _read_text(dest / MANIFEST_NAME, "manifest", source)
    manifest = parse_json(manifest_text, "manifest", f"{source}/{MANIFEST_NAME}", void=True)
    from gate import validate

    validate.check("manifest", manifest, f"{source}/{MANIFEST_NAME}", void=True)
    try:
        # One read per file: the manifest check and the pack's share of the fixture digest.
        fixtures = scan(walk(dest, skip=[MANIFEST_NAME]), catalog.normalizers, tree_path=pack_fixture_path)
        actual = manifest_of(fixtures)
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
            raise VoidError("catalog", f"{source}/{CATALOG_NAME} $.properties[{i}].oracle",
                            f"property {prop.id!r} names {prop.oracle!r}, which is not a file in the pack",
                            "fix the path (relative to the pack root) or add the property file")
    _refuse_namespace_dirs(dest, source)
    _make_read_only(dest)
    sha = archive_sha or hashlib.sha256(manifest_text.encode()).hexdigest()
    return Pack(dir=dest, source=source, sha256=sha, catalog=catalog, ledger=ledger, manifest=manifest,
                fixtures=fixtures)


def _refuse_namespace_dirs(dest: Path, source: str) -> None:
    """A helper directory of the properties (``properties/expected/``) must be a regular
    package: without ``__init__.py`` it is a namespace package, and Python imports a
    candidate's regular package of the same name instead (PEP 420 gives regular packages
    precedence anywhere on ``sys.path``).

    Raises:
        VoidError: naming the first such directory and the ``__init__.py`` to add.
    """
    for path in sorted(dest.rglob("*.py")):
        rel = path.parent.relative_to(dest)
        if len(rel.parts) >= 2 and rel.parts[0] != "fixtures" and not (path.parent / "__init__.py").is_file():
            raise VoidError("oracle pack", f"{source}/{rel.as_posix()}",
                            "holds Python modules but no __init__.py, so a candidate package of the same name "
                            "would be imported in its place",
                            f"add {rel.as_posix()}/__init__.py to the pack and rewrite the manifest")


def _make_read_only(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)


def make_writable(root: Path) -> None:
    """Undo :func:`_make_read_only` so the temp copy can be deleted."""
    for dirpath, _dirs, _files in os.walk(root):
        os.chmod(dirpath, 0o755)
