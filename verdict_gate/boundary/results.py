"""The results stream: one owner for the per-property events the plugin writes and the runner reads.

Part of the boundary package (standard library only): the pytest plugin loads it by path from the
directory the runner writes into the run spec (``boundary``, :mod:`.load`), so the plugin never
imports the ``verdict_gate`` package (a candidate may itself be verdict-gate, and its package must
not stand in for ours); the runner imports it as :mod:`verdict_gate.boundary.results`.

The stream is JSON lines, one object per event, each with ``event`` and ``id``:

- ``start``: a property's first test is about to run (``time``: wall clock, informative);
- ``node``: one test node of the running property is over (``node``: its id, ``outcome``: one of
  :data:`NODE_OUTCOMES`), so that a property lost mid-way (a timeout, a crash) keeps the outcomes of the nodes
  that ran before (the first :data:`MAX_NODES`);
- ``result``: after its last test; the fields of :data:`RESULT_FIELDS`;
- ``uncollected``: the catalog's selector matched no test (``selector``);
- ``collected``: collection is over (``count`` tests kept); the runner bounds collection on its own;
- ``end``: the plugin's closing event (``id`` empty); a stream without it is not trusted.

docs/design.md ("Running properties") describes the trust rules the runner applies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import IO, Any

from .fence.policy import FENCES, LEVELS, METHODS, UNAVAILABLE, UNKNOWN

START, NODE, RESULT, UNCOLLECTED, COLLECTED, END = "start", "node", "result", "uncollected", "collected", "end"
# What the plugin may report: ``crash`` when the candidate worker died under a property.
PLUGIN_STATUSES = ("pass", "fail", "skipped", "crash")
RUNNER_STATUSES = ("timeout", "crash")  # what only the runner records (the process was lost)
TIMEOUT_EXC = "verdict_gate.Timeout"
CRASH_EXC = "verdict_gate.Crash"

_NONE = type(None)


def _field(*types: type, default: Any = None, factory: Any = None) -> Any:
    """A field of an event record with the JSON types it may hold (``bool`` is never an ``int``)."""
    if factory is not None:
        return field(default_factory=factory, metadata={"types": types})
    return field(default=default, metadata={"types": types})


@dataclass
class Failure:
    """One failure of a property's failure set, as the plugin reports it: the test ``node``, the exception's
    qualified type and message, the ``counterexample`` (any JSON value: non-JSON inputs by ``repr``), the
    repository-relative ``traceback`` frames (``{"path", "line", "function"}``), and where it was raised
    (``origin``, ``site``: the signature's parts, docs/design.md §5)."""

    node: str | None = _field(str, _NONE)
    exc_type: str | None = _field(str, _NONE)
    message: str | None = _field(str, _NONE)
    counterexample: Any = None
    traceback: list[dict[str, Any]] = _field(list, factory=list)
    origin: str = _field(str, default="")
    site: str | None = _field(str, _NONE)

    @staticmethod
    def well_formed(raw: Any) -> bool:
        """Whether ``raw`` (a JSON value) is a failure as the plugin writes it."""
        return (isinstance(raw, dict)
                and all(isinstance(raw.get(k), (str, _NONE)) for k in ("node", "exc_type", "message"))
                and isinstance(raw.get("traceback", []), list) and isinstance(raw.get("origin", ""), str)
                and isinstance(raw.get("site"), (str, _NONE)) and _frames_ok(raw.get("traceback") or []))


@dataclass
class Result:
    """A ``result`` event: how one property ran (the stream's record of it, docs/design.md §8).

    The failure fields (``node`` … ``traceback``, ``origin``, ``site``) repeat the first of ``failures``, the
    failure set (:class:`Failure` each), and stay ``None``/empty on a pass. ``example_log`` / ``fresh_log``:
    ``{"digest", "held", "input"?}`` per drawn example (docs/design.md §8.3). ``output_tail``: the last lines of
    pytest's own output, on a record the runner writes for a lost process. ``inputs_changed``: how many
    candidate calls changed a drawn value in place (the evidence keeps the values as drawn). ``boundary``: the
    limits of the isolation boundary the property met (``{"message", "where"}``): the gate's failure, never the
    candidate's (docs/design.md §8.1). ``nodes``: each test node's outcome as plain pytest reports it
    (:data:`NODE_OUTCOMES`), the property's first :data:`MAX_NODES`; ``nodes_more``: how many
    nodes ran beyond them (``None`` both on a lost process's record). ``isolation``: ``{"level", "method",
    "fences": {name: held}}`` the property ran at (docs/design.md, "Isolation"); ``method`` ``unavailable``
    (with ``why``) when the host could not give the level.

    Each field carries the JSON types it may hold (:data:`RESULT_FIELDS`, which :func:`well_formed` checks):
    a field is added here, once.
    """

    id: str
    status: str = field(metadata={"types": (str,)})
    seed: int | None = _field(int, _NONE)
    hypothesis: bool = _field(bool, default=False)
    trials: int | None = _field(int, _NONE)
    hits: int | None = _field(int, _NONE)
    items: int | None = _field(int, _NONE)
    duration_s: float | None = _field(int, float, _NONE)
    fixture_mutated: bool = _field(bool, default=False)
    node: str | None = _field(str, _NONE)
    exc_type: str | None = _field(str, _NONE)
    message: str | None = _field(str, _NONE)
    counterexample: Any = None
    traceback: list[dict[str, Any]] = _field(list, factory=list)
    isolation: dict[str, Any] | None = _field(dict, _NONE)
    failures: list[dict[str, Any]] = _field(list, _NONE, factory=list)
    example_log: list[dict[str, Any]] | None = _field(list, _NONE)
    fresh_seed: int | None = _field(int, _NONE)
    fresh_log: list[dict[str, Any]] | None = _field(list, _NONE)
    output_tail: str | None = _field(str, _NONE)
    inputs_changed: int = _field(int, default=0)
    boundary: list[dict[str, str]] = _field(list, factory=list)
    origin: str | None = _field(str, _NONE)
    site: str | None = _field(str, _NONE)
    nodes: dict[str, str] | None = _field(dict, _NONE)
    nodes_more: int | None = _field(int, _NONE)

    def to_json(self) -> dict[str, Any]:
        """The event as a line of the stream carries it."""
        out: dict[str, Any] = {"event": RESULT}
        for f in fields(self):
            out[f.name] = getattr(self, f.name)
        for name in ("traceback", "failures", "boundary"):
            out[name] = list(out[name] or [])
        return out


# A ``result`` event's fields and their types (bool is never accepted as an int); ``counterexample`` is any
# JSON value (non-JSON inputs by repr), so it has no type to check.
RESULT_FIELDS: dict[str, tuple[type, ...]] = {f.name: f.metadata["types"] for f in fields(Result)
                                              if f.metadata.get("types")}
# A test node's outcome as plain pytest's summary names it (``nodes``: node id → one of these).
NODE_OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")
MAX_NODES = 10_000  # test nodes per property whose outcome a record keeps; the rest are counted (``nodes_more``)


def start(prop_id: str, time: float) -> dict[str, Any]:
    return {"event": START, "id": prop_id, "time": time}


def node(prop_id: str, nodeid: str, outcome: str) -> dict[str, Any]:
    """One test node of ``prop_id`` is over with ``outcome`` (:data:`NODE_OUTCOMES`)."""
    return {"event": NODE, "id": prop_id, "node": nodeid, "outcome": outcome}


def node_well_formed(event: dict[str, Any]) -> bool:
    """A ``node`` event as the plugin writes it."""
    return isinstance(event.get("node"), str) and event.get("outcome") in NODE_OUTCOMES


def uncollected(prop_id: str, selector: str) -> dict[str, Any]:
    return {"event": UNCOLLECTED, "id": prop_id, "selector": selector}


def collected(count: int) -> dict[str, Any]:
    """Collection is over: ``count`` tests belong to the catalog's properties."""
    return {"event": COLLECTED, "id": "", "count": count}


def end() -> dict[str, Any]:
    return {"event": END, "id": ""}


def result(prop_id: str, status: str, **fields_: Any) -> dict[str, Any]:
    """A ``result`` event's line, :class:`Result`'s fields as keywords: how the plugin writes one (it holds its
    state in dicts until it holds typed state)."""
    return Result(prop_id, status, **fields_).to_json()


def lost(prop_id: str, status: str, *, seed: int | None, node: str, exc_type: str, message: str,
         isolation: dict[str, Any] | None = None, nodes: dict[str, str] | None = None) -> dict[str, Any]:
    """The ``result`` event the runner writes for a property whose process timed out or crashed (or that the
    host could not isolate): a deterministic ``exc_type`` and ``message`` so that it, too, has a signature;
    ``nodes``: the outcomes of the test nodes its ``node`` events reported before it was lost."""
    return Result(prop_id, status, seed=seed, hypothesis=False, trials=None, hits=None, items=None, duration_s=None,
                  fixture_mutated=False, node=node, exc_type=exc_type, message=message,
                  isolation=isolation, nodes=nodes or None).to_json()


def dumps(event: dict[str, Any]) -> str:
    """One line of the stream (a newline at the end)."""
    return json.dumps(event, sort_keys=True, default=repr) + "\n"


def write(out: IO[str], event: dict[str, Any]) -> None:
    """Append ``event`` to the open stream ``out`` and flush (the runner reads as it grows)."""
    out.write(dumps(event))
    out.flush()


def parse(line: str) -> tuple[str, str, dict[str, Any]]:
    """``(kind, id, event)`` of one line: the event's kind (``event``), its property's id, the event.

    Raises:
        ValueError: not a JSON object with ``event`` and ``id``.
    """
    try:
        event = json.loads(line)
        return event["event"], event["id"], event
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"not a results event ({type(exc).__name__})") from None


def well_formed(event: dict[str, Any]) -> bool:
    """A ``result`` event as the plugin writes it: a plugin status, fields of the right types."""
    if event.get("status") not in PLUGIN_STATUSES:
        return False
    for name, types in RESULT_FIELDS.items():
        if name in event and (not isinstance(event[name], types)
                              or (bool not in types and isinstance(event[name], bool))):
            return False
    if not all(Failure.well_formed(failure) for failure in event.get("failures") or []):
        return False
    if not all(isinstance(b, dict) and isinstance(b.get("message"), str) and isinstance(b.get("where"), str)
               for b in event.get("boundary") or []):
        return False
    if not all(isinstance(k, str) and v in NODE_OUTCOMES for k, v in (event.get("nodes") or {}).items()):
        return False
    if (event.get("nodes_more") or 0) < 0:
        return False
    return _frames_ok(event.get("traceback") or [])


def _frames_ok(frames: list[Any]) -> bool:
    return all(isinstance(f, dict) and isinstance(f.get("path"), str) and isinstance(f.get("line"), int)
               and isinstance(f.get("function"), str) for f in frames)


# What a property's isolation record may say about how it ran (runs.json's ``isolation``).
ISOLATION_METHODS = (*(m for level in LEVELS for m in METHODS[level]), UNAVAILABLE,
                     UNKNOWN)
MAX_WHY = 2000


def isolation(raw: Any, asked: str) -> dict[str, Any]:
    """A ``result`` event's ``isolation``, reduced to what runs.json holds: the level, the method, each fence
    of :data:`FENCES` and each probe's outcome, the worker's uid and what Landlock and seccomp
    enforced; ``method`` :data:`UNKNOWN` at the ``asked`` level when the run was lost before it
    said (a timeout, a crash, a tampered stream)."""
    if not isinstance(raw, Mapping):
        return {"level": asked, "method": UNKNOWN, "fences": {}}
    found = raw.get("fences")
    fences: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    method = raw.get("method")
    out: dict[str, Any] = {
        "level": raw.get("level") if raw.get("level") in LEVELS else asked,
        "method": method if method in ISOLATION_METHODS else UNKNOWN,
        "fences": {f: fences[f] is True for f in FENCES if f in fences},
    }
    probes = raw.get("probes")
    if isinstance(probes, Mapping):
        out["probes"] = {str(label)[:64]: {"held": r.get("held") is True, "detail": str(r.get("detail"))[:MAX_WHY]}
                         for label, r in probes.items() if isinstance(r, Mapping)}
    if type(raw.get("uid")) is int:
        out["uid"] = raw["uid"]
    landlock = raw.get("landlock")
    if isinstance(landlock, Mapping) and type(landlock.get("abi")) is int:
        out["landlock"] = {"abi": landlock["abi"], "net": landlock.get("net") is True,
                           "scope": landlock.get("scope") is True}
    if isinstance(raw.get("seccomp"), bool):
        out["seccomp"] = raw["seccomp"]
    if raw.get("why"):
        out["why"] = str(raw["why"])[:MAX_WHY]
    return out
