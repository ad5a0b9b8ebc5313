"""Typed evidence records: ``runs.json`` entries, ``base.sig.json`` replays, ``fixture.digest`` and
``oracle_edited.json`` (docs/design.md, "Files"). Pure.

The runner hands over the plugin's raw results-stream record (:mod:`verdict_gate.boundary.results`);
:func:`run_record` turns it into a :class:`RunRecord` with its failure signature, once. The
scoring and every renderer read these objects, never the raw dicts; ``to_json`` gives the
documents the schemas in ``schemas/`` describe.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verdict_gate.core.catalog import Property
from verdict_gate.core.signature import make_signature, set_signature, signature_of
from verdict_gate.core.verdict import BaseSig, Example, FailureRef, RunResult

FAILED_STATUSES = ("fail", "timeout", "crash")


@dataclass(frozen=True)
class Frame:
    """One traceback frame, repository-relative."""

    path: str
    line: int
    function: str


@dataclass(frozen=True)
class FailureRecord:
    """One failure of a property's failure set (docs/design.md §5): one failing test node, or one
    distinct bug Hypothesis reported in it, with its own signature."""

    node: str
    exc_type: str
    message: str
    counterexample: Any
    traceback: tuple[Frame, ...]
    signature: str
    signature_parts: Mapping[str, Any]

    def ref(self) -> FailureRef:
        return FailureRef(self.signature, self.signature_parts)

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "exc_type": self.exc_type, "message": self.message,
                "counterexample": self.counterexample,
                "traceback": [{"path": f.path, "line": f.line, "function": f.function} for f in self.traceback],
                "signature": self.signature, "signature_parts": dict(self.signature_parts)}


def examples_json(log: tuple[Example, ...] | None) -> list[dict[str, Any]] | None:
    """An example log as JSON: ``{"digest", "held"}`` per example in draw order, ``input`` (and ``error``, when
    known) and ``fails`` (how it failed) on a failing one."""
    if log is None:
        return None
    return [{"digest": e.digest, "held": e.held,
             **({} if e.held else {"input": e.input}), **({"error": e.error} if e.error is not None else {}),
             **({"fails": e.fails} if e.fails is not None else {})}
            for e in log]


def examples_of(raw: Any) -> tuple[Example, ...] | None:
    """The example log of a results-stream or evidence record (``None`` when the run kept none)."""
    if not isinstance(raw, list):
        return None
    return tuple(Example(str(e["digest"]), bool(e["held"]), e.get("input"),
                         error=e["error"] if isinstance(e.get("error"), str) else None,
                         fails=e["fails"] if isinstance(e.get("fails"), str) else None) for e in raw
                 if isinstance(e, Mapping) and isinstance(e.get("digest"), str) and isinstance(e.get("held"), bool))


@dataclass(frozen=True)
class RunRecord:
    """What one property's run showed (a ``runs.json`` entry); ``signature`` is set for a failure."""

    status: str
    node: str
    seed: int | None
    trials: int | None
    hits: int | None
    counterexample: Any
    exc_type: str | None
    message: str | None
    traceback: tuple[Frame, ...]
    duration_s: float | None
    fixture_digest: str
    base_revision: str
    fixture_mutated: bool
    signature: str | None = None
    signature_parts: Mapping[str, Any] | None = None
    isolation: Mapping[str, Any] = field(default_factory=dict)
    failures: tuple[FailureRecord, ...] = ()
    example_log: tuple[Example, ...] | None = None
    fresh_seed: int | None = None
    fresh_log: tuple[Example, ...] | None = None
    output_tail: str | None = None
    inputs_changed: int = 0
    boundary: tuple[tuple[str, str], ...] = ()  # (message, where): limits of the isolation boundary met
    # Each test node's outcome as plain pytest reports it (``passed`` … ``error``), the first 10,000 of
    # the property, and how many ran beyond them; ``None`` when the run was lost before it said.
    nodes: Mapping[str, str] | None = None
    nodes_more: int = 0

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES

    def run_result(self, prop: Property) -> RunResult:
        """The verdict table's view of this run."""
        return RunResult(
            status=self.status, signature=self.signature, signature_parts=self.signature_parts,
            fixture_digest=self.fixture_digest, seed=self.seed, seeded_kind=prop.kind == "property",
            hits=self.hits, fixture_mutated=self.fixture_mutated and not prop.mutates_fixture,
            isolation_asked=prop.isolation, isolation_level=str(self.isolation.get("level", "none")),
            isolation_method=str(self.isolation.get("method", "unknown")),
            isolation_why=str(self.isolation.get("why", "")),
            failures=tuple(f.ref() for f in self.failures), example_log=self.example_log,
            fresh_log=self.fresh_log, boundary=tuple(f"{m} (at {w})" if w else m for m, w in self.boundary),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status, "node": self.node, "seed": self.seed, "trials": self.trials, "hits": self.hits,
            "counterexample": self.counterexample, "exc_type": self.exc_type, "message": self.message,
            "traceback": [{"path": f.path, "line": f.line, "function": f.function} for f in self.traceback],
            "duration_s": self.duration_s, "fixture_digest": self.fixture_digest,
            "base_revision": self.base_revision, "fixture_mutated": self.fixture_mutated,
            "signature": self.signature,
            "signature_parts": dict(self.signature_parts) if self.signature_parts is not None else None,
            "isolation": dict(self.isolation),
            "failures": [f.to_json() for f in self.failures],
            "example_log": examples_json(self.example_log),
            "fresh_seed": self.fresh_seed,
            "fresh_log": examples_json(self.fresh_log),
            "output_tail": self.output_tail,
            "inputs_changed": self.inputs_changed,
            "boundary": [{"message": m, "where": w} for m, w in self.boundary],
            "nodes": dict(self.nodes) if self.nodes is not None else None,
            "nodes_more": self.nodes_more,
        }


def _boundary_of(raw: Mapping[str, Any], failures: Sequence[FailureRecord]) -> tuple[tuple[str, str], ...]:
    """The boundary limits a run met: those the plugin recorded out of band, and every failure raised by the
    boundary itself (a ``NotCrossable`` that reached pytest)."""
    found = [(str(b.get("message", ""))[:2000], str(b.get("where", ""))[:500])
             for b in raw.get("boundary") or [] if isinstance(b, Mapping)]
    for f in failures:
        if f.signature_parts.get("origin") == "boundary":
            frame = f.traceback[-1] if f.traceback else None
            found.append((f"{f.exc_type}: {f.message}"[:2000], f"{frame.path}:{frame.line}" if frame else ""))
    return tuple(dict.fromkeys(found))[:50]


def _origin(raw: Any) -> str:
    """The failure's ``origin`` as the plugin reported it; ``runner`` for a record the runner wrote (a lost
    process), ``boundary`` for anything malformed (never the candidate's: docs/design.md §8.1)."""
    if raw is None:
        return "runner"
    if isinstance(raw, str) and (raw in ("oracle", "boundary", "candidate") or raw.startswith("candidate:")):
        return raw[:1000]
    return "boundary"


def _site(raw: Any) -> str | None:
    """The failure's ``site`` (the pack's line it came through) as the plugin reported it, or ``None``."""
    return raw[:1000] if isinstance(raw, str) and raw else None


def _nodes_of(raw: Any) -> dict[str, str] | None:
    """A record's ``nodes`` map (node id → outcome), or ``None`` when it has none."""
    if not isinstance(raw, Mapping):
        return None
    return {str(k): str(v) for k, v in raw.items()}


def _tmp_free(text: str, tmp_paths: Sequence[str]) -> str:
    for tmp in sorted(tmp_paths, key=len, reverse=True):
        text = text.replace(tmp, "<tmp>")
    return text


def run_record(raw: Mapping[str, Any], prop: Property, digest: str, base_revision: str,
               tmp_paths: Sequence[str], *, fixture_mutated: bool | None = None) -> RunRecord:
    """The :class:`RunRecord` of the plugin's raw ``result`` record, its signature computed.

    ``tmp_paths`` (the run's temporary directories) become ``<tmp>`` in the message and the
    signature, so two runs in different directories sign alike.
    """
    node = raw.get("node") or prop.selector
    message = raw.get("message")
    signature = parts = None
    failures: list[FailureRecord] = []
    if raw["status"] in FAILED_STATUSES:
        # The failure set: every failing test node and every distinct bug Hypothesis reported;
        # a record without the list (a lost process) is a set of one.
        listed = [f for f in raw.get("failures") or [] if isinstance(f, Mapping)] or [raw]
        by_sig: dict[str, FailureRecord] = {}
        for f in listed:
            f_node = f.get("node") or node
            sig = make_signature(prop_id=prop.id, node=f_node, seed=raw.get("seed"),
                                 exc_type=f.get("exc_type") or "builtins.Exception", message=f.get("message") or "",
                                 counterexample=f.get("counterexample"), origin=_origin(f.get("origin")),
                                 site=_site(f.get("site")),
                                 tmp_paths=tmp_paths,
                                 fold_digits=prop.fold_digits)
            by_sig.setdefault(sig.value, FailureRecord(
                node=f_node, exc_type=f.get("exc_type") or "builtins.Exception",
                message=_tmp_free(f.get("message") or "", tmp_paths), counterexample=f.get("counterexample"),
                traceback=tuple(Frame(t["path"], int(t["line"]), t["function"]) for t in f.get("traceback") or []),
                signature=sig.value, signature_parts=dict(sig.parts)))
        failures = [by_sig[k] for k in sorted(by_sig)]
        signature = set_signature(by_sig)
        parts = dict(failures[0].signature_parts) if len(failures) == 1 else None
        if message:
            message = _tmp_free(message, tmp_paths)
    return RunRecord(
        status=raw["status"], node=node, seed=raw.get("seed"), trials=raw.get("trials"), hits=raw.get("hits"),
        counterexample=raw.get("counterexample"), exc_type=raw.get("exc_type"), message=message,
        traceback=tuple(Frame(f["path"], int(f["line"]), f["function"]) for f in raw.get("traceback") or []),
        duration_s=raw.get("duration_s"), fixture_digest=digest, base_revision=base_revision,
        fixture_mutated=bool(raw.get("fixture_mutated") if fixture_mutated is None else fixture_mutated),
        signature=signature, signature_parts=parts,
        isolation=_isolation(raw.get("isolation"), prop),
        failures=tuple(failures), example_log=examples_of(raw.get("example_log")),
        fresh_seed=raw.get("fresh_seed") if isinstance(raw.get("fresh_seed"), int) else None,
        fresh_log=examples_of(raw.get("fresh_log")),
        output_tail=raw.get("output_tail") if isinstance(raw.get("output_tail"), str) else None,
        inputs_changed=raw["inputs_changed"] if type(raw.get("inputs_changed")) is int else 0,
        boundary=_boundary_of(raw, failures),
        nodes=_nodes_of(raw.get("nodes")),
        nodes_more=more if type(more := raw.get("nodes_more")) is int else 0,
    )


def _isolation(raw: Any, prop: Property) -> dict[str, Any]:
    """The run's isolation record as the runner reduced it (:func:`verdict_gate.boundary.results.isolation`);
    ``method`` ``unknown`` at the asked level when the run was lost before it said."""
    if not isinstance(raw, Mapping):
        return {"level": prop.isolation, "method": "unknown", "fences": {}}
    return dict(raw)


@dataclass(frozen=True)
class RunsRecord:
    """``runs.json``: every property's :class:`RunRecord` on one revision."""

    revision: str
    base_revision: str
    fixture_digest: str
    environment: Mapping[str, str]
    runs: Mapping[str, RunRecord] = field(default_factory=dict)
    run_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "revision": self.revision, "base_revision": self.base_revision,
                "fixture_digest": self.fixture_digest, "environment": dict(self.environment),
                "runs": {pid: r.to_json() for pid, r in self.runs.items()},
                **({"run_id": self.run_id} if self.run_id else {})}


def fresh_seed(head_revision: str, run_id: str, prop_id: str) -> int:
    """The fresh seed of one property in one run (docs/design.md §8.3): derived from the head revision,
    the run's id and the property id, so a run can be replayed from its evidence; under 2**53 (JSON)."""
    digest = hashlib.sha256(f"{head_revision}\0{run_id}\0{prop_id}".encode()).hexdigest()
    return int(digest[:16], 16) % (2**53)


@dataclass(frozen=True)
class ReplayRecord:
    """One base replay try (a ``base.sig.json`` entry); ``status`` ``missing`` when it produced no result.

    ``try_no``: 1 for a property's first try; a property with a flaky freeze may be tried again (2, 3, …),
    and every try is kept (docs/design.md §3, "Flaky freezes").
    """

    prop_id: str
    status: str
    signature: str | None
    signature_parts: Mapping[str, Any] | None
    fixture_digest: str
    base_revision: str
    failures: tuple[FailureRecord, ...] = ()
    hits: int | None = None
    example_log: tuple[Example, ...] | None = None
    fresh_seed: int | None = None
    fresh_log: tuple[Example, ...] | None = None
    try_no: int = 1

    def base_sig(self) -> BaseSig:
        return BaseSig(self.prop_id, self.signature, self.fixture_digest, self.base_revision,
                       failures=tuple(f.signature for f in self.failures), example_log=self.example_log,
                       fresh_log=self.fresh_log, status=self.status)

    def to_json(self) -> dict[str, Any]:
        return {"prop_id": self.prop_id, "status": self.status, "signature": self.signature,
                "signature_parts": dict(self.signature_parts) if self.signature_parts is not None else None,
                "fixture_digest": self.fixture_digest, "base_revision": self.base_revision,
                "failures": [f.to_json() for f in self.failures], "hits": self.hits,
                "example_log": examples_json(self.example_log), "fresh_seed": self.fresh_seed,
                "fresh_log": examples_json(self.fresh_log), "try": self.try_no}


@dataclass(frozen=True)
class BaseSigRecord:
    """``base.sig.json``: the replays of one base revision (a property tried more than once has one entry
    per try, in try order)."""

    base_revision: str
    fixture_digest: str
    replays: tuple[ReplayRecord, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "base_revision": self.base_revision, "fixture_digest": self.fixture_digest,
                "replays": [r.to_json() for r in self.replays]}


@dataclass(frozen=True)
class FixtureRecord:
    """``fixture.digest``: the fixture digest of one tree and what it covered (docs/design.md §4): the pack's
    ``fixtures/`` (paths ``pack/…``) then the repository fixture globs ``repo_roots`` (paths ``repo/…``).
    ``compat``: format → the same fixtures' digest in that format (``tree-v1``, for freezes recorded under it)."""

    format: str
    digest: str
    revision: str
    repo_roots: tuple[str, ...]
    files: int
    bytes: int
    normalizers: tuple[Mapping[str, str], ...] = ()
    compat: Mapping[str, str] = field(default_factory=dict)

    PACK_ROOT = "fixtures/ of the oracle pack"  # what ``roots.pack`` says

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "format": self.format, "digest": self.digest, "revision": self.revision,
                "roots": {"pack": self.PACK_ROOT, "repo": list(self.repo_roots)}, "files": self.files,
                "bytes": self.bytes, "normalizers": [dict(n) for n in self.normalizers],
                **({"compat": dict(self.compat)} if self.compat else {})}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> FixtureRecord:
        """The record of a ``fixture.digest`` document (checked against its schema by the caller)."""
        return cls(format=str(doc["format"]), digest=str(doc["digest"]), revision=str(doc["revision"]),
                   repo_roots=tuple(str(r) for r in doc["roots"]["repo"]), files=int(doc["files"]),
                   bytes=int(doc["bytes"]), normalizers=tuple(dict(n) for n in doc["normalizers"]),
                   compat={str(k): str(v) for k, v in (doc.get("compat") or {}).items()})


@dataclass(frozen=True)
class DiffRecord:
    """``oracle_edited.json``: the diff ``base_revision...head_revision`` sorted into buckets (docs/design.md §6).

    ``oracle_edited``: the property ids whose oracle file the diff edits (verdicts V4/V5; the document's key
    keeps its first name, ``oracle_moved``); ``control_edits``: the paths whose edit voids the run;
    ``running``: what defines this GitHub Actions run (``None``: unknown); ``workflow_edits``: edited workflow
    files that do not define it (bucket ``other``)."""

    base_revision: str
    head_revision: str
    buckets: Mapping[str, tuple[str, ...]]
    oracle_edited: tuple[str, ...]
    control_edits: tuple[str, ...]
    running: Mapping[str, Any] | None = None
    workflow_edits: tuple[str, ...] = ()

    @property
    def void(self) -> bool:
        return bool(self.control_edits)

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "base_revision": self.base_revision, "head_revision": self.head_revision,
                "buckets": {k: list(v) for k, v in self.buckets.items()}, "oracle_moved": list(self.oracle_edited),
                "control_edits": list(self.control_edits), "void": self.void,
                "running": dict(self.running) if self.running is not None else None,
                "workflow_edits": list(self.workflow_edits)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> DiffRecord:
        """The record of an ``oracle_edited.json`` document (checked against its schema by the caller)."""
        running = doc.get("running")
        return cls(base_revision=str(doc["base_revision"]), head_revision=str(doc["head_revision"]),
                   buckets={str(k): tuple(str(p) for p in v) for k, v in doc["buckets"].items()},
                   oracle_edited=tuple(str(i) for i in doc["oracle_moved"]),
                   control_edits=tuple(str(p) for p in doc["control_edits"]),
                   running=dict(running) if running is not None else None,
                   workflow_edits=tuple(str(p) for p in doc.get("workflow_edits") or ()))


# --- reading evidence back (``verdict-gate merge``) --------------------------------------------------


class RecordError(ValueError):
    """An evidence record whose signatures do not follow from its parts (written by something else)."""


def _frames(raw: Any) -> tuple[Frame, ...]:
    return tuple(Frame(str(t["path"]), int(t["line"]), str(t["function"])) for t in raw or [])


def _failures_of(raw: Any, where: str) -> tuple[FailureRecord, ...]:
    out = []
    for f in raw or []:
        parts = dict(f["signature_parts"])
        if signature_of(parts) != f["signature"]:
            raise RecordError(f"{where}: a failure's signature is not the sha256 of its signature_parts")
        out.append(FailureRecord(node=f["node"], exc_type=f["exc_type"], message=f["message"],
                                 counterexample=f.get("counterexample"), traceback=_frames(f.get("traceback")),
                                 signature=f["signature"], signature_parts=parts))
    return tuple(out)


def _checked_set(signature: Any, failures: tuple[FailureRecord, ...], where: str) -> None:
    if failures and set_signature(f.signature for f in failures) != signature:
        raise RecordError(f"{where}: the signature is not the signature of its failure set")


def run_record_from_json(raw: Mapping[str, Any], where: str) -> RunRecord:
    """The :class:`RunRecord` of one ``runs.json`` entry (already valid against ``runs.schema.json``).

    Raises:
        RecordError: a failure's signature is not ``signature_of`` its parts, or the property's is
            not the set signature of its failures (the file was not written by the gate).
    """
    failures = _failures_of(raw.get("failures"), where)
    _checked_set(raw["signature"], failures, where)
    return RunRecord(
        status=raw["status"], node=raw["node"], seed=raw["seed"], trials=raw["trials"], hits=raw["hits"],
        counterexample=raw["counterexample"], exc_type=raw["exc_type"], message=raw["message"],
        traceback=_frames(raw["traceback"]), duration_s=raw["duration_s"], fixture_digest=raw["fixture_digest"],
        base_revision=raw["base_revision"], fixture_mutated=raw["fixture_mutated"], signature=raw["signature"],
        signature_parts=raw["signature_parts"], isolation=dict(raw["isolation"]), failures=failures,
        example_log=examples_of(raw.get("example_log")), fresh_seed=raw.get("fresh_seed"),
        fresh_log=examples_of(raw.get("fresh_log")), output_tail=raw.get("output_tail"),
        inputs_changed=raw.get("inputs_changed", 0),
        boundary=tuple((str(b["message"]), str(b["where"])) for b in raw.get("boundary") or []),
        nodes=_nodes_of(raw.get("nodes")), nodes_more=raw.get("nodes_more", 0),
    )


def runs_record_from_json(doc: Mapping[str, Any], where: str) -> RunsRecord:
    """The :class:`RunsRecord` of a ``runs.json`` document (valid against its schema).

    Raises:
        RecordError: as :func:`run_record_from_json`.
    """
    return RunsRecord(revision=doc["revision"], base_revision=doc["base_revision"],
                      fixture_digest=doc["fixture_digest"], environment=dict(doc["environment"]),
                      runs={pid: run_record_from_json(r, f"{where} runs.{pid}") for pid, r in doc["runs"].items()},
                      run_id=doc.get("run_id", ""))


def base_sig_record_from_json(doc: Mapping[str, Any], where: str) -> BaseSigRecord:
    """The :class:`BaseSigRecord` of a ``base.sig.json`` document (valid against its schema).

    Raises:
        RecordError: as :func:`run_record_from_json`.
    """
    replays = []
    for i, r in enumerate(doc["replays"]):
        at = f"{where} replays[{i}]"
        failures = _failures_of(r.get("failures"), at)
        _checked_set(r["signature"], failures, at)
        replays.append(ReplayRecord(
            prop_id=r["prop_id"], status=r["status"], signature=r["signature"], signature_parts=r["signature_parts"],
            fixture_digest=r["fixture_digest"], base_revision=r["base_revision"], failures=failures,
            hits=r.get("hits"), example_log=examples_of(r.get("example_log")), fresh_seed=r.get("fresh_seed"),
            fresh_log=examples_of(r.get("fresh_log")), try_no=r.get("try", 1)))
    return BaseSigRecord(base_revision=doc["base_revision"], fixture_digest=doc["fixture_digest"],
                         replays=tuple(replays))
