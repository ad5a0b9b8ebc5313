"""Typed evidence records: ``runs.json`` entries and ``base.sig.json`` replays (docs/design.md, "Files"). Pure.

The runner hands over the plugin's raw results-stream record (:mod:`verdict_gate.run.results`);
:func:`run_record` turns it into a :class:`RunRecord` with its failure signature, once. The
scoring and every renderer read these objects, never the raw dicts; ``to_json`` gives the
documents the schemas in ``schemas/`` describe.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verdict_gate.core.catalog import Property
from verdict_gate.core.signature import make_signature
from verdict_gate.core.verdict import BaseSig, RunResult

FAILED_STATUSES = ("fail", "timeout", "crash")


@dataclass(frozen=True)
class Frame:
    """One traceback frame, repository-relative."""

    path: str
    line: int
    function: str


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

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES

    def run_result(self, prop: Property) -> RunResult:
        """The verdict table's view of this run."""
        return RunResult(
            status=self.status, signature=self.signature, signature_parts=self.signature_parts,
            fixture_digest=self.fixture_digest, seed=self.seed, seeded_kind=prop.kind == "property",
            hits=self.hits, fixture_mutated=self.fixture_mutated and not prop.mutates_fixture,
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
        }


def run_record(raw: Mapping[str, Any], prop: Property, digest: str, base_revision: str,
               tmp_paths: Sequence[str], *, fixture_mutated: bool | None = None) -> RunRecord:
    """The :class:`RunRecord` of the plugin's raw ``result`` record, its signature computed.

    ``tmp_paths`` (the run's temporary directories) become ``<tmp>`` in the message and the
    signature, so two runs in different directories sign alike.
    """
    node = raw.get("node") or prop.selector
    message = raw.get("message")
    signature = parts = None
    if raw["status"] in FAILED_STATUSES:
        sig = make_signature(prop_id=prop.id, node=node, seed=raw.get("seed"),
                             exc_type=raw.get("exc_type") or "builtins.Exception", message=message or "",
                             counterexample=raw.get("counterexample"), tmp_paths=tmp_paths,
                             fold_digits=prop.fold_digits)
        signature, parts = sig.value, dict(sig.parts)
        if message:
            for tmp in sorted(tmp_paths, key=len, reverse=True):
                message = message.replace(tmp, "<tmp>")
    return RunRecord(
        status=raw["status"], node=node, seed=raw.get("seed"), trials=raw.get("trials"), hits=raw.get("hits"),
        counterexample=raw.get("counterexample"), exc_type=raw.get("exc_type"), message=message,
        traceback=tuple(Frame(f["path"], int(f["line"]), f["function"]) for f in raw.get("traceback") or []),
        duration_s=raw.get("duration_s"), fixture_digest=digest, base_revision=base_revision,
        fixture_mutated=bool(raw.get("fixture_mutated") if fixture_mutated is None else fixture_mutated),
        signature=signature, signature_parts=parts,
    )


@dataclass(frozen=True)
class RunsRecord:
    """``runs.json``: every property's :class:`RunRecord` on one revision."""

    revision: str
    base_revision: str
    fixture_digest: str
    environment: Mapping[str, str]
    runs: Mapping[str, RunRecord] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "revision": self.revision, "base_revision": self.base_revision,
                "fixture_digest": self.fixture_digest, "environment": dict(self.environment),
                "runs": {pid: r.to_json() for pid, r in self.runs.items()}}


@dataclass(frozen=True)
class ReplayRecord:
    """One base replay (a ``base.sig.json`` entry); ``status`` ``missing`` when it produced no result."""

    prop_id: str
    status: str
    signature: str | None
    signature_parts: Mapping[str, Any] | None
    fixture_digest: str
    base_revision: str

    def base_sig(self) -> BaseSig:
        return BaseSig(self.prop_id, self.signature, self.fixture_digest, self.base_revision)

    def to_json(self) -> dict[str, Any]:
        return {"prop_id": self.prop_id, "status": self.status, "signature": self.signature,
                "signature_parts": dict(self.signature_parts) if self.signature_parts is not None else None,
                "fixture_digest": self.fixture_digest, "base_revision": self.base_revision}


@dataclass(frozen=True)
class BaseSigRecord:
    """``base.sig.json``: the replays of one base revision."""

    base_revision: str
    fixture_digest: str
    replays: tuple[ReplayRecord, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "base_revision": self.base_revision, "fixture_digest": self.fixture_digest,
                "replays": [r.to_json() for r in self.replays]}
