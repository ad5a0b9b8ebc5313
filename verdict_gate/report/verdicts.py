"""``verdicts.json`` and the other evidence JSON documents (docs/design.md §7). Pure: they return text."""

from __future__ import annotations

import json
from typing import Any

from verdict_gate import __version__
from verdict_gate.core.evidence import Evidence
from verdict_gate.report.rows import counts, signature

# The pack's control files as the decision read them, copied into the evidence byte for byte (docs/design.md §9.1).
ORACLE_FILES = ("catalog.yaml", "freeze_ledger.json", "manifest.sha256")
# What the decision read and measured (each listed with its sha256 in verdicts.json and shard.json).
INPUT_FILES = (*ORACLE_FILES, "fixture.digest", "oracle_edited.json", "base.sig.json", "runs.json")
ATTESTATION = "attestation.intoto.json"
# Every evidence file, in the order they are written; the JSON ones with their schema (schemas/NAME.schema.json).
FILES = (*INPUT_FILES, "verdicts.json", "results.sarif", "summary.md", ATTESTATION)
SCHEMA_OF = {"fixture.digest": "fixture_digest", "oracle_edited.json": "oracle_edited",
             "base.sig.json": "base_sig", "runs.json": "runs", "verdicts.json": "verdicts",
             "results.sarif": "sarif-2.1.0", "shard.json": "shard", "freeze_ledger.json": "freeze_ledger",
             "manifest.sha256": "manifest", ATTESTATION: "attestation"}


def dumps(doc: Any) -> str:
    """Evidence JSON: sorted keys, two-space indent, trailing newline."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=True) + "\n"


class Documents(dict[str, Any]):
    """Evidence documents, ``name → document``, that render each document's text once.

    ``verdicts.json``, ``shard.json`` and the attestation name the other files by the sha256 of their text, and the
    writer writes that text: with indentation the encoder is pure Python, and rendering ``runs.json`` three times
    was 0.35 s of a 2,000-property run (benchmarks/README.md, issue 43). A text is kept with the object it was
    rendered from and used only while the name still holds that object; the documents are built to be written,
    not changed after (:func:`verdict_gate.report.documents`).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._texts: dict[str, tuple[Any, str]] = {}

    def text(self, name: str) -> str:
        """The file's text: Markdown (or an oracle file) as it is, a JSON document as :func:`dumps` writes it."""
        doc = self[name]
        if isinstance(doc, str):
            return doc
        kept = self._texts.get(name)
        if kept is not None and kept[0] is doc:
            return kept[1]
        rendered = dumps(doc)
        self._texts[name] = (doc, rendered)
        return rendered


def verdict_entries(ev: Evidence) -> dict[str, dict[str, Any]]:
    """The one shape of the verdicts, in ``verdicts.json`` and ``run --format json`` alike: property id →
    ``{verdict, reason, row, detail, notes, claimed, signature}``, keys sorted by id."""
    return {
        pid: {"verdict": v.verdict, "reason": v.reason, "row": v.row, "detail": v.detail, "notes": list(v.notes),
              "claimed": pid in ev.claimed, "signature": signature(ev, pid)}
        for pid, v in sorted(ev.verdicts.items())
    }


def verdicts_doc(ev: Evidence, digests: dict[str, str]) -> dict[str, Any]:
    if ev.outcome is None:
        raise ValueError("the evidence has no outcome: a run is scored or explicitly void before it is written")
    return {
        "version": 1,
        "outcome": ev.outcome,
        "promoted": ev.promoted,
        "promotion": ev.why,
        "void_reason": ev.void_reason or None,
        "policy": ev.policy,
        "freeze_base": ev.freeze_base,
        "head_revision": ev.head_revision,
        "base_ref": ev.base_ref,
        "base_revision": ev.base_revision,
        "pack": ev.pack,
        "claimed": list(ev.claimed),
        "counts": counts(ev),
        "verdicts": verdict_entries(ev),
        "notices": ev.notices,
        "evidence": digests,
        "gate_version": __version__,
        "run_id": ev.run_id,
        "decision": decision_doc(ev),
    }


def decision_doc(ev: Evidence) -> dict[str, Any] | None:
    """What the decision read that no other evidence file holds (docs/design.md §9.1), ``None`` for a run that
    was void before it was scored: the date freezes expire against, the ancestry of each freeze's base revision,
    the tests pytest ran, the planned properties the runner reported nothing for, the phases that did not finish
    and the problems that kept shards from one decision."""
    if ev.today is None:
        return None
    return {"today": ev.today.isoformat(), "ancestors": dict(sorted(ev.ancestors.items())), "items": ev.items,
            "unreported": list(ev.unreported), "phase_failures": list(ev.phase_failures),
            "merge_problems": list(ev.merge_problems)}


def shard_doc(ev: Evidence, digests: dict[str, str]) -> dict[str, Any]:
    """``shard.json`` (``schemas/shard.schema.json``): what one shard covered and saw; ``digests``: the sha256
    of each other file of the shard's evidence."""
    if ev.shard is None:
        raise ValueError("the evidence is not a shard's")
    return {
        "version": 1,
        "index": ev.shard["index"],
        "count": ev.shard["count"],
        "head_revision": ev.head_revision,
        "base_revision": ev.base_revision,
        "pack_sha256": ev.shard.get("pack_sha256") or ev.pack.get("sha256") or None,
        "fixture_digest": ev.fixture.digest if ev.fixture else None,
        "run_id": ev.run_id,
        "properties": list(ev.shard.get("properties", [])),
        "items": int(ev.shard.get("items", 0)),
        "phase_failures": list(ev.shard.get("phase_failures", [])),
        "notices": list(ev.notices),
        "outcome": "void" if ev.outcome == "void" else None,
        "void_reason": ev.void_reason or None,
        "unreported": list(ev.shard.get("unreported", [])),
        "gate_version": __version__,
        "evidence": digests,
    }
