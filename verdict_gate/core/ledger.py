"""``freeze_ledger.json``: human-reviewed freezes (docs/design.md, "Files"). Pure."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from verdict_gate.core.digest import FORMAT
from verdict_gate.core.errors import GateError, VoidError
from verdict_gate.core.signature import set_signature, signature_of
from verdict_gate.core.verdict import FailureRef, Freeze

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
        freezes.append(Freeze(
            prop_id=raw["prop_id"],
            signature=raw["signature"],
            signature_parts=raw.get("signature_parts") or listed[0]["signature_parts"],
            fixture_digest=raw["fixture_digest"],
            base_revision=raw["base_revision"],
            reason=raw["reason"].strip(),
            first_seen=_date(raw["first_seen"], f"{where}.first_seen", error),
            expires_on=_date(raw["expires_on"], f"{where}.expires_on", error) if "expires_on" in raw else None,
            failures=tuple(FailureRef(f["signature"], f["signature_parts"]) for f in listed),
            fixture_format=raw.get("fixture_format"),
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
    fixture, zero hits) is not a known behaviour of the code, only a broken run (docs/design.md §3)."""
    for failure in replay.get("failures") or [replay]:
        exc_type = (failure.get("signature_parts") or {}).get("exc_type") or failure.get("exc_type") or ""
        if exc_type in NEVER_RAN:
            return f"{NEVER_RAN[exc_type]} ({exc_type} in {failure.get('node') or replay['prop_id']})"
    if replay.get("hits") == 0:
        return ("no example reached the property's body (zero hits): an import or collection error, "
                "or a missing pytest fixture")
    return ""


def add_freeze(text: str, source: str, replay: Mapping[str, Any], *, reason: str, first_seen: str,
               expires_on: str | None = None) -> str:
    """The ledger ``text`` (one its schema accepted) with a freeze of one base replay (a ``base.sig.json``
    entry) appended; the caller checks the result against the schema too.

    Raises:
        GateError: it already freezes this failure, the new record is invalid (empty reason,
            impossible date), or it expires before it was first seen.
    """
    why = unfreezable(replay)
    if why:
        raise GateError("base.sig.json", f"the replay of {replay['prop_id']!r}", f"cannot be frozen: {why}",
                        "a freeze forgives a property that ran and failed; fix the pack or the environment "
                        "so the property runs, then replay it again")
    doc = json.loads(text)
    for existing in doc["freezes"]:
        if (existing["signature"], existing["fixture_digest"], existing["base_revision"]) == (
                replay["signature"], replay["fixture_digest"], replay["base_revision"]):
            raise GateError("freeze ledger", source, f"already freezes this failure of {replay['prop_id']!r}",
                            "nothing to add; edit that record's reason or expires_on instead")
    listed = replay.get("failures") or [replay]
    failures = sorted(({"signature": f["signature"], "signature_parts": f["signature_parts"]} for f in listed),
                      key=lambda f: f["signature"])
    record = {"prop_id": replay["prop_id"], "signature": set_signature(f["signature"] for f in failures),
              "failures": failures, "fixture_digest": replay["fixture_digest"], "fixture_format": FORMAT,
              "base_revision": replay["base_revision"], "reason": reason, "first_seen": first_seen}
    if expires_on:
        record["expires_on"] = expires_on
    doc["freezes"].append(record)
    new_text = ledger_text(doc)
    ledger_from(json.loads(new_text), source)  # the result must load: reason non-empty, dates real
    if expires_on and expires_on < first_seen:
        raise GateError("--expires-on", expires_on, f"is before --first-seen {first_seen}",
                        "give an expiry date after the day the failure was first seen")
    return new_text
