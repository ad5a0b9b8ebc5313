"""The one writer of evidence files: each validated against its schema, written once, atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from verdict_gate.core.errors import GateError
from verdict_gate.host import schemas
from verdict_gate.report.verdicts import FILES, SCHEMA_OF, Documents, dumps


def check_out_dir(out_dir: Path, repo: Path | None = None) -> None:
    """Refuse an evidence directory that exists as something else, or holds a non-file where an
    evidence file goes (nothing the user has is overwritten), or that is reached through a
    symbolic link inside ``repo`` (a candidate could commit one). Raises GateError (exit 2)."""
    if repo is not None:
        top, here = repo.absolute(), out_dir.absolute()
        if top in here.parents:
            for part in [here, *here.parents]:
                if part == top:
                    break
                if part.is_symlink():
                    raise GateError("--out", str(out_dir), f"goes through the symbolic link {part}, inside the "
                                    "repository; evidence is never written through one", "pass a real directory")
    if out_dir.is_symlink():
        raise GateError("--out", str(out_dir), "is a symbolic link; evidence is never written through one",
                        "pass a real directory path for evidence")
    if out_dir.exists() and not out_dir.is_dir():
        raise GateError("--out", str(out_dir), "exists and is not a directory", "pass a directory path for evidence")
    check_writable(out_dir, out_dir)
    for name in FILES:
        target = out_dir / name
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise GateError("--out", str(target), "exists and is not a regular file; it is never overwritten",
                            "choose another --out directory")


def clear_stale(out_dir: Path) -> None:
    """Remove evidence files of an earlier run from ``out_dir`` (only those names, only regular files)."""
    for name in FILES:
        target = out_dir / name
        if target.is_file() and not target.is_symlink():
            target.unlink()


def _atomic_write(target: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_files(out_dir: Path, documents: Mapping[str, Any]) -> dict[str, str]:
    """Validate each evidence document against its schema, then write each atomically into ``out_dir``;
    returns the texts written (``name → text``).

    ``documents`` maps a file name to its document: a JSON value for a file with a schema
    (:data:`.verdicts.SCHEMA_OF`), validated as it is, before it is written; text for the others (the job
    summary, and the pack's control files copied byte for byte as the decision read them: checked when the pack
    was loaded). For :class:`.verdicts.Documents` each text is the one its digest was taken of (rendered once).

    Raises:
        GateError: ``out_dir`` exists and is not a directory, or a target is not a regular file.
        GateError (internal): an evidence document fails its own schema (a bug; fails closed).
    """
    check_out_dir(out_dir)
    for name, doc in documents.items():
        if name in SCHEMA_OF and not isinstance(doc, str):
            schemas.check(SCHEMA_OF[name], doc, f"(internal) {name}")
    texts = {name: documents.text(name) if isinstance(documents, Documents) else doc if isinstance(doc, str)
             else dumps(doc) for name, doc in documents.items()}
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        _atomic_write(out_dir / name, text)
    return texts


def check_out_file(path: Path, example: str) -> None:
    """Refuse an output file path that exists as something other than a regular file, or that
    cannot be created (exit 2)."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise GateError("--out", str(path), "exists and is not a regular file", f"pass a file path, e.g. {example}")
    check_writable(path.parent, path)
    if path.exists() and not os.access(path, os.W_OK):
        raise GateError("--out", str(path), "exists and is not writable by this user",
                        f"make it writable (chmod u+w {path}) or pass another path")


# Kernel file systems: nothing written there is evidence, and some writes there change the system.
SYSTEM_ROOTS = ("/proc", "/sys", "/dev")


def check_writable(directory: Path, shown: Path) -> None:
    """Refuse an output location the gate could not write, before any work: under /proc, /sys or
    /dev; below a file; or in a directory this user cannot write (exit 2)."""
    full = Path(os.path.abspath(directory))
    if any(full == Path(root) or Path(root) in full.parents for root in SYSTEM_ROOTS):
        raise GateError("--out", str(shown), f"is under {full.parts[1] and '/' + full.parts[1]}, a kernel file "
                        "system, not a place for files", "pass a directory in your work tree or under $RUNNER_TEMP")
    probe = full
    while not probe.exists() and not probe.is_symlink():
        probe = probe.parent
    if not probe.is_dir():
        raise GateError("--out", str(shown), f"cannot be created: {probe} is a file, not a directory",
                        "pass a path whose parent directories are directories, or move that file")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise GateError("--out", str(shown), f"cannot be written: {probe} is not writable by this user "
                        "(or is on a read-only file system)", "pass a writable directory, e.g. ./evidence")


def write_file(path: Path, schema: str, doc: Any) -> None:
    """Validate ``doc`` against ``schemas/<schema>.schema.json`` and write it to ``path`` atomically."""
    schemas.check(schema, doc, f"(internal) {path.name}")
    check_out_file(path, path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, dumps(doc))
