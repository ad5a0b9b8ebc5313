"""Renderers: evidence → text (docs/design.md §7, §9). Pure: they return strings; :mod:`.writer` writes.

One module per output: :mod:`.verdicts` (``verdicts.json`` and the other JSON evidence),
:mod:`.sarif`, :mod:`.summary` (the job summary), :mod:`.terminal`; :mod:`.text` holds the
escapers. Nothing here imports the pipeline, the pack loader or the network.
"""

from __future__ import annotations

import hashlib

from verdict_gate.core.evidence import Evidence
from verdict_gate.report.attestation import statement
from verdict_gate.report.sarif import sarif
from verdict_gate.report.summary import summary_markdown
from verdict_gate.report.verdicts import ATTESTATION, FILES, ORACLE_FILES, dumps, shard_doc, verdicts_doc

__all__ = ["FILES", "render_all", "render_shard"]


def _partial(ev: Evidence) -> dict[str, str]:
    out: dict[str, str] = {name: ev.oracle_files[name] for name in ORACLE_FILES if name in ev.oracle_files}
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
    out["shard.json"] = dumps(shard_doc(ev, digests(out)))
    return out


def digests(files: dict[str, str]) -> dict[str, str]:
    """name → sha256 hex of the file's UTF-8 bytes, for every file of ``files``."""
    return {name: hashlib.sha256(text.encode()).hexdigest() for name, text in files.items()}


def render_all(ev: Evidence, category: str = "verdict-gate") -> dict[str, str]:
    """Every evidence file present for ``ev`` as ``name → text``: what the decision read, ``verdicts.json``, the
    SARIF and the job summary, and last the in-toto statement naming each of them by digest."""
    out = _partial(ev)
    out["verdicts.json"] = dumps(verdicts_doc(ev, digests(out)))
    out["results.sarif"] = dumps(sarif(ev, category))
    out["summary.md"] = summary_markdown(ev)
    out[ATTESTATION] = dumps(statement(ev, digests(out)))
    return out
