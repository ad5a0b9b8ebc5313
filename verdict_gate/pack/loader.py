"""Load the oracle pack (docs/design.md §2 step 1, §6): parse the source, materialise it, verify it.

Every source is materialised into a fresh temp dir: the gate scores that private copy, made
read-only, never the source itself. Downloaded bytes are checked against their sha256 before
anything is extracted; archives are extracted by :func:`~verdict_gate.pack.extract.safe_extract`;
the manifest is verified afterwards. On any failure the partial copy is removed and the load
raises: a pack is only scored when :func:`load` returns.

Anything wrong with the pack's bytes or contents (sha256, unsafe member, schema, manifest,
links) is :class:`VoidError` (outcome ``void``, exit 3); a source that does not exist, a bad
option or a network failure is :class:`GateError` (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from verdict_gate.core.progress import Progress
from verdict_gate.host.modules import check_nodes
from verdict_gate.pack.extract import discard
from verdict_gate.pack.parse import parse_source
from verdict_gate.pack.source import Context, PackOptions, Source
from verdict_gate.pack.verify import Pack, verify


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
            property names an oracle file the pack does not have, or a ``node:`` its file does not define.
        VoidError: bytes other than the pinned ones, a link or special file, an unsafe archive
            member, a bomb, an invalid catalog or ledger, or a manifest mismatch (exit 3).
    """
    opts = options or PackOptions()
    src: Source = parse_source(source, opts)  # every source has the one interface
    record: dict[str, Any] = {} if origin is None else origin
    record.update(source=src.display, kind=src.kind)
    dest = work / "pack"
    ctx = Context(repo=repo, work=work, dest=dest, options=opts, env=env, record=record,
                  say=progress or (lambda _m: None))
    try:
        pack = verify(dest, src.display, src.materialise(ctx))
        check_nodes(pack.catalog, pack.dir)  # a node: typo stops the run now, before any property (exit 2)
    except BaseException:
        discard(dest)
        raise
    record["sha256"] = pack.sha256
    return replace(pack, origin=dict(record))
