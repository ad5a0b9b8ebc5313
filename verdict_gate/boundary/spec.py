"""The run spec: what the runner tells one oracle process (docs/design.md §8), as one typed record owning its
wire form. The runner writes it as JSON (``--verdict-gate-spec``); the pytest plugin reads it.

Part of the boundary package (standard library only): the plugin loads this package by path, the runner
imports it as :mod:`verdict_gate.boundary.spec`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PropertySpec:
    """One property the process runs: its catalog ``id`` and ``selector`` (a test file, or ``file::node``), its
    recorded ``seed`` (``kind: property`` only), ``kind``, the catalog's ``fresh`` examples, and the extra
    ``passes`` the run asks of it (``example_log``: keep the example log; ``fresh_seed``: draw fresh examples)."""

    id: str
    selector: str
    seed: int | None
    kind: str
    fresh: int | str | None
    passes: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "selector": self.selector, "seed": self.seed, "kind": self.kind, "fresh": self.fresh,
                **self.passes}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> PropertySpec:
        own = ("id", "selector", "seed", "kind", "fresh")
        return cls(str(doc["id"]), str(doc["selector"]), doc.get("seed"), str(doc["kind"]), doc.get("fresh"),
                   {k: v for k, v in doc.items() if k not in own})


@dataclass(frozen=True)
class IsolationSpec:
    """How the process isolates candidate code (docs/design.md §8.2): the ``level``; at ``sandbox`` or
    ``process``, how its candidate worker is started (the proxy's ``Client``: ``method``, ``userns`` and
    ``own_uid`` as the gate found them once; the worker's ``cwd``, ``readonly`` directories, ``scratch`` and the
    ``secrets`` its probe tries to read; the catalog's ``limits``), where the two run (``cpu``, ``worker_cpu``,
    ``spin_s``), how long one answer may take (``answer_timeout``), the directories both share (``shared``: pytest's
    basetemp and ``TMPDIR``), the catalog's ``candidate_modules`` and the modules the base revision provides
    (``reviewed``: only those may shadow the judge's own; ``None``: any)."""

    level: str
    method: str | None = None
    userns: bool | None = None
    own_uid: bool | None = None
    cpu: int | None = None
    worker_cpu: int | None = None
    spin_s: float = 0.0
    answer_timeout: float | None = None
    cwd: str = ""
    readonly: Sequence[str] = ()
    scratch: str | None = None
    secrets: Sequence[str] = ()
    limits: Mapping[str, int] = field(default_factory=dict)
    shared: Sequence[str] = ()
    candidate_modules: Sequence[str] = ()
    reviewed: Sequence[str] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "method": self.method, "userns": self.userns, "own_uid": self.own_uid,
                "cpu": self.cpu, "worker_cpu": self.worker_cpu, "spin_s": self.spin_s,
                "answer_timeout": self.answer_timeout, "cwd": self.cwd, "readonly": list(self.readonly),
                "scratch": self.scratch, "shared": list(self.shared), "secrets": list(self.secrets),
                "limits": dict(self.limits), "candidate_modules": list(self.candidate_modules),
                "reviewed": None if self.reviewed is None else list(self.reviewed)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | None) -> IsolationSpec:
        """The spec of :meth:`to_json`; none at all is level ``none``."""
        if not doc:
            return cls("none")
        return cls(level=str(doc["level"]), method=doc.get("method"), userns=doc.get("userns"),
                   own_uid=doc.get("own_uid"), cpu=doc.get("cpu"), worker_cpu=doc.get("worker_cpu"),
                   spin_s=float(doc.get("spin_s") or 0.0), answer_timeout=doc.get("answer_timeout"),
                   cwd=str(doc.get("cwd", "")), readonly=tuple(doc.get("readonly") or ()), scratch=doc.get("scratch"),
                   shared=tuple(doc.get("shared") or ()), secrets=tuple(doc.get("secrets") or ()),
                   limits=dict(doc.get("limits") or {}), candidate_modules=tuple(doc.get("candidate_modules") or ()),
                   reviewed=None if doc.get("reviewed") is None else tuple(doc["reviewed"]))


@dataclass(frozen=True)
class RunSpec:
    """One oracle process's run: the candidate's ``python_path``, the ``roots`` (``[directory, repository
    prefix]``) its tracebacks are made relative to, the fixture directories it ``watch``es, its ``properties``
    and the property ``files`` it collects, the ``boundary`` package's directory (the plugin loads it by path),
    whether it imports Hypothesis up front, whether its bytecode cache is kept across runs
    (``keep_bytecode``), and its :class:`IsolationSpec`."""

    python_path: Sequence[str]
    roots: Sequence[tuple[str, str]]
    watch: Sequence[str]
    properties: Sequence[PropertySpec]
    files: Sequence[str]
    boundary: str
    hypothesis: bool
    keep_bytecode: bool
    isolation: IsolationSpec

    def to_json(self) -> dict[str, Any]:
        return {"python_path": list(self.python_path), "roots": [[root, prefix] for root, prefix in self.roots],
                "watch": list(self.watch), "properties": [p.to_json() for p in self.properties],
                "files": list(self.files), "boundary": self.boundary, "hypothesis": self.hypothesis,
                "keep_bytecode": self.keep_bytecode, "isolation": self.isolation.to_json()}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> RunSpec:
        """The spec of :meth:`to_json`, as the plugin reads it (``hypothesis`` absent: imported up front)."""
        return cls(python_path=tuple(doc["python_path"]), roots=tuple((str(r), str(p)) for r, p in doc["roots"]),
                   watch=tuple(doc.get("watch") or ()),
                   properties=tuple(PropertySpec.from_json(p) for p in doc["properties"]),
                   files=tuple(doc.get("files") or ()), boundary=str(doc["boundary"]),
                   hypothesis=doc.get("hypothesis", True) is not False, keep_bytecode=bool(doc.get("keep_bytecode")),
                   isolation=IsolationSpec.from_json(doc.get("isolation")))
