"""``verdict-gate audit`` at scale: N properties, half of them failing with a freeze reproduced on the base.

Reproduce:  .venv/bin/python benchmarks/bench_audit.py [--sizes 10 200 2000]
Builds the evidence the pipeline's scoring step and the report write for N properties (in memory, then into a
temp dir under /tmp, removed at the end) and prints, each the best of 3:
  - the baseline: ``json.load`` and ``hashlib.sha256`` of every evidence file (the least a reader does);
  - ``verdict_gate.run.audit.audit`` in-process on the same bytes (schemas, exact form, digests, inventory, the
    decision re-derived, every derived file rendered again), and its ratio to the baseline;
  - ``verdict-gate audit DIR`` as a process (wall time, start-up included; time.perf_counter around it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verdict_gate.core.evidence import Evidence
from verdict_gate.core.records import BaseSigRecord, FailureRecord, ReplayRecord, RunRecord, RunsRecord
from verdict_gate.core.score import score
from verdict_gate.core.signature import make_signature
from verdict_gate.host.files import parse_catalog, parse_ledger
from verdict_gate.report import render_all
from verdict_gate.run.audit import audit

HEAD, BASE, DIGEST = "1" * 40, "2" * 40, "d" * 64


def _failure(pid: str) -> FailureRecord:
    sig = make_signature(prop_id=pid, node=f"properties/test_{pid}.py::test", seed=7,
                         exc_type="builtins.AssertionError", message="wrong", counterexample={"x": 1})
    return FailureRecord(node=sig.parts["node"], exc_type="builtins.AssertionError", message="wrong",
                         counterexample={"x": 1}, traceback=(), signature=sig.value, signature_parts=dict(sig.parts))


def evidence(n: int) -> dict[str, bytes]:
    """The evidence files of a decided run of ``n`` properties (every second one a reproduced frozen failure)."""
    ids = [f"p{i}" for i in range(n)]
    failing = {pid: _failure(pid) for pid in ids[::2]}
    catalog_text = json.dumps({"version": 1, "seed": 7, "properties": [
        {"id": pid, "oracle": f"properties/test_{pid}.py", "kind": "property"} for pid in ids]}) + "\n"
    ledger_text = json.dumps({"version": 1, "freezes": [
        {"prop_id": pid, "signature": f.signature, "signature_parts": f.signature_parts, "fixture_digest": DIGEST,
         "fixture_format": "tree-v2", "base_revision": BASE, "reason": "known", "first_seen": "2026-11-01"}
        for pid, f in failing.items()]}, indent=2) + "\n"
    catalog = parse_catalog(catalog_text, "catalog.yaml")
    ledger = parse_ledger(ledger_text, "freeze_ledger.json", known_ids=ids)
    manifest = {"catalog.yaml": hashlib.sha256(catalog_text.encode()).hexdigest(),
                "freeze_ledger.json": hashlib.sha256(ledger_text.encode()).hexdigest()}
    manifest_text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    runs = {pid: RunRecord(status="fail" if pid in failing else "pass", node=f"properties/test_{pid}.py", seed=7,
                           trials=100, hits=100, counterexample=None, exc_type=None, message=None, traceback=(),
                           duration_s=0.1, fixture_digest=DIGEST, base_revision=BASE, fixture_mutated=False,
                           signature=failing[pid].signature if pid in failing else None,
                           signature_parts=failing[pid].signature_parts if pid in failing else None,
                           isolation={"level": "sandbox", "method": "bwrap", "fences": {"network": True}},
                           failures=(failing[pid],) if pid in failing else ()) for pid in ids}
    tries = tuple(ReplayRecord(prop_id=pid, status="fail", signature=f.signature, signature_parts=f.signature_parts,
                               fixture_digest=DIGEST, base_revision=BASE, failures=(f,), hits=100)
                  for pid, f in failing.items())
    ev = Evidence(repo="", head_revision=HEAD, base_ref="main", base_revision=BASE, policy="lenient",
                  pack={"source": "git:main:oracle", "kind": "git", "files": 2, "pack_root": "oracle",
                        "sha256": hashlib.sha256(manifest_text.encode()).hexdigest()},
                  claimed=catalog.claimed, properties=catalog.by_id(), run_id="bench",
                  oracle_files={"catalog.yaml": catalog_text, "freeze_ledger.json": ledger_text,
                                "manifest.sha256": manifest_text})
    ev.fixture = {"version": 1, "format": "tree-v2", "digest": DIGEST, "revision": HEAD,
                  "roots": {"pack": "fixtures", "repo": []}, "files": 0, "bytes": 0, "normalizers": []}
    ev.oracle_edited = {"version": 1, "base_revision": BASE, "head_revision": HEAD,
                        "buckets": {b: [] for b in ("oracle", "control", "fixtures", "src", "generated", "other")},
                        "oracle_moved": [], "control_edits": [], "void": False, "running": None, "workflow_edits": []}
    ev.runs = RunsRecord(revision=HEAD, base_revision=BASE, fixture_digest=DIGEST, run_id="bench", runs=runs,
                         environment={"PYTHONHASHSEED": "0", "TZ": "UTC", "python": "3", "pytest": "8",
                                      "hypothesis": "6"})
    ev.base_sig = BaseSigRecord(base_revision=BASE, fixture_digest=DIGEST, replays=tries)
    ev.ledger, ev.today, ev.ancestors, ev.items = ledger, dt.date(2026, 11, 30), {BASE: True}, n
    result = score(catalog, ledger, runs, oracle_moved=(), replays=[t.base_sig() for t in tries], base_revision=BASE,
                   ancestors=ev.ancestors, policy="lenient", today=ev.today, ran=n, items=n)
    ev.verdicts, ev.why, ev.outcome = result.verdicts, result.promotion.why, result.outcome
    return {name: text.encode() for name, text in render_all(ev).items()}


def best(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def baseline(files: dict[str, bytes]) -> None:
    """What a reader does at the least: the sha256 of every file, and every JSON file parsed."""
    for name, data in files.items():
        hashlib.sha256(data).hexdigest()
        if name.endswith((".json", ".sarif", ".digest", ".sha256")):
            json.loads(data)


def audited(files: dict[str, bytes]) -> None:
    audit.__globals__["parsed"].cache_clear()  # the parse cache would make every repeat after the first free
    audit(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 200, 2000])
    args = parser.parse_args()
    print(f"{'properties':>10} {'bytes':>10} {'json+sha256':>12} {'audit':>9} {'ratio':>7} {'CLI':>8}")
    for n in args.sizes:
        files = evidence(n)
        assert audit(files).ok, [f.line() for f in audit(files).findings][:5]

        base, took = best(lambda files=files: baseline(files)), best(lambda files=files: audited(files))
        work = Path(tempfile.mkdtemp(prefix="vg-bench-audit-", dir="/tmp"))
        try:
            for name, data in files.items():
                (work / name).write_bytes(data)
            argv = [sys.executable, "-m", "verdict_gate", "audit", str(work)]
            cli = best(lambda argv=argv: subprocess.run(argv, check=True, capture_output=True))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        size = sum(len(b) for b in files.values())
        print(f"{n:>10} {size:>10} {base:>11.3f}s {took:>8.3f}s {took / base:>6.1f}x {cli:>7.2f}s")


if __name__ == "__main__":
    main()
