"""``verdict-gate pack build SRC_DIR --out FILE.tar.gz``: a reproducible oracle pack archive.

The same files give the same bytes, so the sha256 printed here can be pinned
(``https://…#sha256=HEX``, ``--pack-sha256``) and checked by anyone who rebuilds the pack:

- ``manifest.sha256`` is (re)written in ``SRC_DIR`` from the files (docs/design.md §4);
- ``catalog.yaml`` and ``freeze_ledger.json`` are validated against ``schemas/`` first, and
  every property's oracle file must exist: nothing is written for an invalid pack;
- members are regular files only, in ``tree-v1`` order (sorted by path components), pax
  format, UTF-8 names, with a fixed mtime (0), uid/gid 0, empty uname/gname and mode 0644;
- the gzip header has mtime 0 and no file name; compression level 9.

Byte-reproducibility holds for one zlib: another zlib build (e.g. zlib-ng) may compress the
same tar differently. The tar inside, and so the manifest, do not depend on it.

Finally the archive is loaded back with :func:`verdict_gate.pack.load`, the loader the gate uses, so a
pack that would be refused (e.g. two names differing only in case) is never published.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from verdict_gate import pack
from verdict_gate.core.catalog import CATALOG_NAME, LEDGER_NAME
from verdict_gate.core.digest import MANIFEST_NAME, compare_manifest, manifest_text
from verdict_gate.core.errors import GateError
from verdict_gate.core.ledger import parse_json
from verdict_gate.host import schemas, workdir
from verdict_gate.host.files import parse_catalog, parse_ledger, read_utf8
from verdict_gate.host.hashing import build_manifest, sha256_file, walk
from verdict_gate.pack.extract import NAME_FIX, bad_name

MTIME = 0  # seconds since the epoch, for every member and the gzip header
MODE = 0o644
OUT_SUFFIXES = (".tar.gz", ".tgz")


@dataclass(frozen=True)
class Built:
    """A written pack archive: ``path``, its ``sha256`` hex, ``files`` (members) and ``bytes`` (archive size).

    ``manifest_changed`` lists the paths whose entries differed in the old ``manifest.sha256``
    (``missing:``/``extra:``/``changed:`` lines; empty when it was up to date or absent).
    """

    path: Path
    sha256: str
    files: int
    bytes: int
    manifest_changed: tuple[str, ...] = ()


def _read(path: Path, what: str) -> str:
    if not path.is_file():
        raise GateError(what, str(path), "is missing",
                        f"add {path.name} to the pack directory (docs/oracle.md, section 'The oracle pack')")
    return read_utf8(path, what, f"add {path.name} to the pack directory")


def check_source(src: Path) -> None:
    """Validate the control files of pack directory ``src`` (schemas, ids, oracle files).

    Raises:
        GateError: ``src`` is not a directory, a control file is missing, malformed or invalid,
            or a property names an oracle file that is not in ``src``.
    """
    if not src.is_dir():
        raise GateError("pack directory", str(src), "does not exist or is not a directory",
                        "pass the oracle pack directory (the one holding catalog.yaml)")
    catalog = parse_catalog(_read(src / CATALOG_NAME, "catalog"), str(src / CATALOG_NAME))
    if (src / LEDGER_NAME).exists():  # no ledger: no freezes yet
        parse_ledger(_read(src / LEDGER_NAME, "freeze ledger"), str(src / LEDGER_NAME),
                     known_ids=[p.id for p in catalog.properties])
    for i, prop in enumerate(catalog.properties):
        if not (src / prop.oracle).is_file():
            raise GateError("catalog", f"{src / CATALOG_NAME} $.properties[{i}].oracle",
                            f"property {prop.id!r} names {prop.oracle!r}, which is not a file in {src}",
                            "fix the path (relative to the pack root) or add the property file")


def write_manifest(src: Path) -> tuple[str, tuple[str, ...]]:
    """The one manifest writer: write ``src/manifest.sha256`` from the files (only when its text
    changes); return (its text, the lines that changed). ``verdict-gate manifest write`` and
    ``pack build`` both use it.

    Raises:
        GateError: ``manifest.sha256`` exists and is not a regular file.
    """
    manifest = build_manifest(src)
    for name in manifest:
        if bad_name(name):  # before the schema's message, which would blame the manifest the user never wrote
            raise GateError("pack file", repr(f"{src}/{name}"), "has a control character or backslash in its name, "
                            "which the gate refuses in a pack (such a name cannot be shown or extracted safely)",
                            NAME_FIX)
    schemas.check("manifest", manifest, f"(internal) {src / MANIFEST_NAME}")
    text = manifest_text(manifest)
    path = src / MANIFEST_NAME
    changed: tuple[str, ...] = ()
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise GateError("manifest", str(path), "is not a regular file", "replace it with a regular file")
    if path.is_file():
        try:
            old = parse_json(path.read_text(encoding="utf-8"), "manifest", str(path))
            diff = compare_manifest(old if isinstance(old, dict) else {}, manifest)
            changed = tuple(diff.describe().splitlines())
        except (GateError, UnicodeDecodeError):
            changed = ("  replaced: an unreadable manifest.sha256",)
    if not path.is_file() or path.read_text(encoding="utf-8", errors="replace") != text:
        path.write_text(text, encoding="utf-8")
    return text, changed


@dataclass(frozen=True)
class LedgerWrite:
    """What :func:`write_ledger` wrote: the ledger, the manifest beside it (``None`` when the pack has none)
    and every other difference between that manifest and the pack's files (left for a human to review)."""

    ledger: Path
    manifest: Path | None
    others: tuple[str, ...]


def write_ledger(ledger_path: Path, text: str) -> LedgerWrite:
    """Write a new ``freeze_ledger.json`` text (already checked) and record its sha256 in the pack's
    ``manifest.sha256`` beside it: only the ledger's entry changes, so a file someone else changed in the
    pack stays a difference ``manifest verify`` reports, never blessed here. Both are checked before
    either is written.

    Raises:
        GateError: the manifest beside the ledger is not a regular file, not JSON or not a manifest.
    """
    path = ledger_path.parent / MANIFEST_NAME
    manifest: dict[str, str] | None = None
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise GateError("manifest", str(path), "is not a regular file", "replace it with a regular file")
    if path.is_file():
        manifest = parse_json(read_utf8(path, "manifest", f"recreate it: verdict-gate manifest write {path.parent}"),
                              "manifest", str(path))
        schemas.check("manifest", manifest, str(path))
        assert manifest is not None
        manifest = {**manifest, ledger_path.name: hashlib.sha256(text.encode("utf-8")).hexdigest()}
        schemas.check("manifest", manifest, f"(internal) {path}")
    ledger_path.write_text(text, encoding="utf-8")
    if manifest is None:
        return LedgerWrite(ledger_path, None, ())
    new = manifest_text(manifest)
    if path.read_text(encoding="utf-8", errors="replace") != new:
        path.write_text(new, encoding="utf-8")
    others = compare_manifest(manifest, build_manifest(ledger_path.parent)).describe()
    return LedgerWrite(ledger_path, path, tuple(others.splitlines()))


def write_archive(src: Path, out: Path) -> int:
    """Write the deterministic ``.tar.gz`` of every regular file under ``src`` to ``out``
    (atomically: a temp file in the same directory, then a rename). Returns the member count.

    Raises:
        GateError: a symlink, device or FIFO under ``src`` (never followed, never packed).
    """
    entries = sorted(walk(src), key=lambda e: tuple(e.path.split("/")))
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=MTIME) as gz, \
                tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
            for entry in entries:
                with open(entry.file, "rb") as fh:
                    info = tarfile.TarInfo(entry.path)
                    info.size = os.fstat(fh.fileno()).st_size
                    info.mtime, info.mode, info.type = MTIME, MODE, tarfile.REGTYPE
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    tar.addfile(info, fh)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(entries)


def build(src: Path, out: Path) -> Built:
    """Validate ``src``, write its manifest, write ``out`` and load it back; return what was built.

    Raises:
        GateError: an invalid pack directory (see :func:`check_source`), ``out`` without a
            ``.tar.gz``/``.tgz`` suffix, inside ``src`` or not a regular file, a link or special
            file under ``src``, or an archive the gate's loader refuses (named, exit 2).
    """
    if not out.name.endswith(OUT_SUFFIXES):
        raise GateError("--out", str(out), "does not end in .tar.gz or .tgz",
                        "name the archive e.g. oracle-pack.tar.gz")
    check_source(src)
    src_real, out_real = src.resolve(), out.resolve()
    if out_real == src_real or src_real in out_real.parents:
        raise GateError("--out", str(out), f"is inside the pack directory {src}; the archive would pack itself",
                        "write the archive outside the pack directory")
    if out.exists() and (out.is_symlink() or not out.is_file()):
        raise GateError("--out", str(out), "exists and is not a regular file; it is never overwritten",
                        "choose another --out path")
    list(walk(src))  # links and special files are refused before anything is written
    _, changed = write_manifest(src)
    files = write_archive(src, out)
    sha = sha256_file(out)
    work = Path(tempfile.mkdtemp(prefix="verdict-gate-packbuild-"))
    try:
        pack.load(str(out), src, work)
    except GateError as exc:  # VoidError included: our own output must load
        out.unlink(missing_ok=True)
        raise GateError("pack build", str(src), f"the archive would be refused by the gate: {exc.problem} "
                        f"({exc.where})", exc.fix) from None
    finally:
        workdir.remove(work)
    return Built(path=out, sha256=sha, files=files, bytes=out.stat().st_size, manifest_changed=changed)
