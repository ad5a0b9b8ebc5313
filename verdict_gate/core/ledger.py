"""``freeze_ledger.json``: human-reviewed freezes (docs/design.md, "Files"). Pure."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from verdict_gate.core import validate
from verdict_gate.core.errors import GateError, VoidError
from verdict_gate.core.signature import signature_of
from verdict_gate.core.verdict import Freeze

# A pack without a ledger has no freezes yet (a new oracle): nothing can be forgiven.
EMPTY_LEDGER = '{"version": 1, "freezes": []}'


@dataclass(frozen=True)
class Ledger:
    """The validated freezes, in file order."""

    source: str
    freezes: tuple[Freeze, ...]

    def for_id(self, prop_id: str) -> tuple[Freeze, ...]:
        return tuple(f for f in self.freezes if f.prop_id == prop_id)

    def prop_ids(self) -> list[str]:
        return sorted({f.prop_id for f in self.freezes})


def parse_json(text: str, what: str, source: str, *, void: bool = False) -> Any:
    """``json.loads`` whose syntax error names the file, line and column."""
    error = VoidError if void else GateError

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:  # json keeps the last silently: a reviewer may have read the first
            raise error(what, source, f"repeats the key(s) {dupes} in one object", "keep one of each key")
        return dict(pairs)

    try:
        return json.loads(text, object_pairs_hook=unique)
    except json.JSONDecodeError as exc:
        raise error(what, f"{source}:{exc.lineno}:{exc.colno}", f"is not valid JSON ({exc.msg})",
                    "fix the JSON syntax at that line") from None
    except RecursionError:
        raise error(what, source, "nests too deeply to read", "this is not a verdict-gate file") from None


def _date(value: str, where: str, error: type[GateError]) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise error("freeze ledger", where, f"{value!r} is not a calendar date",
                    "write the date as YYYY-MM-DD, e.g. 2026-12-31") from None


def parse_ledger(text: str, source: str, *, known_ids: Iterable[str] | None = None, void: bool = False) -> Ledger:
    """Parse and validate ledger text.

    Args:
        text: the file's contents (JSON).
        source: where it was read, for messages.
        known_ids: catalog ids; a freeze for another id is an error (it could never apply).
        void: raise :class:`VoidError` (exit 3) instead of :class:`GateError` (exit 2).
    Raises:
        GateError | VoidError: on JSON syntax, schema violations, impossible dates, a
            ``signature`` that is not the hash of its ``signature_parts``, or a parts
            ``prop_id`` that differs from the record's.
    """
    error = VoidError if void else GateError
    data = parse_json(text, "freeze ledger", source, void=void)
    validate.check("freeze_ledger", data, source, void=void)
    known = set(known_ids) if known_ids is not None else None
    freezes = []
    for i, raw in enumerate(data["freezes"]):
        where = f"{source} $.freezes[{i}]"
        if signature_of(raw["signature_parts"]) != raw["signature"]:
            raise error("freeze ledger", f"{where}.signature", "is not the sha256 of its signature_parts",
                        "copy signature and signature_parts together from the base replay's base.sig.json")
        if raw["signature_parts"]["prop_id"] != raw["prop_id"]:
            raise error("freeze ledger", f"{where}.prop_id", "differs from signature_parts.prop_id",
                        "a freeze forgives a failure of its own property only")
        if known is not None and raw["prop_id"] not in known:
            raise error("freeze ledger", f"{where}.prop_id", f"{raw['prop_id']!r} is not a catalog property",
                        "remove the freeze or add the property to the catalog")
        freezes.append(Freeze(
            prop_id=raw["prop_id"],
            signature=raw["signature"],
            signature_parts=raw["signature_parts"],
            fixture_digest=raw["fixture_digest"],
            base_revision=raw["base_revision"],
            reason=raw["reason"].strip(),
            first_seen=_date(raw["first_seen"], f"{where}.first_seen", error),
            expires_on=_date(raw["expires_on"], f"{where}.expires_on", error) if "expires_on" in raw else None,
        ))
    return Ledger(source=source, freezes=tuple(freezes))


def ledger_text(doc: Any) -> str:
    """The ``freeze_ledger.json`` text of ``doc``: sorted keys, two-space indent, final newline."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=True) + "\n"


def add_freeze(text: str, source: str, replay: Mapping[str, Any], *, reason: str, first_seen: str,
               expires_on: str | None = None) -> str:
    """The ledger ``text`` with a freeze of one base replay (a ``base.sig.json`` entry) appended.

    Raises:
        GateError: ``text`` is not a valid ledger, it already freezes this failure, the new
            record is invalid (empty reason, impossible date), or it expires before it was first seen.
    """
    parse_ledger(text, source)
    doc = json.loads(text)
    for existing in doc["freezes"]:
        if (existing["signature"], existing["fixture_digest"], existing["base_revision"]) == (
                replay["signature"], replay["fixture_digest"], replay["base_revision"]):
            raise GateError("freeze ledger", source, f"already freezes this failure of {replay['prop_id']!r}",
                            "nothing to add; edit that record's reason or expires_on instead")
    record = {"prop_id": replay["prop_id"], "signature": replay["signature"],
              "signature_parts": replay["signature_parts"], "fixture_digest": replay["fixture_digest"],
              "base_revision": replay["base_revision"], "reason": reason, "first_seen": first_seen}
    if expires_on:
        record["expires_on"] = expires_on
    doc["freezes"].append(record)
    new_text = ledger_text(doc)
    parse_ledger(new_text, source)  # the result must load: reason non-empty, dates real
    if expires_on and expires_on < first_seen:
        raise GateError("--expires-on", expires_on, f"is before --first-seen {first_seen}",
                        "give an expiry date after the day the failure was first seen")
    return new_text
