"""``verdict-gate merge``: one decision from the partial evidence of N shards (docs/design.md §11). An edge.

The merge loads and verifies the pack itself and resolves the head and base revisions itself, so
it decides from a catalog and ledger it checked, never from one a shard described; from each
shard directory it reads only what the shard measured (``shard.json``, ``runs.json``,
``base.sig.json``, ``fixture.digest``), each checked against its schema and every failure
signature recomputed from its parts. Shards that disagree on what they gated, a shard missing
or given twice, or a property covered twice or not at all make the outcome ``incomplete``,
naming each problem; the verdicts of what did run are still reported.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verdict_gate import pack
from verdict_gate.core import shard as shards
from verdict_gate.core.errors import GateError
from verdict_gate.core.evidence import Evidence
from verdict_gate.core.progress import Progress
from verdict_gate.core.records import (
    BaseSigRecord,
    FixtureRecord,
    RecordError,
    ReplayRecord,
    RunRecord,
    RunsRecord,
    base_sig_record_from_json,
    runs_record_from_json,
)
from verdict_gate.host import git, schemas
from verdict_gate.host.workdir import scratch_dir
from verdict_gate.run.execute import Execution
from verdict_gate.run.pipeline import load_pack, revisions, score_run, split_diff

FIX = "pass the directories `verdict-gate run --shard K/N --out DIR` wrote (download every shard's artifact)"


MAX_BYTES = 256 * 1024 * 1024  # one shard evidence file (runs.json of 10,000 properties is about 30 MB)


def _read(directory: Path, name: str, schema: str) -> Any:
    """One shard evidence file: a regular file (never through a link, never a FIFO), at most
    :data:`MAX_BYTES`, JSON valid against ``schemas/<schema>.schema.json``. Raises :class:`GateError`."""
    path = directory / name
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise GateError("shard evidence", str(path), "does not exist", FIX) from None
    except OSError as exc:
        raise GateError("shard evidence", str(path), f"cannot be opened ({exc.strerror or exc}; a link is "
                        "refused)", FIX) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise GateError("shard evidence", str(path), "is not a regular file", FIX)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise GateError("shard evidence", str(path), f"is larger than {MAX_BYTES:,} bytes", FIX)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise GateError("shard evidence", str(path), f"cannot be read as JSON ({type(exc).__name__})", FIX) from None
    schemas.check(schema, doc, str(path))
    return doc


class Shard:
    """One shard directory, read and checked: its header, runs, replays and fixture record."""

    def __init__(self, directory: Path) -> None:
        if not directory.is_dir():
            raise GateError("shard directory", str(directory), "is not a directory", FIX)
        self.where = str(directory)
        self.header: dict[str, Any] = _read(directory, "shard.json", "shard")
        self.runs: RunsRecord | None = None
        self.base_sig: BaseSigRecord | None = None
        self.fixture: FixtureRecord | None = None
        if self.header["outcome"] == "void":
            return  # a void shard wrote no runs: its reason decides
        try:
            self.runs = runs_record_from_json(_read(directory, "runs.json", "runs"), f"{directory}/runs.json")
            self.base_sig = base_sig_record_from_json(_read(directory, "base.sig.json", "base_sig"),
                                                      f"{directory}/base.sig.json")
        except RecordError as exc:
            raise GateError("shard evidence", str(exc).partition(":")[0], str(exc).partition(": ")[2],
                            "use the files the gate wrote, unedited") from None
        self.fixture = FixtureRecord.from_json(_read(directory, "fixture.digest", "fixture_digest"))

    def inconsistencies(self, ids: Sequence[str]) -> list[str]:
        """Where this shard's files disagree with its own ``shard.json``: ``shards.inconsistencies``."""
        return shards.inconsistencies(self.label, self.header, ids, self.runs, self.base_sig,
                                      self.fixture.to_json() if self.fixture is not None else None)

    @property
    def label(self) -> str:
        return f"shard {self.header['index']}/{self.header['count']} ({self.where})"


def read_shards(dirs: Sequence[Path]) -> list[Shard]:
    """Every shard directory read and checked. Raises :class:`GateError` (exit 2) for a directory that is
    missing, unreadable or not the gate's evidence (schema, signatures)."""
    if not dirs:
        raise GateError("verdict-gate merge", "(no directories)", "needs the shard directories", FIX)
    return [Shard(Path(d)) for d in dirs]


def merge(dirs: Sequence[Path], repo: Path, base_ref: str, pack_source: str, *, policy: str | None,
          today: dt.date, progress: Progress, pack_options: pack.PackOptions | None = None) -> Evidence:
    """The decision of a sharded run. Returns the :class:`Evidence` (its outcome set), like
    :func:`verdict_gate.run.pipeline.run`.

    Raises:
        GateError: a shard directory that cannot be read (exit 2), or a usage error.
    """
    got = read_shards(dirs)
    ev = revisions(git.toplevel(repo), base_ref)
    with scratch_dir() as scratch:
        oracle_pack = load_pack(ev, pack_source, pack_options, policy, scratch, progress)
        if oracle_pack is None:
            return ev
        parts = split_diff(ev, oracle_pack, progress)
        if parts.void:
            return ev
    progress(f"merging {len(got)} shard{'s' if len(got) != 1 else ''}")
    void = next((s for s in got if s.header["outcome"] == "void"), None)
    if void is not None:
        return ev.void(f"{void.label}: {void.header['void_reason'] or 'void'}")
    ids = [q.id for q in oracle_pack.catalog.properties if q.id not in parts.oracle_edited]
    expected = {"head_revision": ev.head_revision, "base_revision": ev.base_revision, "pack_sha256": oracle_pack.sha256}
    problems = shards.problems([(s.where, s.header) for s in got], expected, ids)
    for s in got:
        problems += s.inconsistencies(ids)
    first = got[0]
    assert first.runs is not None and first.base_sig is not None and first.fixture is not None
    wanted = set(ids)
    runs: dict[str, RunRecord] = {}
    replays: dict[str, list[ReplayRecord]] = {}  # every try of a property, from the shard that owns it
    owner: dict[str, int] = {}
    items = 0
    phase_failures: list[str] = []
    compat: dict[str, str] = {}
    for s in got:
        assert s.runs is not None and s.base_sig is not None and s.fixture is not None
        own = set(s.header["properties"]) & wanted
        for pid, rec in s.runs.runs.items():
            if pid in own:
                runs.setdefault(pid, rec)
            elif pid not in s.header["properties"]:
                problems.append(f"{s.label}: runs.json has a run of {pid}, which its shard.json does not list")
        for rep in s.base_sig.replays:
            if rep.prop_id in own and owner.setdefault(rep.prop_id, id(s)) == id(s):  # a directory given twice: once
                replays.setdefault(rep.prop_id, []).append(rep)
        items += s.header["items"]
        phase_failures += [f"{s.label}: {f}" for f in s.header["phase_failures"]]
        compat.update(s.fixture.compat)
        for notice in s.header["notices"]:
            if notice not in ev.notices:
                ev.notices.append(notice)
    fixture = ev.fixture = dataclasses.replace(first.fixture, compat={**first.fixture.compat, **compat})
    ev.run_id = first.header["run_id"]
    ev.runs = RunsRecord(revision=ev.head_revision, base_revision=ev.base_revision,
                         fixture_digest=first.runs.fixture_digest, environment=first.runs.environment,
                         runs={pid: runs[pid] for pid in ids if pid in runs}, run_id=ev.run_id)
    ev.base_sig = BaseSigRecord(base_revision=ev.base_revision, fixture_digest=first.base_sig.fixture_digest,
                                replays=tuple(rep for pid in ids for rep in replays.get(pid, [])))
    done = Execution(records=dict(ev.runs.runs), fixture=fixture, items=items, notices=[],
                     phase_failures=phase_failures)
    score_run(ev, oracle_pack, parts, done, today)
    if problems:
        ev.notices += problems
        ev.merge_problems = problems  # in the evidence: `verdict-gate audit` re-derives the outcome with them
        ev.outcome = "incomplete"
        ev.why = shards.merge_why(problems)
    return ev
