"""``--format json``: one stable JSON document on stdout for scripts (``run``, ``replay``). Pure.

The document's keys never change meaning within a ``format`` version; new keys may be added.
Progress and errors stay on stderr, so stdout is exactly one JSON document (or empty on an
error, with the exit code telling which).
"""

from __future__ import annotations

import json
from typing import Any

from verdict_gate.core.errors import EXIT_CODES
from verdict_gate.core.evidence import Evidence
from verdict_gate.core.records import BaseSigRecord
from verdict_gate.report.rows import counts, ordered
from verdict_gate.report.verdicts import verdict_entries

RUN_FORMAT = "verdict-gate/run/v2"  # v2: verdicts keyed by id, as in verdicts.json (v1: a list)
REPLAY_FORMAT = "verdict-gate/replay/v1"


def run_document(ev: Evidence, evidence_dir: str) -> dict[str, Any]:
    """The ``run --format json`` document: outcome, exit code, counts, ``verdicts`` in ``verdicts.json``'s shape
    (:func:`verdict_gate.report.verdicts.verdict_entries`, keyed by id), ``worst_first`` (the ids, fail first),
    evidence."""
    return {
        "format": RUN_FORMAT,
        "outcome": ev.outcome,
        "promoted": ev.promoted,
        "exit_code": EXIT_CODES[ev.outcome] if ev.outcome else None,
        "why": ev.void_reason if ev.outcome == "void" else ev.why,
        "counts": counts(ev),
        "verdicts": verdict_entries(ev),
        "worst_first": [pid for pid, _ in ordered(ev)],
        "head_revision": ev.head_revision,
        "base_ref": ev.base_ref,
        "base_revision": ev.base_revision,
        "pack": {k: ev.pack[k] for k in ("source", "kind", "sha256") if k in ev.pack},
        "evidence_dir": evidence_dir,
        "files": {name: f"{evidence_dir.rstrip('/')}/{name}" for name in (
            "verdicts.json", "runs.json", "results.sarif", "summary.md")},
        "notices": list(ev.notices),
    }


def replay_document(doc: BaseSigRecord, out: str) -> dict[str, Any]:
    """The ``replay --format json`` document: one entry per replayed property, and the file written."""
    return {
        "format": REPLAY_FORMAT,
        "exit_code": 0,
        "base_revision": doc.base_revision,
        "fixture_digest": doc.fixture_digest,
        "replays": [{"prop_id": r.prop_id, "status": r.status, "signature": r.signature, "try": r.try_no}
                    for r in doc.replays],
        "out": out,
    }


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
