"""``freeze_ledger.json``: human-reviewed freezes (docs/design.md, "Files"). Pure."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from verdict_gate.core.digest import FORMAT
from verdict_gate.core.errors import GateError, VoidError
from verdict_gate.core.signature import set_signature, signature_of
from verdict_gate.core.verdict import NEVER_REACHED, FailureRef, Freeze, oracle_fix

# A pack without a ledger has no freezes yet (a new oracle): nothing can be forgiven.
EMPTY_LEDGER = '{"version": 1, "freezes": []}'
LEDGER_MAX_BYTES = 32 * 1024 * 1024  # refused before it is parsed: 10,000 freezes are about 10 MB
DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # fullmatch: YYYY-MM-DD and nothing else


def parse_date(value: str, what: str, where: str, error: type[GateError] = GateError) -> dt.date:
    """``value`` as a calendar date written ``YYYY-MM-DD`` (``fromisoformat`` alone also takes
    ``2026-W01-1`` and ``20260101``).

    Raises:
        ``error``: ``value`` is not ``YYYY-MM-DD`` or not a real day.
    """
    if not isinstance(value, str) or not DATE_RE.fullmatch(value):
        raise error(what, where, f"{value!r} is not a date written YYYY-MM-DD",
                    "write the date as YYYY-MM-DD, e.g. 2026-12-31")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise error(what, where, f"{value!r} is not a calendar date",
                    "write a real day as YYYY-MM-DD, e.g. 2026-12-31") from None


@dataclass(frozen=True)
class Ledger:
    """The validated freezes, in file order."""

    source: str
    freezes: tuple[Freeze, ...]

    def for_id(self, prop_id: str) -> tuple[Freeze, ...]:
        return self._by_id.get(prop_id, ())

    @cached_property
    def _by_id(self) -> dict[str, tuple[Freeze, ...]]:
        """The freezes by property id, in file order (one pass, not one per property)."""
        index: dict[str, list[Freeze]] = {}
        for f in self.freezes:
            index.setdefault(f.prop_id, []).append(f)
        return {k: tuple(v) for k, v in index.items()}

    def prop_ids(self) -> list[str]:
        return sorted({f.prop_id for f in self.freezes})


def parse_json(text: str, what: str, source: str, *, void: bool = False) -> Any:
    """``json.loads`` whose syntax error names the file, line and column."""
    error = VoidError if void else GateError

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):  # json keeps the last silently: a reviewer may have read the first
            keys = [k for k, _ in pairs]
            dupes = sorted({k for k in keys if keys.count(k) > 1})
            raise error(what, source, f"repeats the key(s) {dupes} in one object", "keep one of each key")
        return out

    def finite_only(name: str) -> Any:
        raise error(what, source, f"holds the non-finite number {name}", "write a finite number (JSON has no NaN)")

    try:
        return json.loads(text, object_pairs_hook=unique, parse_constant=finite_only)
    except json.JSONDecodeError as exc:
        raise error(what, f"{source}:{exc.lineno}:{exc.colno}", f"is not valid JSON ({exc.msg})",
                    "fix the JSON syntax at that line") from None
    except RecursionError:
        raise error(what, source, "nests too deeply to read", "this is not a verdict-gate file") from None


def _date(value: str, where: str, error: type[GateError]) -> dt.date:
    return parse_date(value, "freeze ledger", where, error)


def check_size(text: str, source: str, *, void: bool = False) -> None:
    """Refuse a ledger text over :data:`LEDGER_MAX_BYTES` before it is parsed.

    Raises:
        GateError | VoidError: it is larger.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > LEDGER_MAX_BYTES:
        raise (VoidError if void else GateError)(
            "freeze ledger", source, f"is {size:,} bytes, over the {LEDGER_MAX_BYTES:,}-byte limit",
            "remove expired and stale freezes (a ledger of 10,000 freezes is about 10 MB)")


def ledger_from(data: Any, source: str, *, known_ids: Iterable[str] | None = None, void: bool = False) -> Ledger:
    """The :class:`Ledger` of a parsed ``freeze_ledger.json`` that its schema accepted (reading and
    checking it is the edge's: :func:`verdict_gate.host.files.parse_ledger`).

    Args:
        data: the document (:func:`parse_json`), valid against ``schemas/freeze_ledger.schema.json``.
        source: where it was read, for messages.
        known_ids: catalog ids; a freeze for another id is an error (it could never apply).
        void: raise :class:`VoidError` (exit 3) instead of :class:`GateError` (exit 2).
    Raises:
        GateError | VoidError: impossible dates, a ``signature`` that is not the hash of its
            ``signature_parts``, or a parts ``prop_id`` that differs from the record's.
    """
    error = VoidError if void else GateError
    known = set(known_ids) if known_ids is not None else None
    freezes = []
    identities: dict[tuple[str, str, str], int] = {}
    for i, raw in enumerate(data["freezes"]):
        where = f"{source} $.freezes[{i}]"
        identity = (raw["signature"], raw["fixture_digest"], raw["base_revision"])
        if identity in identities:  # `freeze` refuses to add one; a hand edit must not slip one in
            raise error("freeze ledger", where, f"freezes the same failure of {raw['prop_id']!r} as "
                        f"$.freezes[{identities[identity]}] (same signature, fixture digest and base revision)",
                        "keep one record per failure: delete the duplicate")
        identities[identity] = i
        # A record freezes a failure set; one written before failure sets (one signature) is a set of one.
        listed = raw.get("failures") or [{"signature": raw["signature"], "signature_parts": raw["signature_parts"]}]
        for j, failure in enumerate(listed):
            at = f"{where}.failures[{j}]" if "failures" in raw else where
            if signature_of(failure["signature_parts"]) != failure["signature"]:
                raise error("freeze ledger", f"{at}.signature", "is not the sha256 of its signature_parts",
                            "copy signature and signature_parts together from the base replay's base.sig.json")
            if failure["signature_parts"]["prop_id"] != raw["prop_id"]:
                raise error("freeze ledger", f"{where}.prop_id", "differs from signature_parts.prop_id",
                            "a freeze forgives a failure of its own property only")
        if set_signature(f["signature"] for f in listed) != raw["signature"]:
            raise error("freeze ledger", f"{where}.signature", "is not the sha256 of the sorted failure set",
                        "copy the record from `verdict-gate freeze` (it writes signature and failures together)")
        if len({f["signature"] for f in listed}) != len(listed):
            raise error("freeze ledger", f"{where}.failures", "names one failure twice", "keep one of each")
        if known is not None and raw["prop_id"] not in known:
            raise error("freeze ledger", f"{where}.prop_id", f"{raw['prop_id']!r} is not a catalog property",
                        "remove the freeze or add the property to the catalog")
        kind = raw.get("kind", "deterministic")
        rate = (raw["rate"]["failed"], raw["rate"]["replays"]) if "rate" in raw else None
        if rate is not None and rate[0] > rate[1]:
            raise error("freeze ledger", f"{where}.rate", f"says it failed {rate[0]} of {rate[1]} replays",
                        "failed counts replays, so it is at most replays")
        if kind == "deterministic" and rate is not None and rate[0] != rate[1]:
            raise error("freeze ledger", f"{where}.kind", f"is deterministic, but its failures showed on {rate[0]} "
                        f"of {rate[1]} replays only", "a failure that shows on some replays only is flaky: "
                        "record it with `verdict-gate freeze` (it decides the kind from the replays)")
        first = _date(raw["first_seen"], f"{where}.first_seen", error)
        last = _date(raw["last_seen"], f"{where}.last_seen", error) if "last_seen" in raw else None
        if last is not None and last < first:
            raise error("freeze ledger", f"{where}.last_seen", f"{raw['last_seen']} is before first_seen "
                        f"{raw['first_seen']}", "last_seen is the last day a replay showed the failure")
        freezes.append(Freeze(
            prop_id=raw["prop_id"],
            signature=raw["signature"],
            signature_parts=raw.get("signature_parts") or listed[0]["signature_parts"],
            fixture_digest=raw["fixture_digest"],
            base_revision=raw["base_revision"],
            reason=raw["reason"].strip(),
            first_seen=first,
            expires_on=_date(raw["expires_on"], f"{where}.expires_on", error) if "expires_on" in raw else None,
            failures=tuple(FailureRef(f["signature"], f["signature_parts"]) for f in listed),
            fixture_format=raw.get("fixture_format"),
            kind=kind, rate=rate, last_seen=last,
        ))
    return Ledger(source=source, freezes=tuple(freezes))


def ledger_text(doc: Any) -> str:
    """The ``freeze_ledger.json`` text of ``doc``: sorted keys, two-space indent, final newline."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=True) + "\n"


# Failures that never reached the property's body: an error of pytest's collection or fixtures,
# or one the gate records for a lost process or an untrustworthy run.
NEVER_RAN = {
    "_pytest.fixtures.FixtureLookupError": "a pytest fixture the property asks for does not exist",
    "_pytest.nodes.Collector.CollectError": "the property's file could not be collected",
    "verdict_gate.Crash": "the property's process crashed",
    "verdict_gate.IsolationUnavailable": "the host could not give the isolation the catalog asks for",
    "verdict_gate.WorkerCrashed": "the candidate worker crashed",
    "verdict_gate.SettingsTampered": "Hypothesis's settings were replaced while the tests ran",
    "verdict_gate.DiscardedExample": "examples were discarded by code outside the oracle",
}


def unfreezable(replay: Mapping[str, Any]) -> str:
    """Why the failure set of one base replay (a ``base.sig.json`` entry) cannot be frozen, or ``""``:
    a failure that never reached the property's body (collection or import error, a missing pytest
    fixture, zero hits) is not a known behaviour of the code, only a broken run (docs/design.md §3); nor is one
    the isolation boundary caused (its signature's ``origin`` is ``boundary``, §8.1)."""
    for failure in replay.get("failures") or [replay]:
        exc_type = (failure.get("signature_parts") or {}).get("exc_type") or failure.get("exc_type") or ""
        if exc_type in NEVER_RAN:
            return f"{NEVER_RAN[exc_type]} ({exc_type} in {failure.get('node') or replay['prop_id']})"
        if (failure.get("signature_parts") or {}).get("origin") == "boundary":
            # The isolation boundary's failure, not the code's: freezing it would forbid the real fix for as
            # long as the freeze lives (docs/design.md §8.1).
            return (f"it failed because of the isolation boundary, not the code ({exc_type} in "
                    f"{failure.get('node') or replay['prop_id']}); set `isolation: none` for this property, or "
                    "change the line `verdict-gate check` names")
    if replay.get("hits") == 0:
        return ("no example reached the property's body (zero hits): an import or collection error, "
                "or a missing pytest fixture")
    return ""


def _never_ran_fix(replay: Mapping[str, Any]) -> str:
    """For a replay that never reached the property's body because of the pack (a fixture it lacks, an import or
    collection error at its own line): the pack's line and what to do (:func:`verdict_gate.core.verdict.oracle_fix`);
    else ``""``."""
    for failure in replay.get("failures") or [replay]:
        parts = failure.get("signature_parts") or {}
        exc_type = parts.get("exc_type") or failure.get("exc_type") or ""
        if exc_type in NEVER_REACHED or replay.get("hits") == 0:
            where = f"the pack's {parts['site']}: " if parts.get("site") else ""
            return f"{where}the property cannot run, so there is nothing to freeze: {oracle_fix(exc_type)}"
    return ""


@dataclass(frozen=True)
class Seen:
    """What the base replays of one property showed, judged for a freeze (:func:`judge_tries`).

    ``kind``: ``deterministic`` (every try failed with the same failure set) or ``flaky`` (the tries differed:
    some passed, or their failure sets differ); ``failed`` of ``replays`` tries failed; ``failures``: the
    union of the failures seen, each ``{"signature", "signature_parts"}``, sorted by signature.
    """

    prop_id: str
    kind: str
    failed: int
    replays: int
    failures: tuple[Mapping[str, Any], ...]
    fixture_digest: str
    base_revision: str

    @property
    def signature(self) -> str:
        """The set signature of :attr:`failures` (never empty: :func:`judge_tries` refuses a set without failures)."""
        return set_signature(f["signature"] for f in self.failures) or ""


def _refuse(prop_id: str, problem: str, fix: str) -> GateError:
    return GateError("base replay", f"the replays of {prop_id!r}", problem, fix)


def answered(tries: Sequence[Mapping[str, Any]], kind: str | None = None) -> bool:
    """Whether the replays so far (``base.sig.json`` entries of one property, in try order) already decide what
    ``verdict-gate freeze`` does, so it replays no more (docs/design.md §3, "Flaky freezes"): a try that never
    reached the property's body or produced no result (refused whatever follows), tries that differ under
    ``kind`` ``deterministic`` (refused), or a first try that passed, unless ``kind`` is ``flaky`` (refused: a
    passing property needs no freeze; a flake the user knows of is replayed in full with ``--kind flaky``)."""
    if not tries:
        return False
    last = tries[-1]
    if unfreezable(last) or last["status"] == "missing":
        return True
    sets = {frozenset(f["signature"] for f in (t.get("failures") or ([t] if t["signature"] else []))) for t in tries}
    if kind == "deterministic" and len(sets) > 1:
        return True
    return kind != "flaky" and len(tries) == 1 and sets == {frozenset()}


def judge_tries(tries: Sequence[Mapping[str, Any]], *, kind: str | None = None) -> Seen:
    """Judge the base replay tries of one property (``base.sig.json`` entries, in try order) for a freeze.

    Args:
        tries: one or more entries of the same property.
        kind: ``None`` (decided by the tries), ``deterministic`` (refused when the tries differ) or
            ``flaky`` (recorded flaky even when every try failed alike).
    Raises:
        GateError: no tries; a try that never reached the property's body or produced no result; tries
            from different revisions or fixtures; no try failed; or ``kind`` deterministic while they differ.
    """
    if not tries:
        raise GateError("base replay", "(no tries)", "holds no replay of the property", "replay it first")
    prop_id = tries[0]["prop_id"]
    fix = ("a freeze forgives a property that ran and failed; fix the pack or the environment so the property "
           "runs, then replay it again")
    for n, t in enumerate(tries, 1):
        why = unfreezable(t)
        at = f" (try {n} of {len(tries)})" if len(tries) > 1 else ""
        if why:
            raise GateError("base.sig.json", f"the replay of {prop_id!r}{at}", f"cannot be frozen: {why}",
                            _never_ran_fix(t) or fix)
        if t["status"] == "missing":
            raise _refuse(prop_id, f"try {n} produced no result, so the replays cannot say what fails", fix)
    places = {(t["base_revision"], t["fixture_digest"]) for t in tries}
    if len(places) > 1:
        raise _refuse(prop_id, "come from different base revisions or fixture digests",
                      "freeze from the replays of one revision: verdict-gate replay --rev REV --replays N")
    sets = [frozenset(f["signature"] for f in (t.get("failures") or ([t] if t["signature"] else [])))
            for t in tries]
    failed = sum(1 for s in sets if s)
    if not failed:
        t = tries[0]
        raise _refuse(prop_id, f"show {prop_id!r} {t['status']} on {t['base_revision'][:12]} in "
                      f"{'all ' if len(tries) > 1 else ''}{len(tries)} tr{'y' if len(tries) == 1 else 'ies'}: "
                      "there is no failure to freeze",
                      "freeze only a failure the base replay reproduced; a passing property needs no freeze. If it "
                      "fails only now and then (a flake), freeze it with --kind flaky: every replay runs and the "
                      "rate it fails at is recorded")
    differ = len(set(sets)) > 1
    if kind == "deterministic" and differ:
        shown = ", ".join(f"try {n}: {len(s)} failure(s)" if s else f"try {n}: passed" for n, s in enumerate(sets, 1))
        raise _refuse(prop_id, f"differ ({shown}): it failed {failed} of {len(tries)} replays, so it is flaky and "
                      "cannot be recorded as deterministic",
                      "drop --kind deterministic to record a flaky freeze (the union of the failures seen, "
                      "with its rate), or fix the flake")
    union: dict[str, Mapping[str, Any]] = {}
    for t in tries:
        for f in t.get("failures") or ([t] if t["signature"] else []):
            union.setdefault(f["signature"], {"signature": f["signature"], "signature_parts": f["signature_parts"]})
    return Seen(prop_id=prop_id, kind=kind or ("flaky" if differ else "deterministic"), failed=failed,
                replays=len(tries), failures=tuple(union[k] for k in sorted(union)),
                fixture_digest=tries[0]["fixture_digest"], base_revision=tries[0]["base_revision"])


def add_freeze(text: str, source: str, tries: Mapping[str, Any] | Sequence[Mapping[str, Any]], *, reason: str,
               first_seen: str, expires_on: str | None = None, kind: str | None = None) -> str:
    """The ledger ``text`` (one its schema accepted) with a freeze of one property's base replay tries
    (``base.sig.json`` entries; one entry is one try) appended; the caller checks the result against the
    schema too. The kind and failure set come from :func:`judge_tries`.

    Raises:
        GateError: as :func:`judge_tries`; it already freezes this failure set; the new record is invalid
            (empty reason, impossible date), or it expires before it was first seen.
    """
    seen = judge_tries([tries] if isinstance(tries, Mapping) else list(tries), kind=kind)
    doc = json.loads(text)
    for existing in doc["freezes"]:
        if (existing["signature"], existing["fixture_digest"], existing["base_revision"]) == (
                seen.signature, seen.fixture_digest, seen.base_revision):
            raise GateError("freeze ledger", source, f"already freezes this failure of {seen.prop_id!r}",
                            "nothing to add; edit that record's reason or expires_on instead")
    record = {"prop_id": seen.prop_id, "signature": seen.signature,
              "failures": [dict(f) for f in seen.failures], "fixture_digest": seen.fixture_digest,
              "fixture_format": FORMAT, "base_revision": seen.base_revision, "reason": reason,
              "first_seen": first_seen, "kind": seen.kind,
              "rate": {"failed": seen.failed, "replays": seen.replays}}
    if expires_on:
        record["expires_on"] = expires_on
    doc["freezes"].append(record)
    new_text = ledger_text(doc)
    ledger_from(json.loads(new_text), source)  # the result must load: reason non-empty, dates real
    if expires_on and expires_on < first_seen:
        raise GateError("--expires-on", expires_on, f"is before --first-seen {first_seen}",
                        "give an expiry date after the day the failure was first seen")
    return new_text
