"""Verification of a materialised pack: schemas, manifest, oracle files (docs/design.md §2 step 1, §4)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verdict_gate.core.catalog import CATALOG_NAME, LEDGER_NAME, Catalog
from verdict_gate.core.digest import MANIFEST_NAME, Scan, compare_manifest, manifest_of, pack_fixture_path
from verdict_gate.core.errors import GateError, VoidError
from verdict_gate.core.ledger import EMPTY_LEDGER, Ledger, parse_json
from verdict_gate.host import schemas
from verdict_gate.host.files import parse_catalog, parse_ledger, read_utf8
from verdict_gate.host.hashing import scan, walk
from verdict_gate.host.workdir import make_read_only


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
        texts: the control files as read (``catalog.yaml``, ``freeze_ledger.json``, ``manifest.sha256``; the
            ledger of a pack without one is the empty ledger): the evidence keeps them, so the decision can be
            re-derived from the evidence alone (docs/design.md §9.1).
    """

    dir: Path
    source: str
    sha256: str
    catalog: Catalog
    ledger: Ledger
    manifest: dict[str, str]
    fixtures: Scan | None = None  # the pack's share of the fixture digest, from the manifest's one read
    origin: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)


def _read_text(path: Path, what: str, source: str) -> str:
    where = f"{source}/{path.name}"
    if not path.is_file():
        make = ("run `verdict-gate manifest write PACKDIR` (PACKDIR: the pack's directory in your work tree)"
                if path.name == MANIFEST_NAME else f"add {path.name} to the pack (docs/oracle.md, section 'The oracle "
                "pack'), then run `verdict-gate manifest write PACKDIR`")
        raise VoidError(what, where, "is missing from the oracle pack",
                        f"{make}, and commit the result where the pack is read from")
    return read_utf8(path, what, "restore the file", error=VoidError, where=where)


def verify(dest: Path, source: str, archive_sha: str) -> Pack:
    """Validate the control files in ``dest``, verify the manifest, make ``dest`` read-only.

    Raises:
        VoidError: a missing or invalid control file, a manifest mismatch, a link or special file,
            a property whose oracle file is missing, a namespace helper directory.
    """
    catalog_text = _read_text(dest / CATALOG_NAME, "catalog", source)
    catalog = parse_catalog(catalog_text, f"{source}/{CATALOG_NAME}", void=True)
    # A pack without a ledger has no freezes yet (a new oracle): nothing can be forgiven.
    ledger_text = (_read_text(dest / LEDGER_NAME, "freeze ledger", source) if (dest / LEDGER_NAME).exists()
                   else EMPTY_LEDGER)
    ledger = parse_ledger(ledger_text, f"{source}/{LEDGER_NAME}",
                          known_ids=[p.id for p in catalog.properties], void=True)
    manifest_text = _read_text(dest / MANIFEST_NAME, "manifest", source)
    manifest = parse_json(manifest_text, "manifest", f"{source}/{MANIFEST_NAME}", void=True)
    schemas.check("manifest", manifest, f"{source}/{MANIFEST_NAME}", void=True)
    # Read-only first: a chmod moves each file's ctime, and the stamps the scan takes now are the
    # post-run check's proof that the pack fixtures did not change (docs/design.md §4).
    make_read_only(dest)
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
    sha = archive_sha or hashlib.sha256(manifest_text.encode()).hexdigest()
    return Pack(dir=dest, source=source, sha256=sha, catalog=catalog, ledger=ledger, manifest=manifest,
                fixtures=fixtures, texts={CATALOG_NAME: catalog_text, LEDGER_NAME: ledger_text,
                                          MANIFEST_NAME: manifest_text})


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
