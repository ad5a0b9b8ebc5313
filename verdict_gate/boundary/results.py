"""The results stream: one owner for the per-property records the plugin writes and the runner reads.

Part of the boundary package (standard library only): the pytest plugin loads it by path from the
directory the runner writes into the run spec (``boundary``, :mod:`.load`), so the plugin never
imports the ``verdict_gate`` package (a candidate may itself be verdict-gate, and its package must
not stand in for ours); the runner imports it as :mod:`verdict_gate.boundary.results`.

The stream is JSON lines, one object per event, each with ``event`` and ``id``:

- ``start``: a property's first test is about to run (``time``: wall clock, informative);
- ``result``: after its last test; the fields of :data:`RESULT_FIELDS`;
- ``uncollected``: the catalog's selector matched no test (``selector``);
- ``collected``: collection is over (``count`` tests kept); the runner bounds collection on its own;
- ``end``: the plugin's closing record (``id`` empty); a stream without it is not trusted.

docs/design.md ("Running properties") describes the trust rules the runner applies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import IO, Any

from .fence.policy import FENCES, LEVELS, METHODS, UNAVAILABLE, UNKNOWN

START, RESULT, UNCOLLECTED, COLLECTED, END = "start", "result", "uncollected", "collected", "end"
# What the plugin may report: ``crash`` when the candidate worker died under a property.
PLUGIN_STATUSES = ("pass", "fail", "skipped", "crash")
RUNNER_STATUSES = ("timeout", "crash")  # what only the runner records (the process was lost)
TIMEOUT_EXC = "verdict_gate.Timeout"
CRASH_EXC = "verdict_gate.Crash"

_NONE = type(None)
# A ``result`` record's fields and their types (bool is never accepted as an int).
RESULT_FIELDS: dict[str, tuple[type, ...]] = {
    "status": (str,), "seed": (int, _NONE), "hypothesis": (bool,), "trials": (int, _NONE), "hits": (int, _NONE),
    "items": (int, _NONE), "duration_s": (int, float, _NONE), "fixture_mutated": (bool,),
    "node": (str, _NONE), "exc_type": (str, _NONE), "message": (str, _NONE), "traceback": (list,),
    "isolation": (dict, _NONE), "failures": (list, _NONE), "example_log": (list, _NONE),
    "fresh_seed": (int, _NONE), "fresh_log": (list, _NONE), "output_tail": (str, _NONE),
    "inputs_changed": (int,), "boundary": (list,), "origin": (str, _NONE), "site": (str, _NONE),
    "nodes": (dict, _NONE), "nodes_more": (int, _NONE),
}
# A test node's outcome as plain pytest's summary names it (``nodes``: node id → one of these).
NODE_OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")
# ``counterexample`` is any JSON value (non-JSON inputs by repr), so it has no type to check.


def start(prop_id: str, time: float) -> dict[str, Any]:
    return {"event": START, "id": prop_id, "time": time}


def uncollected(prop_id: str, selector: str) -> dict[str, Any]:
    return {"event": UNCOLLECTED, "id": prop_id, "selector": selector}


def collected(count: int) -> dict[str, Any]:
    """Collection is over: ``count`` tests belong to the catalog's properties."""
    return {"event": COLLECTED, "id": "", "count": count}


def end() -> dict[str, Any]:
    return {"event": END, "id": ""}


def result(prop_id: str, status: str, *, seed: int | None, hypothesis: bool, trials: int | None,
           hits: int | None, items: int | None, duration_s: float | None, fixture_mutated: bool,
           node: str | None = None, exc_type: str | None = None, message: str | None = None,
           counterexample: Any = None, traceback: list[dict[str, Any]] | None = None,
           isolation: dict[str, Any] | None = None, failures: list[dict[str, Any]] | None = None,
           example_log: list[dict[str, Any]] | None = None, fresh_seed: int | None = None,
           fresh_log: list[dict[str, Any]] | None = None, output_tail: str | None = None,
           inputs_changed: int = 0, boundary: list[dict[str, str]] | None = None,
           origin: str | None = None, site: str | None = None, nodes: dict[str, str] | None = None,
           nodes_more: int | None = None) -> dict[str, Any]:
    """A ``result`` record; the failure fields (node … traceback) stay ``None``/empty on a pass.

    ``failures``: the failure set (each with ``node``, ``exc_type``, ``message``, ``counterexample``,
    ``traceback``); the top-level failure fields repeat the first. ``example_log`` / ``fresh_log``:
    ``{"digest", "held", "input"?}`` per drawn example (docs/design.md §8.3). ``output_tail``: the
    last lines of pytest's own output, on a record the runner writes for a lost process. ``inputs_changed``:
    how many candidate calls changed a drawn value in place (the evidence keeps the values as drawn).
    ``origin``, ``site``: where the first failure was raised and the pack's line it came through (the
    signature's parts, docs/design.md §5). ``boundary``: the limits of the isolation boundary the property
    met (``{"message", "where"}``): the gate's failure, never the candidate's (docs/design.md §8.1).
    ``nodes``: each test node's outcome as plain pytest reports it (:data:`NODE_OUTCOMES`), the property's
    first 10,000 (the plugin's ``MAX_NODES``); ``nodes_more``: how many nodes ran beyond them (``None`` both
    on a lost process's record).

    ``isolation``: ``{"level", "method", "fences": {name: held}}`` the property ran at (docs/design.md,
    "Isolation"); ``method`` ``unavailable`` (with ``why``) when the host could not give the level."""
    return {"event": RESULT, "id": prop_id, "status": status, "seed": seed, "hypothesis": hypothesis,
            "trials": trials, "hits": hits, "items": items, "duration_s": duration_s,
            "fixture_mutated": fixture_mutated, "node": node, "exc_type": exc_type, "message": message,
            "counterexample": counterexample, "traceback": list(traceback or []), "isolation": isolation,
            "failures": list(failures or []), "example_log": example_log, "fresh_seed": fresh_seed,
            "fresh_log": fresh_log, "output_tail": output_tail, "inputs_changed": inputs_changed,
            "boundary": list(boundary or []), "origin": origin, "site": site, "nodes": nodes,
            "nodes_more": nodes_more}


def lost(prop_id: str, status: str, *, seed: int | None, node: str, exc_type: str, message: str,
         isolation: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record the runner writes for a property whose process timed out or crashed (or that the
    host could not isolate): a deterministic ``exc_type`` and ``message`` so that it, too, has a signature."""
    return result(prop_id, status, seed=seed, hypothesis=False, trials=None, hits=None, items=None,
                  duration_s=None, fixture_mutated=False, node=node, exc_type=exc_type, message=message,
                  isolation=isolation)


def dumps(record: dict[str, Any]) -> str:
    """One line of the stream (a newline at the end)."""
    return json.dumps(record, sort_keys=True, default=repr) + "\n"


def write(out: IO[str], record: dict[str, Any]) -> None:
    """Append ``record`` to the open stream ``out`` and flush (the runner reads as it grows)."""
    out.write(dumps(record))
    out.flush()


def parse(line: str) -> tuple[str, str, dict[str, Any]]:
    """``(event, id, record)`` of one line.

    Raises:
        ValueError: not a JSON object with ``event`` and ``id``.
    """
    try:
        record = json.loads(line)
        return record["event"], record["id"], record
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"not a results record ({type(exc).__name__})") from None


def well_formed(record: dict[str, Any]) -> bool:
    """A ``result`` record as the plugin writes it: a plugin status, fields of the right types."""
    if record.get("status") not in PLUGIN_STATUSES:
        return False
    for name, types in RESULT_FIELDS.items():
        if name in record and (not isinstance(record[name], types)
                               or (bool not in types and isinstance(record[name], bool))):
            return False
    for failure in record.get("failures") or []:
        if not (isinstance(failure, dict) and all(isinstance(failure.get(k), (str, _NONE)) for k in
                                                  ("node", "exc_type", "message"))
                and isinstance(failure.get("traceback", []), list)):
            return False
        if not isinstance(failure.get("origin", ""), str) or not isinstance(failure.get("site"), (str, _NONE)):
            return False
        frames = failure.get("traceback") or []
        if not all(isinstance(f, dict) and isinstance(f.get("path"), str) and isinstance(f.get("line"), int)
                   and isinstance(f.get("function"), str) for f in frames):
            return False
    if not all(isinstance(b, dict) and isinstance(b.get("message"), str) and isinstance(b.get("where"), str)
               for b in record.get("boundary") or []):
        return False
    if not all(isinstance(k, str) and v in NODE_OUTCOMES for k, v in (record.get("nodes") or {}).items()):
        return False
    if (record.get("nodes_more") or 0) < 0:
        return False
    frames = record.get("traceback") or []
    return all(isinstance(f, dict) and isinstance(f.get("path"), str) and isinstance(f.get("line"), int)
               and isinstance(f.get("function"), str) for f in frames)


# What a property's isolation record may say about how it ran (runs.json's ``isolation``).
ISOLATION_METHODS = (*(m for level in LEVELS for m in METHODS[level]), UNAVAILABLE,
                     UNKNOWN)
MAX_WHY = 2000


def isolation(raw: Any, asked: str) -> dict[str, Any]:
    """A result record's ``isolation``, reduced to what runs.json holds: the level, the method, each fence
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
