"""Ledger and catalog at scale: N properties × N freezes, against ``json.load`` of the same file.

Reproduce:  .venv/bin/python benchmarks/bench_ledger.py [--freezes 10000]
Prints, each the best of 3 (time.perf_counter, in-process):
  - ``json.load`` of the ledger file (the baseline) and the gate's ledger load
    (``parse_ledger``: JSON, schema validation, signatures, dates), and their ratio;
  - the catalog load (``parse_catalog``) of N properties;
  - the pure decision (``verdict_gate.core.score.score``, worst case: every property failed with
    its frozen signature, reproduced on the base) and the decision phase (ledger load + score).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import tempfile
import time
from pathlib import Path

import yaml

from verdict_gate.core.records import RunRecord
from verdict_gate.core.score import score
from verdict_gate.core.signature import signature_of
from verdict_gate.core.verdict import BaseSig
from verdict_gate.host.files import parse_catalog, parse_ledger

BASE = "b" * 40
DIGEST = "d" * 64


def make(n: int) -> tuple[str, str]:
    """Catalog text with ``n`` properties and ledger text with one freeze for each."""
    catalog = {"version": 1, "seed": 0, "properties": [
        {"id": f"prop.p{i:05d}", "oracle": "properties/test_p.py", "node": f"test_p{i:05d}", "kind": "example"}
        for i in range(n)]}
    freezes = []
    for i in range(n):
        parts = {"algorithm": "sig-v1", "prop_id": f"prop.p{i:05d}", "node": f"properties/test_p.py::test_p{i:05d}",
                 "seed": None, "exc_type": "builtins.AssertionError", "message_digest": f"{i:016x}",
                 "counterexample": None}
        freezes.append({"prop_id": parts["prop_id"], "signature": signature_of(parts), "signature_parts": parts,
                        "fixture_digest": DIGEST, "base_revision": BASE, "reason": f"known flaky #{i}",
                        "first_seen": "2026-11-01"})
    return yaml.safe_dump(catalog), json.dumps({"version": 1, "freezes": freezes}, indent=2)


def best(fn, repeat: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--freezes", type=int, default=10_000)
    args = ap.parse_args()
    cat_text, led_text = make(args.freezes)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "freeze_ledger.json"
        path.write_text(led_text)

        def plain() -> object:
            with open(path, encoding="utf-8") as fh:
                return json.load(fh)

        def ours() -> object:
            return parse_ledger(path.read_text(encoding="utf-8"), str(path))

        t_json, _ = best(plain)
        t_ledger, ledger = best(ours)
    t_cat, catalog = best(lambda: parse_catalog(cat_text, "catalog.yaml"))
    # Worst case for the decision: every property failed with its frozen signature, reproduced on the base.
    runs = {f.prop_id: RunRecord(status="fail", node=f.signature_parts["node"], seed=None, trials=1, hits=1,
                                 counterexample=None, exc_type="builtins.AssertionError", message="x", traceback=(),
                                 duration_s=0.0, fixture_digest=DIGEST, base_revision=BASE, fixture_mutated=False,
                                 signature=f.signature, signature_parts=f.signature_parts,
                                 isolation={"level": "sandbox", "method": "bwrap", "fences": {}})
            for f in ledger.freezes}  # type: ignore[attr-defined]
    replays = [BaseSig(f.prop_id, f.signature, DIGEST, BASE) for f in ledger.freezes]  # type: ignore[attr-defined]

    def decide() -> object:
        return score(catalog, ledger, runs, oracle_moved=(), replays=replays, base_revision=BASE,  # type: ignore[arg-type]
                     ancestors={BASE: True}, policy="lenient", today=dt.date(2026, 12, 1),
                     ran=len(runs), items=len(runs))

    t_score, _ = best(decide)
    n = args.freezes
    print(f"properties={n} freezes={n} ledger bytes={len(led_text)}")
    print(f"json.load: {t_json:.3f} s   ledger load: {t_ledger:.3f} s   ratio: {t_ledger / t_json:.1f}x "
          "(target <= 10x)")
    print(f"catalog load: {t_cat:.3f} s   pure decision: {t_score:.3f} s")
    print(f"decision phase (ledger load + score): {t_ledger + t_score:.3f} s (target <= 0.5 s)")

if __name__ == "__main__":
    main()
