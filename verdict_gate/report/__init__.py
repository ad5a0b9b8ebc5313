"""Renderers: evidence → text (docs/design.md §7, §9). Pure: they return strings; :mod:`.writer` writes.

One module per output: :mod:`.verdicts` (``verdicts.json`` and the other JSON evidence),
:mod:`.sarif`, :mod:`.summary` (the job summary), :mod:`.terminal`; :mod:`.text` holds the
escapers. Nothing here imports the pipeline, the pack loader or the network.
"""

from __future__ import annotations

import hashlib
from typing import Any

from verdict_gate.core.evidence import Evidence
from verdict_gate.report.attestation import statement
from verdict_gate.report.sarif import sarif
from verdict_gate.report.summary import summary_markdown
from verdict_gate.report.verdicts import ATTESTATION, FILES, ORACLE_FILES, Documents, dumps, shard_doc, verdicts_doc

__all__ = ["FILES", "digests", "documents", "render_all", "render_shard", "shard_documents", "text"]


def _partial(ev: Evidence) -> Documents:
    out = Documents({name: ev.oracle_files[name] for name in ORACLE_FILES if name in ev.oracle_files})
    if ev.fixture is not None:
        out["fixture.digest"] = ev.fixture.to_json()
    if ev.diff is not None:
        out["oracle_edited.json"] = ev.diff.to_json()
    if ev.base_sig is not None:
        out["base.sig.json"] = ev.base_sig.to_json()
    if ev.runs is not None:
        out["runs.json"] = ev.runs.to_json()
    return out


def text(doc: Any) -> str:
    """An evidence file's text: Markdown (or an oracle file) as it is, a JSON document as :func:`.verdicts.dumps`
    writes it."""
    return doc if isinstance(doc, str) else dumps(doc)


def digests(files: dict[str, Any]) -> dict[str, str]:
    """name → sha256 hex of the UTF-8 bytes of each file's :func:`text` (rendered once for :class:`Documents`)."""
    if isinstance(files, Documents):
        return {name: hashlib.sha256(files.text(name).encode()).hexdigest() for name in files}
    return {name: hashlib.sha256(text(doc).encode()).hexdigest() for name, doc in files.items()}


def shard_documents(ev: Evidence) -> Documents:
    """A shard's partial evidence (``verdict-gate run --shard``) as ``name → document``: the files written
    before scoring, and ``shard.json``; no verdicts (``verdict-gate merge`` decides)."""
    out = _partial(ev)
    out["shard.json"] = shard_doc(ev, digests(out))
    return out


def documents(ev: Evidence, category: str = "verdict-gate") -> Documents:
    """Every evidence document present for ``ev`` as ``name → document`` (a JSON value; ``summary.md``'s
    Markdown text): what the decision read, ``verdicts.json``, the SARIF and the job summary, and last the in-toto
    statement naming each of them by digest; :func:`.writer.write_files` validates and writes them."""
    out = _partial(ev)
    out["verdicts.json"] = verdicts_doc(ev, digests(out))
    out["results.sarif"] = sarif(ev, category)
    out["summary.md"] = summary_markdown(ev)
    out[ATTESTATION] = statement(ev, digests(out))
    return out


def render_shard(ev: Evidence) -> dict[str, str]:
    """:func:`shard_documents` as ``name → text``."""
    docs = shard_documents(ev)
    return {name: docs.text(name) for name in docs}


def render_all(ev: Evidence, category: str = "verdict-gate") -> dict[str, str]:
    """:func:`documents` as ``name → text`` (what :func:`.writer.write_files` writes)."""
    docs = documents(ev, category)
    return {name: docs.text(name) for name in docs}
