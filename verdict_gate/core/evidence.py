"""The evidence of one gate run, as data (docs/design.md, "Files"). Pure.

The pipeline fills an :class:`Evidence` step by step; :mod:`verdict_gate.report` renders it
and its writer writes the files once. A run that stops early is ``void`` only when
:meth:`Evidence.void` says so: a fresh record has no outcome, and the writer refuses one.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from verdict_gate.core.catalog import Property
from verdict_gate.core.ledger import Ledger
from verdict_gate.core.promotion import Outcome
from verdict_gate.core.records import BaseSigRecord, DiffRecord, FixtureRecord, RunRecord, RunsRecord
from verdict_gate.core.verdict import Verdict


@dataclass
class Evidence:
    """Everything one gate run produced; the report renders it, the writer writes it once."""

    repo: str
    head_revision: str = ""
    base_ref: str = ""
    base_revision: str = ""
    pack: dict[str, Any] = field(default_factory=dict)
    policy: str = "lenient"
    freeze_base: str = "reproduced"
    fixture: FixtureRecord | None = None  # fixture.digest
    diff: DiffRecord | None = None  # oracle_edited.json
    base_sig: BaseSigRecord | None = None
    runs: RunsRecord | None = None
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    claimed: tuple[str, ...] = ()
    properties: dict[str, Property] = field(default_factory=dict)
    outcome: Outcome | None = None
    why: str = ""
    void_reason: str = ""
    notices: list[str] = field(default_factory=list)
    run_id: str = ""  # with the head revision, derives every fresh seed (docs/design.md §8.3)
    shard: dict[str, Any] | None = None  # a shard's share and counts (``shard.json``); None for a whole run
    # What the decision read besides the other evidence files (docs/design.md §9.1), so that `verdict-gate audit`
    # can re-derive it from the evidence alone: the pack's control files as read (name → text), the ledger as
    # scored (freezes recorded under tree-v1 carrying this run's tree-v2 digest), the date freezes expired
    # against, each freeze base revision → whether it is an ancestor of the base revision, the tests pytest ran,
    # the planned properties the runner reported nothing for, the phases that did not finish, and the problems
    # that kept a merge of shards from one decision.
    oracle_files: dict[str, str] = field(default_factory=dict)
    ledger: Ledger | None = None
    today: dt.date | None = None
    ancestors: dict[str, bool] = field(default_factory=dict)
    items: int = 0
    unreported: list[str] = field(default_factory=list)
    phase_failures: list[str] = field(default_factory=list)
    merge_problems: list[str] = field(default_factory=list)

    @property
    def promoted(self) -> bool:
        return self.outcome == "promoted"

    def void(self, reason: str) -> Evidence:
        """Mark the run ``void`` (the oracle cannot be trusted for it) with ``reason``; returns self."""
        self.outcome = "void"
        self.void_reason = reason
        return self

    def run_of(self, prop_id: str) -> RunRecord | None:
        """The candidate run of ``prop_id``, if it has one."""
        return self.runs.runs.get(prop_id) if self.runs is not None else None
