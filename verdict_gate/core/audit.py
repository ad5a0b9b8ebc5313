"""What ``verdict-gate audit`` checks that needs no file: differences, the inventory. Pure.

The audit (docs/design.md §9.1) reads an evidence directory, re-derives every file it can from the
others and compares. The comparisons live here: :func:`differences` between a recorded JSON document
and the one re-derived (each differing field one :class:`Finding`), and :func:`inventory`, which checks
that every planned property has a run or is announced as unreported, that every frozen property has its
base replay tries, numbered in order, and that nothing ran that was not planned (as Bazel's Build Event
Protocol announces every planned event, so a missing one is seen).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verdict_gate.core.catalog import Catalog
from verdict_gate.core.records import BaseSigRecord, FailureRecord, ReplayRecord, RunsRecord, fresh_seed

MAX_SHOWN = 120  # characters of a value shown in a finding


@dataclass(frozen=True)
class Finding:
    """One difference the audit found: in ``file`` (an evidence file name; ``""`` for the directory), at
    ``where`` (a JSON path such as ``$.verdicts["prop.a"].reason``, a line, or ``""``), what is wrong."""

    file: str
    where: str
    problem: str

    def line(self) -> str:
        place = " ".join(p for p in (self.file, self.where) if p)
        return f"{place}: {self.problem}" if place else self.problem

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "where": self.where, "problem": self.problem}


def shown(value: Any) -> str:
    """A value as a finding shows it: compact JSON, cut to :data:`MAX_SHOWN` characters."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _key(path: str, key: Any) -> str:
    return f"{path}.{key}" if isinstance(key, str) and key.isidentifier() else f"{path}[{json.dumps(key)}]"


def differences(file: str, recorded: Any, derived: Any, path: str = "$", limit: int = 50) -> list[Finding]:
    """Every place where ``recorded`` (the file's document) and ``derived`` (the one re-derived from the other
    evidence) differ, deepest first found, at most ``limit``: a value, a key only one of them has, a list's
    length or an item. ``[]`` when they are equal (``1`` and ``1.0``, ``True`` and ``1`` are not)."""
    out: list[Finding] = []

    def walk(a: Any, b: Any, at: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            for k in sorted(set(a) | set(b), key=str):
                if k not in b:
                    out.append(Finding(file, _key(at, k), f"recorded {shown(a[k])}, but the re-derived file has no "
                                       "such field (unknown field)"))
                elif k not in a:
                    out.append(Finding(file, _key(at, k), f"missing; re-derived {shown(b[k])}"))
                else:
                    walk(a[k], b[k], _key(at, k))
            return
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                out.append(Finding(file, at, f"recorded {len(a)} item(s), re-derived {len(b)}: recorded {shown(a)}, "
                                   f"re-derived {shown(b)}"))
                return
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{at}[{i}]")
            return
        if type(a) is not type(b) or a != b:
            out.append(Finding(file, at, f"recorded {shown(a)}, re-derived {shown(b)}"))

    walk(recorded, derived, path)
    return out


def text_difference(file: str, recorded: str, derived: str) -> Finding | None:
    """The first line where a text file differs from the one re-derived, or ``None`` when they are equal."""
    if recorded == derived:
        return None
    a, b = recorded.split("\n"), derived.split("\n")
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return Finding(file, f"line {i + 1}", f"recorded {shown(x)}, re-derived {shown(y)}")
    return Finding(file, f"line {min(len(a), len(b)) + 1}", f"recorded {len(a)} line(s), re-derived {len(b)}")


def inventory(planned: Sequence[str], runs: Collection[str], unreported: Sequence[str], frozen: Sequence[str],
              replays: Sequence[ReplayRecord], fresh: Collection[str] = (),
              unreached: Collection[str] = ()) -> list[Finding]:
    """The inventory of one run's (or one shard's) evidence.

    Args:
        planned: the properties the run had to run (the catalog's, less those whose oracle the diff edits; a
            shard's share), in catalog order.
        runs: the ids ``runs.json`` has a run of. unreported: the ids the evidence says the runner reported
            nothing for.
        frozen: the ledger's ids among ``planned``: the base replay's plan (a property without a run, which is
            ``missing_run`` whatever its replay showed, may lack its tries: a shard that never reported).
        replays: ``base.sig.json``'s tries, in file order.
        fresh: the ids whose fresh examples failed on the candidate: each is replayed on the base too (once,
            when it has no freeze), to tell a regression from an old bug (docs/design.md §8.3).
        unreached: the ids whose run on the candidate failed before the property's body
            (:func:`verdict_gate.core.verdict.never_reached`): each is run once on the base too (when the base
            replay did not run it), to tell the oracle's fault from the patch's (``oracle_error``, V18).
    Returns:
        one finding per run of an unplanned property, planned property with neither a run nor an announcement,
        announcement of one that has a run or was not planned, frozen property with a run but no base try, try of an
        unplanned property, and property whose tries are not numbered 1, 2, … in order.
    """
    out: list[Finding] = []
    plan = set(planned)
    for pid in sorted(set(runs) - plan):
        out.append(Finding("runs.json", f"$.runs[{json.dumps(pid)}]", "a run of a property that was not planned "
                           "(not in the catalog, or its oracle file is edited in the diff)"))
    missing = [pid for pid in planned if pid not in runs]
    if list(unreported) != missing:
        out.append(Finding("verdicts.json", "$.decision.unreported", f"recorded {shown(list(unreported))}, but the "
                           f"planned properties without a run in runs.json are {shown(missing)}"))
    tries: dict[str, list[int]] = {}
    for i, rep in enumerate(replays):
        if rep.prop_id not in frozen and rep.prop_id not in fresh and rep.prop_id not in unreached:
            out.append(Finding("base.sig.json", f"$.replays[{i}]", f"a base replay of {rep.prop_id}, which is not a "
                               "planned property with a freeze, nor one that failed before its body"))
        tries.setdefault(rep.prop_id, []).append(rep.try_no)
    for pid in sorted(set(fresh) - set(frozen)):
        if tries.get(pid) != [1]:
            out.append(Finding("base.sig.json", "$.replays", f"{pid}'s fresh examples failed on the candidate, so "
                               f"they are replayed once on the base; the file has {len(tries.get(pid, []))} tries"))
    for pid in sorted(set(unreached) - set(frozen) - set(fresh)):
        if tries.get(pid, [1]) != [1]:  # none: the run stopped before that step, and the verdict reads crashed
            out.append(Finding("base.sig.json", "$.replays", f"{pid} failed before its body on the candidate, so it "
                               f"runs once on the base; the file has {len(tries.get(pid, []))} tries"))
    for pid in frozen:
        got = tries.get(pid, [])
        if not got and pid not in runs:
            continue  # no run either (a shard that never reported): missing_run, and the evidence says so
        if not got:
            out.append(Finding("base.sig.json", "$.replays", f"no base replay try of {pid}, a planned property with a "
                               "freeze (every one is replayed on the base revision)"))
        elif got != list(range(1, len(got) + 1)):
            out.append(Finding("base.sig.json", "$.replays", f"the tries of {pid} are numbered {got}, not 1, 2, … in "
                               "the order they ran"))
    return out


def ancestry(ancestors: Mapping[str, bool], revisions: Collection[str], base_revision: str) -> list[Finding]:
    """The recorded ancestry covers exactly the ledger's freeze base revisions (the ones git was asked about),
    and says the base revision itself is its own ancestor (``git merge-base --is-ancestor`` does)."""
    out: list[Finding] = []
    if sorted(ancestors) != sorted(set(revisions)):
        out.append(Finding("verdicts.json", "$.decision.ancestors", f"lists {shown(sorted(ancestors))}, but the "
                           f"ledger's freeze base revisions are {shown(sorted(set(revisions)))}"))
    if ancestors.get(base_revision) is False:
        out.append(Finding("verdicts.json", f"$.decision.ancestors.{base_revision}", "says the base revision is not "
                           "an ancestor of itself"))
    return out


def set_order(runs: RunsRecord | None, base_sig: BaseSigRecord | None) -> list[Finding]:
    """Each failure set is written sorted by signature, once per signature (docs/design.md §5)."""
    out: list[Finding] = []
    sets = [("runs.json", f"$.runs[{json.dumps(pid)}].failures", r.failures)
            for pid, r in (runs.runs.items() if runs is not None else ())]
    sets += [("base.sig.json", f"$.replays[{i}].failures", r.failures)
             for i, r in enumerate(base_sig.replays if base_sig is not None else ())]
    for file, where, failures in sets:
        sigs = [f.signature for f in failures]
        if sigs != sorted(set(sigs)):
            out.append(Finding(file, where, "is not sorted by signature, one failure per signature, as the gate "
                               "writes a failure set"))
    return out


def _parts_agree(file: str, where: str, prop_id: str, seed: int | None, failures: Sequence[FailureRecord],
                 parts: Mapping[str, Any] | None) -> list[Finding]:
    out: list[Finding] = []
    for i, f in enumerate(failures):
        at = f"{where}.failures[{i}].signature_parts"
        for name, want in (("prop_id", prop_id), ("node", f.node), ("exc_type", f.exc_type), ("seed", seed)):
            if f.signature_parts.get(name) != want:
                out.append(Finding(file, f"{at}.{name}", f"recorded {shown(f.signature_parts.get(name))}, but the "
                                   f"failure it signs says {shown(want)}"))
    if len(failures) == 1 and parts is not None and dict(parts) != dict(failures[0].signature_parts):
        out.append(Finding(file, f"{where}.signature_parts", "differs from its one failure's: a set of one repeats it"))
    return out


def failure_fields(runs: RunsRecord | None, base_sig: BaseSigRecord | None, head: str, run_id: str) -> list[Finding]:
    """What a record says about a failure agrees with the signature parts that sign it (the property, the test
    node, the exception type, the seed; a set of one repeats its failure's parts), and each fresh seed is the
    one the run derives from the head revision and the run id (docs/design.md §5, §8.3)."""
    out: list[Finding] = []
    records: list[tuple[str, str, str, Any]] = [("runs.json", f"$.runs[{json.dumps(pid)}]", pid, r)
                                                for pid, r in (runs.runs.items() if runs is not None else ())]
    records += [("base.sig.json", f"$.replays[{i}]", r.prop_id, r)
                for i, r in enumerate(base_sig.replays if base_sig is not None else ())]
    for file, where, pid, r in records:
        seed = r.seed if file == "runs.json" else _seed_of(r)
        out += _parts_agree(file, where, pid, seed, r.failures, r.signature_parts)
        if r.fresh_seed is not None and r.fresh_seed != fresh_seed(head, run_id, pid):
            out.append(Finding(file, f"{where}.fresh_seed", f"recorded {r.fresh_seed}, but the run's fresh seed for "
                               f"{pid} is {fresh_seed(head, run_id, pid)} (from the head revision and the run id)"))
    return out


def _seed_of(replay: ReplayRecord) -> int | None:
    """A base replay try records no seed of its own: its first failure's parts name the one it ran with, and
    every other failure of the try must name the same."""
    return replay.failures[0].signature_parts.get("seed") if replay.failures else None


def seeds(catalog: Catalog, runs: RunsRecord | None, base_sig: BaseSigRecord | None) -> list[Finding]:
    """Every run and base replay try ran with its property's recorded seed (the catalog's), or with none (which
    the verdict table makes ``unseeded``): never another."""
    props = catalog.by_id()
    out: list[Finding] = []
    found: list[tuple[str, str, str, int | None]] = [("runs.json", f"$.runs[{json.dumps(pid)}].seed", pid, r.seed)
                                                     for pid, r in (runs.runs.items() if runs is not None else ())]
    found += [("base.sig.json", f"$.replays[{i}].failures[0].signature_parts.seed", r.prop_id, _seed_of(r))
              for i, r in enumerate(base_sig.replays if base_sig is not None else ())]
    for file, where, pid, seed in found:
        prop = props.get(pid)
        if prop is not None and seed is not None and seed != prop.seed:
            out.append(Finding(file, where, f"{pid} ran with seed {seed}, but the catalog records {prop.seed}"))
    return out
