"""Renderers: evidence → text (docs/design.md §7, §9). Pure: they return strings; :mod:`.writer` writes.

One module per output: :mod:`.verdicts` (``verdicts.json`` and the other JSON evidence),
:mod:`.sarif`, :mod:`.summary` (the job summary), :mod:`.terminal`; :mod:`.text` holds the
escapers. Nothing here imports the pipeline, the pack loader or the network.
"""

from __future__ import annotations

import hashlib
from typing import Any

from verdict_gate.core.evidence import Evidence
from verdict_gate.report.sarif import sarif
from verdict_gate.report.summary import summary_markdown
from verdict_gate.report.verdicts import FILES, dumps, shard_doc, verdicts_doc

__all__ = ["FILES", "documents", "render_all", "render_shard", "shard_documents", "text"]


def _partial(ev: Evidence) -> dict[str, Any]:
    out: dict[str, Any] = {}
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
    """An evidence file's text: Markdown as it is, a JSON document as :func:`.verdicts.dumps` writes it."""
    return doc if isinstance(doc, str) else dumps(doc)


def shard_documents(ev: Evidence) -> dict[str, Any]:
    """A shard's partial evidence (``verdict-gate run --shard``) as ``name → document``: the files written
    before scoring, and ``shard.json``; no verdicts (``verdict-gate merge`` decides)."""
    out = _partial(ev)
    out["shard.json"] = shard_doc(ev)
    return out


def documents(ev: Evidence, category: str = "verdict-gate") -> dict[str, Any]:
    """Every evidence document present for ``ev`` as ``name → document`` (a JSON value; ``summary.md``'s
    Markdown text), ``verdicts.json`` last but one; :func:`.writer.write_files` validates and writes them."""
    out = _partial(ev)
    digests = {name: hashlib.sha256(text(doc).encode()).hexdigest() for name, doc in out.items()}
    out["verdicts.json"] = verdicts_doc(ev, digests)
    out["results.sarif"] = sarif(ev, category)
    out["summary.md"] = summary_markdown(ev)
    return out


def render_shard(ev: Evidence) -> dict[str, str]:
    """:func:`shard_documents` as ``name → text``."""
    return {name: text(doc) for name, doc in shard_documents(ev).items()}


def render_all(ev: Evidence, category: str = "verdict-gate") -> dict[str, str]:
    """:func:`documents` as ``name → text`` (what :func:`.writer.write_files` writes)."""
    return {name: text(doc) for name, doc in documents(ev, category).items()}
