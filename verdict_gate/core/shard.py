"""Shards: one run's properties split over several machines, and the checks that put them back
together (docs/design.md §11, ``verdict-gate run --shard K/N`` and ``verdict-gate merge``). Pure.

A shard's share is stable: the catalog's properties in catalog order, dealt round-robin (the
property at 0-based position ``i`` goes to shard ``i % N + 1``), so every shard computes the same
split from the same pack without talking to the others, and a slow property and its neighbours
spread over the runners. Each shard writes partial evidence with a ``shard.json`` header
(``schemas/shard.schema.json``); the merge decides only from shards that saw the same head, base
revision, pack, fixture digest and run id and that cover every property exactly once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verdict_gate.core.errors import GateError
from verdict_gate.core.records import BaseSigRecord, RunsRecord

MAX_SHARDS = 256  # a GitHub Actions matrix runs at most 256 jobs
_SPEC = re.compile(r"([0-9]{1,3})/([0-9]{1,3})")


@dataclass(frozen=True)
class ShardSpec:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, what: str = "--shard") -> ShardSpec:
    """``"K/N"`` → :class:`ShardSpec` (1 ≤ K ≤ N ≤ 256); ``what`` names the flag or input in messages.

    Raises:
        GateError: anything else (exit 2), with the fix.
    """
    m = _SPEC.fullmatch(text.strip())
    if m:
        index, count = int(m.group(1)), int(m.group(2))
        if 1 <= index <= count <= MAX_SHARDS:
            return ShardSpec(index, count)
    raise GateError(what, repr(text), f"is not K/N with 1 ≤ K ≤ N ≤ {MAX_SHARDS}",
                    "pass the matrix index and size, e.g. --shard 1/3 … --shard 3/3 "
                    "(in a workflow: --shard ${{ matrix.shard }}/${{ strategy.job-total }})")


def share(ids: Sequence[str], spec: ShardSpec) -> list[str]:
    """The ids of shard ``spec`` among ``ids`` (catalog order), in catalog order."""
    return list(ids[spec.index - 1::spec.count])


# What every shard of one run must agree on, with the words a message uses for it.
AGREED = (("head_revision", "head revision"), ("base_revision", "base revision"),
          ("pack_sha256", "pack sha256"), ("fixture_digest", "fixture digest"), ("run_id", "run id"),
          ("count", "shard count"))


def problems(headers: Sequence[tuple[str, Mapping[str, Any]]], expected: Mapping[str, Any],
             ids: Sequence[str]) -> list[str]:
    """Why these shards cannot be merged into one decision; ``[]`` when they can.

    Args:
        headers: ``(directory, shard.json document)`` per shard directory given, in the order given.
        expected: what the merge itself resolved: ``head_revision``, ``base_revision``,
            ``pack_sha256`` (the pack it verified), and ``count`` (the first shard's, when not known).
        ids: the property ids the run had to cover (catalog order, minus properties whose oracle
            the diff edits).
    Returns:
        one line per problem: a field on which a shard disagrees (naming both values), a shard
        index given twice or missing, a property covered twice, missing, or not in the catalog.
    """
    out: list[str] = []
    if not headers:
        return ["no shard was given"]

    def label(where: str, head: Mapping[str, Any]) -> str:
        return f"shard {head.get('index')}/{head.get('count')} ({where})"

    first_where, first = headers[0]
    for key, words in AGREED:
        want = expected.get(key, first.get(key))
        for where, head in headers:
            if head.get(key) != want:
                source = "this merge" if key in expected else label(first_where, first)
                out.append(f"{label(where, head)}: {words} {str(head.get(key))[:64]!r} differs from {source}'s "
                           f"{str(want)[:64]!r}")
    count = int(expected.get("count", first.get("count", 0)) or 0)
    seen: dict[Any, int] = {}  # shard index → position of its first directory in ``headers``
    for position, (where, head) in enumerate(headers):
        index = head.get("index")
        if index in seen:
            out.append(f"shard {index}/{count} was given twice: {headers[seen[index]][0]} and {where}")
        elif not isinstance(index, int) or not 1 <= index <= count:
            out.append(f"{label(where, head)}: shard index {index} is outside 1..{count}")
        else:
            seen[index] = position
    for index in range(1, count + 1):
        if index not in seen:
            out.append(f"shard {index}/{count} is missing: its properties have no run")
    covered: dict[str, str] = {}
    wanted = set(ids)
    for position, (where, head) in enumerate(headers):
        if seen.get(head.get("index")) != position:
            continue  # a shard given twice: its properties are counted once, and the duplicate named above
        for pid in head.get("properties", []):
            if pid in covered:
                out.append(f"{label(where, head)}: property {pid} is also covered by {covered[pid]}")
            covered.setdefault(pid, label(where, head))
            if pid not in wanted:
                out.append(f"{label(where, head)}: property {pid} is not one this run scores (not in the catalog, "
                           "or its oracle is edited)")
    if count and len(seen) == count:  # with a shard missing, its properties are already named above
        missing = [pid for pid in ids if pid not in covered]
        if missing:
            out.append(f"{len(missing)} propert{'y is' if len(missing) == 1 else 'ies are'} covered by no shard: "
                       + ", ".join(missing[:10]) + (" …" if len(missing) > 10 else ""))
    return out


def merge_why(problems: Sequence[str]) -> str:
    """Why a merge of shards is ``incomplete``: its first problem, and how many more."""
    more = f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})" if len(problems) > 1 else ""
    return f"the shards cannot be merged into one decision: {problems[0]}{more}"


def inconsistencies(label: str, header: Mapping[str, Any], ids: Sequence[str], runs: RunsRecord | None,
                    base_sig: BaseSigRecord | None, fixture: Mapping[str, Any] | None) -> list[str]:
    """Where one shard's files disagree with its own ``shard.json`` ``header``: each file must describe the same
    head, base revision, run id and fixtures, and the share must be the one its index names among ``ids`` (the
    properties the run scores, catalog order). ``label`` names the shard in each line; ``[]`` when they agree."""
    h = header
    out: list[str] = []
    want = share(list(ids), ShardSpec(h["index"], h["count"])) if 1 <= h["index"] <= h["count"] else None
    if want is not None and list(h["properties"]) != want:
        out.append(f"{label}: shard.json lists other properties than shard {h['index']}/{h['count']} "
                   "runs (catalog positions K, K+N, …)")
    if runs is None or base_sig is None or fixture is None:
        return out
    for what, _file, _where, got, wanted in agreement(runs, base_sig, fixture, head=h["head_revision"],
                                                      base=h["base_revision"], run_id=h["run_id"],
                                                      fixture_digest=h["fixture_digest"]):
        out.append(f"{label}: {what} {str(got)[:64]!r} differs from its shard.json's {str(wanted)[:64]!r}")
    return out


def agreement(runs: RunsRecord, base_sig: BaseSigRecord, fixture: Mapping[str, Any], *, head: str, base: str,
              run_id: str, fixture_digest: str | None) -> list[tuple[str, str, str, Any, Any]]:
    """What must agree across one run's evidence files: ``(what, file, JSON path, recorded, wanted)`` for the
    runs' revisions, run id and fixture digests, the fixture record's digest, and the base replay's revisions
    and fixture digests (each try's equal to the replay's). The caller keeps those where recorded ≠ wanted."""
    checks: list[tuple[str, str, str, Any, Any]] = [
        ("runs.json revision", "runs.json", "$.revision", runs.revision, head),
        ("runs.json base_revision", "runs.json", "$.base_revision", runs.base_revision, base),
        ("runs.json run_id", "runs.json", "$.run_id", runs.run_id, run_id),
        ("runs.json fixture_digest", "runs.json", "$.fixture_digest", runs.fixture_digest, fixture_digest),
        ("fixture.digest digest", "fixture.digest", "$.digest", fixture.get("digest"), fixture_digest),
        ("base.sig.json base_revision", "base.sig.json", "$.base_revision", base_sig.base_revision, base)]
    for pid, rec in runs.runs.items():
        at = f"$.runs[{json.dumps(pid)}]"
        checks += [(f"runs.json {pid} fixture_digest", "runs.json", f"{at}.fixture_digest", rec.fixture_digest,
                    fixture_digest),
                   (f"runs.json {pid} base_revision", "runs.json", f"{at}.base_revision", rec.base_revision, base)]
    for i, rep in enumerate(base_sig.replays):
        checks += [(f"base.sig.json {rep.prop_id} fixture_digest", "base.sig.json", f"$.replays[{i}].fixture_digest",
                    rep.fixture_digest, base_sig.fixture_digest),
                   (f"base.sig.json {rep.prop_id} base_revision", "base.sig.json", f"$.replays[{i}].base_revision",
                    rep.base_revision, base)]
    return [c for c in checks if c[3] != c[4]]
