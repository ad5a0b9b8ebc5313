"""Scoring: the verdict table per property, promotion, the incomplete rule, the outcome. Pure.

:func:`score` is the pipeline's last step (docs/design.md, "Pipeline", step 6): every value
it needs was measured by the edges before (runs, base replays, ancestry, today's date).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from verdict_gate.core.catalog import Catalog
from verdict_gate.core.ledger import Ledger
from verdict_gate.core.promotion import Outcome, Promotion, outcome, promote
from verdict_gate.core.records import RunRecord
from verdict_gate.core.verdict import INCOMPLETE_REASONS, BaseSig, Verdict, decide


@dataclass(frozen=True)
class Score:
    """The verdicts of every catalog property, the promotion of the claimed set and the outcome.

    ``nothing_ran``: properties were run but pytest collected no test at all (outcome incomplete).
    """

    verdicts: dict[str, Verdict]
    promotion: Promotion
    outcome: Outcome
    nothing_ran: bool


def score(catalog: Catalog, ledger: Ledger, runs: Mapping[str, RunRecord], *, oracle_edited: Collection[str],
          replays: Sequence[BaseSig], base_revision: str, ancestors: Mapping[str, bool], policy: str,
          today: dt.date, ran: int, items: int, phase_failures: Sequence[str] = ()) -> Score:
    """Score one run.

    Args:
        runs: id → the candidate's run (a property without one is ``missing_run``).
        oracle_edited: ids whose oracle file the diff edits (not run).
        replays: the base replay's signatures.
        base_revision: the run's base revision.
        ancestors: freeze base revision → whether it is an ancestor of ``base_revision``.
        policy: ``lenient`` or ``strict``.
        today: the date freezes expire against.
        ran: how many properties were run; items: how many tests pytest ran for them.
        phase_failures: a phase of the run that did not finish (a collection over its bound):
            the outcome is ``incomplete`` whatever the verdicts.
    """
    props = catalog.by_id()
    replays_of: dict[str, list[BaseSig]] = {}  # one pass, not one per property
    for r in replays:
        replays_of.setdefault(r.prop_id, []).append(r)
    verdicts = {
        prop.id: decide(
            runs[prop.id].run_result(prop) if prop.id in runs else None,
            oracle_edited=prop.id in oracle_edited,
            freezes=ledger.for_id(prop.id),
            replay=replays_of.get(prop.id, []),
            base_revision=base_revision, ancestors=ancestors,
            freeze_base=catalog.freeze_base, today=today, stale=prop.stale,
        )
        for prop in props.values()
    }
    claimed = {i: verdicts[i] for i in catalog.claimed}
    promotion = promote(claimed, catalog.claimed, policy)
    # Zero collected: nothing ran and nothing failed to import. A collection error is a
    # failure (blocked), not an empty run.
    nothing_ran = bool(ran) and items == 0 and not any(r.status != "skipped" for r in runs.values())
    incomplete = any(v.reason in INCOMPLETE_REASONS for v in claimed.values()) or nothing_ran or bool(phase_failures)
    return Score(verdicts, promotion, outcome(incomplete=incomplete, promoted=promotion.promoted), nothing_ran)
