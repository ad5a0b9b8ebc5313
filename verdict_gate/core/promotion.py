"""Promotion of the claimed set and the run outcome (docs/design.md, "Promotion"). Pure."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from verdict_gate.core.verdict import Verdict

Outcome = Literal["promoted", "blocked", "incomplete", "void"]


@dataclass(frozen=True)
class Promotion:
    """Whether the claimed set is promoted, and why not."""

    promoted: bool
    why: str


def promote(verdicts: Mapping[str, Verdict], claimed: Collection[str], policy: str = "lenient") -> Promotion:
    """Promotion rule (docs/design.md, "Promotion").

    Args:
        verdicts: id → verdict for the ids the gate scored among the claims.
        claimed: the claimed ids.
        policy: ``"lenient"`` (no fail, at least one pass) or ``"strict"`` (every claim passes).
    """
    claims = set(claimed)
    if not claims:
        return Promotion(False, "the claimed set is empty")
    if set(verdicts) != claims:
        missing = sorted(claims - set(verdicts))
        extra = sorted(set(verdicts) - claims)
        return Promotion(False, f"verdict ids differ from the claims (missing {missing}, extra {extra})")
    values = [v.verdict for v in verdicts.values()]
    if "fail" in values:
        fails = values.count("fail")
        return Promotion(False, f"{fails} claimed propert{'y' if fails == 1 else 'ies'} failed")
    if policy == "strict" and any(v != "pass" for v in values):
        return Promotion(False, "policy strict: every claimed property must pass")
    if "pass" not in values:
        return Promotion(False, "no claimed property passed (all inconclusive)")
    return Promotion(True, "every claimed property held or is a reproduced known failure")


def outcome(*, incomplete: bool, promoted: bool) -> Outcome:
    """Outcome of a scored run: ``incomplete`` > ``blocked`` > ``promoted``.

    ``void`` outranks all three but is never computed here: a void run stops before scoring,
    and the pipeline records it explicitly (:meth:`verdict_gate.core.evidence.Evidence.void`).
    """
    if incomplete:
        return "incomplete"
    return "promoted" if promoted else "blocked"
