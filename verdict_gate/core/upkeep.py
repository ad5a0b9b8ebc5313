"""Keeping a ledger: find a freeze by its id, list, remove, extend, prune, and the expiry warnings
(``verdict-gate ledger``, the job summary). Pure: texts and records in, texts and records out.

A freeze is named by its id (:attr:`verdict_gate.core.verdict.Freeze.id`: 12 hex digits of its identity,
shown by ``ledger list``), any unique prefix of at least 6 of them, or the property id when the property
has one freeze. Every edit returns the whole new ledger text, checked by :func:`ledger_from`.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verdict_gate.core.errors import GateError
from verdict_gate.core.ledger import Ledger, ledger_from, ledger_text
from verdict_gate.core.verdict import BaseSig, Freeze, miss_chance

EXPIRY_WARNING_DAYS = 14  # the summary warns about freezes that expire within this many days of the run's date
PRUNE_CONFIDENCE = 0.99  # prune drops a flaky freeze once its tries would have shown it this often


def find(ledger: Ledger, key: str) -> Freeze:
    """The one freeze ``key`` names: its id, a unique prefix of it (6 hex digits or more), or a property id
    with one freeze.

    Raises:
        GateError: no freeze, or several, answer to ``key`` (the message lists them).
    """
    key = key.strip()
    by_prop = [f for f in ledger.freezes if f.prop_id == key]
    hits = by_prop or ([f for f in ledger.freezes if f.id.startswith(key.lower())] if len(key) >= 6 else [])
    if len(hits) == 1:
        return hits[0]
    listing = "; ".join(f"{f.id} ({f.prop_id}, {f.kind})" for f in (hits or ledger.freezes)[:10])
    if not hits:
        raise GateError("freeze id", key, f"names no freeze in {ledger.source}",
                        f"use an id `verdict-gate ledger list` shows ({listing or 'the ledger is empty'})")
    raise GateError("freeze id", key, f"names {len(hits)} freezes in {ledger.source}",
                    f"give one freeze id: {listing}")


def row(freeze: Freeze, today: dt.date) -> dict[str, Any]:
    """What ``ledger list`` shows of one freeze (its JSON form): id, property, kind and rate, dates, age in
    days, days until expiry (negative once expired, ``None`` without an expiry date), last seen, reason."""
    return {
        "id": freeze.id, "prop_id": freeze.prop_id, "kind": freeze.kind,
        "rate": {"failed": freeze.rate[0], "replays": freeze.rate[1]} if freeze.rate else None,
        "failures": len(freeze.failure_set()), "signature": freeze.signature,
        "first_seen": freeze.first_seen.isoformat(), "age_days": (today - freeze.first_seen).days,
        "last_seen": (freeze.last_seen or freeze.first_seen).isoformat(),
        "expires_on": freeze.expires_on.isoformat() if freeze.expires_on else None,
        "expires_in_days": (freeze.expires_on - today).days if freeze.expires_on else None,
        "base_revision": freeze.base_revision, "fixture_digest": freeze.fixture_digest, "reason": freeze.reason,
    }


def expiring(freezes: Sequence[Freeze], today: dt.date, within: int = EXPIRY_WARNING_DAYS) -> list[tuple[Freeze, int]]:
    """The freezes that expire between ``today`` and ``within`` days after it (inclusive), with the days left,
    soonest first."""
    soon = [(f, (f.expires_on - today).days) for f in freezes if f.expires_on is not None]
    return sorted([(f, d) for f, d in soon if 0 <= d <= within], key=lambda fd: (fd[1], fd[0].prop_id, fd[0].id))


def expiry_notice(freeze: Freeze, days: int) -> str:
    """The summary's warning about one freeze that expires soon, with the commands that deal with it."""
    assert freeze.expires_on is not None
    when = "today" if days == 0 else f"in {days} day{'s' if days != 1 else ''}"
    return (f"freeze {freeze.id} of {freeze.prop_id} ({freeze.kind_label()}) expires on "
            f"{freeze.expires_on.isoformat()} ({when}): fix the failure, or review the freeze and extend it "
            f"(verdict-gate ledger extend {freeze.id} --expires-on YYYY-MM-DD) through the oracle's review path")


def _edit(text: str, source: str, freeze: Freeze, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> str:
    """``text`` with the record of ``freeze`` replaced by ``change(record)`` (``None``: removed)."""
    doc = json.loads(text)
    out, found = [], False
    for record in doc["freezes"]:
        if (record["signature"], record["fixture_digest"], record["base_revision"]) == (
                freeze.signature, freeze.fixture_digest, freeze.base_revision):
            found = True
            new = change(dict(record))
            if new is not None:
                out.append(new)
        else:
            out.append(record)
    if not found:  # the caller found it in this very text: a mismatch is a bug, never a silent no-op
        raise ValueError(f"freeze {freeze.id} is not in the ledger text")
    doc["freezes"] = out
    new_text = ledger_text(doc)
    ledger_from(json.loads(new_text), source)
    return new_text


def remove(text: str, source: str, freeze: Freeze) -> str:
    """The ledger ``text`` without ``freeze``."""
    return _edit(text, source, freeze, lambda record: None)


def extend(text: str, source: str, freeze: Freeze, expires_on: dt.date, today: dt.date) -> str:
    """The ledger ``text`` with ``freeze`` expiring on ``expires_on``.

    Raises:
        GateError: ``expires_on`` is before ``today`` or before the freeze was first seen.
    """
    if expires_on < today:
        raise GateError("--expires-on", expires_on.isoformat(), f"is before today ({today.isoformat()})",
                        "extend a freeze to a day that has not passed, e.g. 30 days from now")
    if expires_on < freeze.first_seen:
        raise GateError("--expires-on", expires_on.isoformat(),
                        f"is before the freeze was first seen ({freeze.first_seen.isoformat()})",
                        "give a later expiry date")
    return _edit(text, source, freeze, lambda record: {**record, "expires_on": expires_on.isoformat()})


@dataclass(frozen=True)
class Pruning:
    """What a replay's evidence says about one freeze: ``remove`` it (its failures no longer show), or keep
    it; ``seen``: one of its failures showed (its ``last_seen`` becomes the evidence's day)."""

    freeze: Freeze
    remove: bool
    seen: bool
    why: str


def tries_needed(rate: tuple[int, int] | None, confidence: float = PRUNE_CONFIDENCE) -> int:
    """How many tries show a flake that failed ``rate`` = (k, n) replays with ``confidence``."""
    if not rate or rate[0] >= rate[1]:
        return 1
    return math.ceil(math.log(1 - confidence) / math.log(1 - rate[0] / rate[1]))


def prune_plan(ledger: Ledger, tries: Sequence[BaseSig], contains: Mapping[str, bool]) -> list[Pruning]:
    """Judge every freeze of ``ledger`` by the base replay ``tries`` (one revision's ``base.sig.json``).

    Args:
        tries: every try of the evidence.
        contains: freeze base revision → whether the evidence's revision contains it (is a descendant of, or
            equal to, it); a freeze whose base the evidence does not contain is kept (it says nothing of it).
    Returns:
        one :class:`Pruning` per freeze, in ledger order. A freeze is removed only when the evidence ran its
        property under its fixture digest and none of its failures showed: in one try or more for a
        deterministic freeze; for a flaky one, in enough tries that a flake at its recorded rate would have
        shown with :data:`PRUNE_CONFIDENCE` (:func:`tries_needed`).
    """
    out = []
    for f in ledger.freezes:
        mine = [t for t in tries if t.prop_id == f.prop_id]
        comparable = [t for t in mine if t.fixture_digest == f.fixture_digest and t.status != "missing"]
        if not mine:
            out.append(Pruning(f, False, False, "kept: the evidence has no replay of its property"))
        elif not comparable:
            out.append(Pruning(f, False, False, "kept: the evidence replayed it under other fixtures (or produced "
                                                "no result), so it says nothing of this freeze"))
        elif not contains.get(f.base_revision, False):
            out.append(Pruning(f, False, False, f"kept: the evidence's revision does not contain the freeze's base "
                                                f"revision {f.base_revision[:12]}"))
        elif any(t.failure_set() & f.names() for t in comparable):
            shown = sum(1 for t in comparable if t.failure_set() & f.names())
            out.append(Pruning(f, False, True, f"kept: its failures showed in {shown} of {len(comparable)} "
                                               f"tr{'y' if len(comparable) == 1 else 'ies'}"))
        elif not f.flaky:
            out.append(Pruning(f, True, False, f"removed: its failures showed in none of {len(comparable)} "
                                               f"tr{'y' if len(comparable) == 1 else 'ies'}"))
        else:
            need = tries_needed(f.rate)
            chance = miss_chance(f.rate, len(comparable))
            if len(comparable) >= need:
                out.append(Pruning(f, True, False, f"removed: its failures showed in none of {len(comparable)} tries "
                                                   f"(a flake that failed {f.rate[0] if f.rate else '?'} of "
                                                   f"{f.rate[1] if f.rate else '?'} replays would have shown in "
                                                   f"{1 - (chance or 0):.1%} of such runs)"))
            else:
                out.append(Pruning(f, False, False, f"kept: flaky, and {len(comparable)} "
                                                    f"tr{'y' if len(comparable) == 1 else 'ies'} without its "
                                                    f"failures is not enough to tell (a flake at its rate shows in "
                                                    f"{need} tries {PRUNE_CONFIDENCE:.0%} of the time: replay "
                                                    f"with --replays {need})"))
    return out


def prune(text: str, source: str, plan: Sequence[Pruning], today: dt.date) -> str:
    """The ledger ``text`` without the freezes ``plan`` removes, and with ``last_seen`` set to ``today`` on
    the ones whose failures showed (never moved back, never before ``first_seen``)."""
    for p in plan:
        if p.remove:
            text = remove(text, source, p.freeze)
        elif p.seen and today >= max(p.freeze.last_seen or p.freeze.first_seen, p.freeze.first_seen):
            text = _edit(text, source, p.freeze, lambda record: {**record, "last_seen": today.isoformat()})
    return text
