"""Renderers: evidence → text (docs/design.md §7, §9). Pure: they return strings; :mod:`.writer` writes.

One module per output: :mod:`.verdicts` (``verdicts.json`` and the other JSON evidence),
:mod:`.sarif`, :mod:`.summary` (the job summary), :mod:`.terminal`; :mod:`.text` holds the
escapers. Nothing here imports the pipeline, the pack loader or the network.
"""

from __future__ import annotations

import hashlib

from verdict_gate.core.evidence import Evidence
from verdict_gate.report.sarif import sarif
from verdict_gate.report.summary import summary_markdown
from verdict_gate.report.verdicts import FILES, dumps, shard_doc, verdicts_doc

__all__ = ["FILES", "render_all", "render_shard"]


def _partial(ev: Evidence) -> dict[str, str]:
    out: dict[str, str] = {}
    if ev.fixture is not None:
        out["fixture.digest"] = dumps(ev.fixture)
    if ev.oracle_edited is not None:
        out["oracle_edited.json"] = dumps(ev.oracle_edited)
    if ev.base_sig is not None:
        out["base.sig.json"] = dumps(ev.base_sig.to_json())
    if ev.runs is not None:
        out["runs.json"] = dumps(ev.runs.to_json())
    return out


def render_shard(ev: Evidence) -> dict[str, str]:
    """A shard's partial evidence (``verdict-gate run --shard``): the files written before scoring, and
    ``shard.json``; no verdicts (``verdict-gate merge`` decides)."""
    out = _partial(ev)
    out["shard.json"] = dumps(shard_doc(ev))
    return out


def render_all(ev: Evidence, category: str = "verdict-gate") -> dict[str, str]:
    """Every evidence file present for ``ev`` as ``name → text``, ``verdicts.json`` last but one."""
    out = _partial(ev)
    digests = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in out.items()}
    out["verdicts.json"] = dumps(verdicts_doc(ev, digests))
    out["results.sarif"] = dumps(sarif(ev, category))
    out["summary.md"] = summary_markdown(ev)
    return out
