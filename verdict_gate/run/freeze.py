"""Freeze a reproduced failure: append a reviewed record to a ledger file (``verdict-gate freeze``).

The record itself is judged and built by the core (:func:`verdict_gate.core.ledger.judge_tries`,
:func:`~verdict_gate.core.ledger.add_freeze`); this edge gathers the replays' evidence (from a
``base.sig.json``, or by replaying the property now), reads the ledger and today's date, and writes the
ledger and its manifest entry (:func:`verdict_gate.pack.build.write_ledger`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verdict_gate.core.errors import GateError
from verdict_gate.core.ledger import EMPTY_LEDGER, Seen, add_freeze, answered, judge_tries, parse_date, parse_json
from verdict_gate.core.progress import Progress
from verdict_gate.host import schemas
from verdict_gate.host.files import parse_ledger, read_utf8
from verdict_gate.pack import PackOptions
from verdict_gate.pack.build import LedgerWrite, write_ledger
from verdict_gate.run.pipeline import today

DEFAULT_REPLAYS = 5  # replays `freeze --rev` runs: a flake that fails half the time shows twice in 5 with 81% chance


@dataclass
class Frozen:
    """What :func:`record` added: the judged replays, the files written, and warnings for the user."""

    seen: Seen
    written: LedgerWrite
    warnings: list[str] = field(default_factory=list)


def check_flags(reason: str, first_seen: str | None, expires_on: str | None) -> None:
    """The flags first: a bad flag is the flag's fault, never the ledger file's (and is found before a replay).

    Raises:
        GateError: an empty reason or a date that is not ``YYYY-MM-DD``.
    """
    if not reason.strip():
        raise GateError("--reason", repr(reason), "is empty; a freeze needs the reason a human wrote",
                        'say why the failure is known and forgiven, e.g. --reason "rounds half to even; ORD-17"')
    for flag, value in (("--first-seen", first_seen), ("--expires-on", expires_on)):
        if value is not None:
            parse_date(value, flag, repr(value))


def tries_from_file(base_sig_path: Path, prop_id: str, replays: int | None = None) -> list[dict[str, Any]]:
    """The tries of ``prop_id`` in a ``base.sig.json`` (``verdict-gate replay``, or a gate's evidence), in try order.

    Raises:
        GateError: the file is unreadable or invalid, has no replay of ``prop_id``, or fewer tries than ``replays``.
    """
    base_sig = parse_json(read_utf8(base_sig_path, "base.sig.json", "pass the file `verdict-gate replay --out` wrote"),
                          "base.sig.json", str(base_sig_path))
    schemas.check("base_sig", base_sig, str(base_sig_path))
    found = sorted((r for r in base_sig["replays"] if r["prop_id"] == prop_id), key=lambda r: r.get("try", 1))
    if not found:
        raise GateError("base.sig.json", str(base_sig_path), f"has no replay of {prop_id!r}",
                        f"replay it on the base revision first: verdict-gate replay … --only-id {prop_id}")
    if replays is not None and len(found) < replays:
        raise GateError("base.sig.json", str(base_sig_path),
                        f"holds {len(found)} tr{'y' if len(found) == 1 else 'ies'} of {prop_id!r}, fewer than "
                        f"--replays {replays}", f"replay it {replays} times (verdict-gate replay … --replays {replays} "
                        f"--only-id {prop_id}), or let freeze replay it: verdict-gate freeze --rev REV --pack P …")
    return found


def tries_by_replay(repo: Path, rev: str, pack_source: str, prop_id: str, replays: int, *,
                    options: PackOptions | None, progress: Progress,
                    notice: Callable[[str], None], kind: str | None = None) -> list[dict[str, Any]]:
    """Replay ``prop_id`` up to ``replays`` times on a detached worktree of ``rev``, stopping as soon as the tries
    decide the freeze (:func:`verdict_gate.core.ledger.answered`, for ``kind``); its tries, in order.

    Raises:
        GateError, VoidError: as :func:`verdict_gate.run.replay.replay_to_file`.
    """
    from verdict_gate.run.replay import replay_to_file

    doc = replay_to_file(repo, rev, pack_source, None, only=[prop_id], options=options, progress=progress,
                         notice=notice, tries=replays, until=lambda recs: answered([r.to_json() for r in recs], kind))
    return [r.to_json() for r in doc.replays]


def record(tries: list[dict[str, Any]], ledger_path: Path, *, reason: str, first_seen: str | None,
           expires_on: str | None, kind: str | None = None) -> Frozen:
    """Add a freeze of one property's ``tries`` to the ledger file and its manifest entry.

    ``kind``: ``None`` (from the tries: differing tries make it flaky), ``deterministic`` (refused when they
    differ) or ``flaky``.

    Raises:
        GateError: the tries cannot be frozen (:func:`judge_tries`), the ledger is invalid, or the record is
            (nothing is written then).
    """
    check_flags(reason, first_seen, expires_on)
    if ledger_path.exists():
        text = read_utf8(ledger_path, "freeze ledger", "pass the pack's freeze_ledger.json")
    elif ledger_path.parent.is_dir():
        text = EMPTY_LEDGER
    else:
        raise GateError("--ledger", str(ledger_path), "is in a directory that does not exist",
                        "pass the pack's freeze_ledger.json, e.g. oracle/freeze_ledger.json")
    seen_on = first_seen or today().isoformat()
    parse_ledger(text, str(ledger_path))  # the ledger as it is must load: its schema, dates and signatures
    judged = judge_tries(tries, kind=kind)
    new_text = add_freeze(text, str(ledger_path), tries, reason=reason, first_seen=seen_on, expires_on=expires_on,
                          kind=kind)
    parse_ledger(new_text, str(ledger_path))  # and so must the result
    warnings = []
    if len(tries) == 1:
        warnings.append("this freeze was recorded from 1 replay, which cannot tell a flaky failure from a "
                        f"deterministic one: replay it several times (verdict-gate freeze --rev REV --pack P, "
                        f"{DEFAULT_REPLAYS} replays by default) before you rely on it")
    if expires_on and expires_on < today().isoformat():
        warnings.append(f"--expires-on {expires_on} is in the past: this freeze will not apply")
    return Frozen(judged, write_ledger(ledger_path, new_text), warnings)


def freeze(base_sig_path: Path, prop_id: str, ledger_path: Path, *, reason: str, first_seen: str | None,
           expires_on: str | None, kind: str | None = None, replays: int | None = None) -> Frozen:
    """Add the freeze to the ledger file from a ``base.sig.json`` (the library form of
    ``verdict-gate freeze --base-sig``): every try of ``prop_id`` in it is the evidence.

    Raises:
        GateError: as :func:`tries_from_file` and :func:`record` (nothing is written then).
    """
    check_flags(reason, first_seen, expires_on)
    return record(tries_from_file(base_sig_path, prop_id, replays), ledger_path, reason=reason,
                  first_seen=first_seen, expires_on=expires_on, kind=kind)

