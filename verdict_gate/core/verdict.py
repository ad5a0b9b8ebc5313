"""The verdict table V1–V14 (docs/design.md, "The verdict table"). Pure.

Nothing here reads the environment, the clock, git or files: the edges pass in today's
date, the ancestry of each freeze's base revision and the base replay's signatures.

The one rule this module exists to keep: only a runner ``pass`` on an unedited oracle
yields ``pass``. A freeze can at most turn a failure into ``inconclusive``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from verdict_gate.core.signature import differing_parts

VerdictValue = Literal["pass", "fail", "inconclusive"]

# reason → the table row that produces it (the SARIF ruleId is derived from the reason)
REASON_ROWS = {
    "held": "V1",
    "no_freeze": "V2",
    "frozen": "V3",
    "oracle_moved": "V4",
    "catalog_drift": "V5",
    "missing_run": "V6",
    "signature_mismatch": "V7",
    "digest_mismatch": "V8",
    "base_mismatch": "V9",
    "not_reproduced_on_base": "V10",
    "freeze_expired": "V11",
    "fixture_mutated": "V12",
    "timed_out": "V13",
    "crashed": "V13",
    "unseeded": "V14",
    "vacuous": "V14",
}
INCOMPLETE_REASONS = frozenset({"unseeded", "vacuous"})


@dataclass(frozen=True)
class RunResult:
    """What the runner reported for one property.

    Attributes:
        status: ``pass``, ``fail``, ``timeout``, ``crash`` or ``skipped``.
        signature: ``sha256:…`` of the failure, ``None`` on pass.
        signature_parts: the parts hashed into ``signature``.
        fixture_digest: ``tree-v1`` hex of the fixtures the run saw.
        seed: Hypothesis seed used; ``None`` means the property ran unseeded.
        seeded_kind: True for catalog ``kind: property`` (must be seeded).
        hits: examples that reached the property body; ``None`` when unknown (timeout, crash).
        fixture_mutated: the run changed the fixtures although the catalog says it must not.
    """

    status: str
    signature: str | None = None
    signature_parts: Mapping[str, Any] | None = None
    fixture_digest: str = ""
    seed: int | None = None
    seeded_kind: bool = False
    hits: int | None = None
    fixture_mutated: bool = False


@dataclass(frozen=True)
class Freeze:
    """One ledger record (docs/design.md, ``freeze_ledger.json``)."""

    prop_id: str
    signature: str
    signature_parts: Mapping[str, Any]
    fixture_digest: str
    base_revision: str
    reason: str
    first_seen: dt.date
    expires_on: dt.date | None = None


@dataclass(frozen=True)
class BaseSig:
    """One base replay result (``base.sig.json``): the signature seen on ``base_revision``."""

    prop_id: str
    signature: str | None
    fixture_digest: str
    base_revision: str


@dataclass(frozen=True)
class Verdict:
    """The gate's answer for one property: ``verdict``, ``reason``, human ``detail``.

    ``notes`` carries secondary findings, e.g. ``("freeze_stale",)`` on a V1 pass.
    """

    verdict: VerdictValue
    reason: str
    detail: str = ""
    notes: tuple[str, ...] = ()

    @property
    def row(self) -> str:
        return REASON_ROWS[self.reason]


def _fail(reason: str, detail: str) -> Verdict:
    return Verdict("fail", reason, detail)


def decide(
    run: RunResult | None,
    *,
    oracle_edited: bool,
    freezes: Sequence[Freeze],
    replay: Sequence[BaseSig],
    base_revision: str,
    ancestors: Mapping[str, bool],
    freeze_base: str,
    today: dt.date,
) -> Verdict:
    """Apply the verdict table to one property.

    Args:
        run: the runner's result, ``None`` when the property produced none (V6).
        oracle_edited: the candidate diff edits this property's oracle file (V4, V5).
        freezes: the ledger records for this property id (any number).
        replay: base replay results for this property id on ``base_revision``.
        base_revision: the run's base revision (merge base of the base ref and HEAD).
        ancestors: freeze ``base_revision`` → whether it is an ancestor of (or equal to)
            ``base_revision``; a revision absent from the map counts as not an ancestor.
        freeze_base: ``"reproduced"`` (default policy) or ``"exact"``.
        today: the date freezes expire against (V11).
    Returns:
        a :class:`Verdict`; ``pass`` only for a runner pass on an unedited oracle.
    """
    # An edited oracle comes first: the pipeline does not run an edited property (docs/design.md §2
    # step 5), so its missing result is expected and oracle_moved is the reason to report.
    if oracle_edited:
        if run is not None and run.status == "pass":
            return _fail("catalog_drift", "the property passed, but its oracle file is edited in the diff")
        return _fail("oracle_moved", "the oracle file is edited in the diff; any freeze is void")
    if run is None:
        return _fail("missing_run", "the runner produced no result for this property")
    if run.fixture_mutated:
        return _fail("fixture_mutated", "the property changed the fixtures but is declared mutates_fixture: false")
    if run.status in ("pass", "fail", "skipped") and run.seeded_kind and run.seed is None:
        return _fail("unseeded", "a `kind: property` ran without a recorded Hypothesis seed "
                     "(a plain test is `kind: example` in the catalog)")
    # A failure with zero hits (say, an import error) is still a failure, so only a
    # pass or a skip can be vacuous.
    if run.status == "skipped" or (run.status == "pass" and run.hits == 0):
        return _fail("vacuous", "the property ran but checked no example (zero hits)")
    if run.status == "pass":
        notes = ("freeze_stale",) if freezes else ()
        detail = "held" + ("; a freeze for this id is stale and can be removed" if freezes else "")
        return Verdict("pass", "held", detail, notes)

    failure = {"timeout": "timed_out", "crash": "crashed"}.get(run.status)
    if not freezes:
        if failure:
            return _fail(failure, f"the property's process {failure.replace('_', ' ')}")
        return _fail("no_freeze", "the property failed and the ledger has no freeze for this id")
    matching = [f for f in freezes if f.signature == run.signature]
    if not matching:
        nearest = min(freezes, key=lambda f: len(differing_parts(f.signature_parts, run.signature_parts or {})))
        parts = differing_parts(nearest.signature_parts, run.signature_parts or {})
        detail = "signature differs from the freeze in: " + (", ".join(parts) or "signature value")
        return _fail(failure or "signature_mismatch", detail)

    # Try every freeze with this signature; report the one that got furthest.
    best: Verdict | None = None
    best_step = -1
    for freeze in matching:
        step, verdict = _check_freeze(freeze, run, replay, base_revision, ancestors, freeze_base, today)
        if verdict.verdict == "inconclusive":
            return verdict
        if step > best_step:
            best, best_step = verdict, step
    assert best is not None
    return best


def _check_freeze(
    freeze: Freeze,
    run: RunResult,
    replay: Sequence[BaseSig],
    base_revision: str,
    ancestors: Mapping[str, bool],
    freeze_base: str,
    today: dt.date,
) -> tuple[int, Verdict]:
    if freeze.fixture_digest != run.fixture_digest:
        return 0, _fail("digest_mismatch",
                        f"fixture digest {run.fixture_digest[:12]}… differs from "
                        f"the freeze's {freeze.fixture_digest[:12]}…")
    if freeze_base == "exact":
        base_ok = freeze.base_revision == base_revision
        rule = "equal to"
    else:
        base_ok = freeze.base_revision == base_revision or ancestors.get(freeze.base_revision, False)
        rule = "an ancestor of"
    if not base_ok:
        return 1, _fail("base_mismatch",
                        f"freeze base revision {freeze.base_revision[:12]} is not {rule} "
                        f"the run's base revision {base_revision[:12]}")
    reproduced = any(
        r.prop_id == freeze.prop_id and r.signature == freeze.signature
        and r.fixture_digest == freeze.fixture_digest and r.base_revision == base_revision
        for r in replay
    )
    if not reproduced:
        return 2, _fail("not_reproduced_on_base",
                        f"the base replay on {base_revision[:12]} did not reproduce this signature "
                        "under this fixture digest")
    if freeze.expires_on is not None and freeze.expires_on < today:
        return 3, _fail("freeze_expired", f"the freeze expired on {freeze.expires_on.isoformat()}")
    return 4, Verdict("inconclusive", "frozen", f"known failure, frozen: {freeze.reason}")
