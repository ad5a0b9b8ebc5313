"""The cost of example logs (docs/design.md §8.3): a frozen property with its example log vs without.

Reproduce:  .venv/bin/python benchmarks/bench_example_logs.py [--examples 200] [--repeat 3]
One Hypothesis property that fails (a known, frozen-like bug: it rounds half to even) draws
``--examples`` examples. "without" is the normal pass alone (draw until the first failure, then
shrink); "with" adds the logging pass before it (every example drawn, each failure recorded and
swallowed, a digest per example). Both run through the gate's runner at isolation ``process``, in
the same run; prints the best property time (the plugin's duration_s), the best wall-clock time of
the whole pytest process, and the ratios.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROPERTY = '''
from hypothesis import given, settings, strategies as st
from calc import half_up

@settings(max_examples={examples})
@given(n=st.integers(min_value=0, max_value=1_000_000))
def test_half_up(n):
    assert half_up(n) == (n + 1) // 2
'''


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c",
                    "commit.gpgsign=false", "-C", str(repo), *args], check=True, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from verdict_gate import pack
    from verdict_gate.pack.build import write_manifest
    from verdict_gate.run.execute import execute

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        (repo / "src").mkdir(parents=True)
        (repo / "src" / "calc.py").write_text("def half_up(n):\n    return round(n / 2)\n")
        oracle = repo / "oracle"
        (oracle / "properties").mkdir(parents=True)
        (oracle / "fixtures").mkdir()
        (oracle / "fixtures" / "data.json").write_text("{}\n")
        (oracle / "properties" / "test_half.py").write_text(PROPERTY.format(examples=args.examples))
        (oracle / "catalog.yaml").write_text(
            "version: 1\nseed: 7\npython_path: [src]\nisolation: process\nfresh_examples: 0\n"
            "properties:\n  - id: prop.half\n    oracle: properties/test_half.py\n")
        (oracle / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}\n')
        write_manifest(oracle)
        _git(repo, "init", "--quiet")
        _git(repo, "add", "--all")
        _git(repo, "commit", "--quiet", "-m", "bench")
        rev = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        scratch = Path(tmp) / "scratch"
        scratch.mkdir()
        p = pack.load(str(oracle), repo, scratch)
        props = list(p.catalog.properties)
        results: dict[bool, tuple[float, float, int]] = {}
        for attempt, logged in enumerate((False, True) * args.repeat):
            sub = scratch / f"run-{attempt}"
            sub.mkdir()
            t0 = time.perf_counter()
            done = execute(props, p, repo, rev, rev, sub, lambda _m: None, repo=repo,
                           passes={"prop.half": {"example_log": logged}})
            wall = time.perf_counter() - t0
            rec = done.records["prop.half"]
            assert rec.status == "fail", rec
            assert (rec.example_log is not None) == logged
            prop_s = rec.duration_s or 0.0
            best = results.get(logged)
            size = len(rec.example_log or ())
            results[logged] = (min(prop_s, best[0]) if best else prop_s, min(wall, best[1]) if best else wall, size)
    (p0, w0, _), (p1, w1, n) = results[False], results[True]
    print(f"{args.examples} examples, frozen-like failing property, isolation process:")
    print(f"  property time: without log {p0:.3f} s, with log {p1:.3f} s ({n} examples logged), ratio {p1 / p0:.2f}x")
    print(f"  pytest process: without log {w0:.2f} s, with log {w1:.2f} s, ratio {w1 / w0:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
