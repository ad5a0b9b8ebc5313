"""``attestation.intoto.json``: the run's evidence as an in-toto Statement v1 (docs/design.md §9.1). Pure.

The Statement (https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md) names every other
evidence file and the gated commit by digest (``subject``), and carries the decision in a predicate of this
project's own type (:data:`PREDICATE_TYPE`, versioned). GitHub's ``actions/attest`` signs the same subjects
with this predicate (docs/evidence.md's ``attest`` job); ``verdict-gate audit`` re-derives this file from the others.

Written here rather than with PyPI's ``in-toto-attestation``: that package holds the predicate in a
protobuf ``Struct``, where every number is a double (a count of 3 is written ``3.0``, an integer above
2**53 is rounded), so the predicate it writes is not the one the evidence holds; the Statement's JSON form
is four keys, checked by ``schemas/attestation.schema.json``.
"""

from __future__ import annotations

from typing import Any

from verdict_gate import __version__
from verdict_gate.core.evidence import Evidence
from verdict_gate.report.rows import counts

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://verdict-gate.dev/attestation/gate-run/v1"
COMMIT_SUBJECT = "head_revision"  # the gated commit's subject: digest ``gitCommit`` (in-toto's digest set)


def statement(ev: Evidence, digests: dict[str, str]) -> dict[str, Any]:
    """The in-toto Statement of a decided run.

    Args:
        ev: a run with an outcome (void included).
        digests: evidence file name → sha256 hex of its bytes, for every other file of the evidence.
    Returns:
        ``{_type, subject, predicateType, predicate}``: one subject per file (sorted by name) and one for
        the gated commit; the predicate holds the outcome, the counts, the revisions, the fixture digest,
        the pack's source, kind and sha256, the policy, the gate's version and the run id.
    """
    subjects: list[dict[str, Any]] = [{"name": name, "digest": {"sha256": digests[name]}} for name in sorted(digests)]
    if ev.head_revision:
        subjects.append({"name": COMMIT_SUBJECT, "digest": {"gitCommit": ev.head_revision}})
    return {"_type": STATEMENT_TYPE, "subject": subjects, "predicateType": PREDICATE_TYPE,
            "predicate": predicate(ev)}


def predicate(ev: Evidence) -> dict[str, Any]:
    """The predicate of :func:`statement` (``schemas/attestation.schema.json``, ``$defs.predicate``)."""
    return {
        "outcome": ev.outcome,
        "promoted": ev.promoted,
        "counts": counts(ev),
        "head_revision": ev.head_revision,
        "base_revision": ev.base_revision,
        "fixture_digest": ev.fixture.digest if ev.fixture else None,
        "pack": {k: ev.pack[k] for k in ("source", "kind", "sha256") if k in ev.pack},
        "policy": ev.policy,
        "gate_version": __version__,
        "run_id": ev.run_id,
    }
