"""The cost of example logs (docs/design.md §8.3): a frozen property with its example log vs without.

Reproduce:  .venv/bin/python benchmarks/bench_example_logs.py [--examples 200] [--repeat 3]
            [--baseline-python PY]
One Hypothesis property that fails (a known, frozen-like bug: it rounds half to even) draws
``--examples`` examples. "without" is the normal pass alone (draw until the first failure, then
shrink); "with" adds the logging pass before it (every example drawn, each failure recorded and
swallowed, a digest per example). Both run through the gate's runner at isolation ``process``, in
the same run; prints the best property time (the plugin's duration_s), the best wall-clock time of
the whole pytest process, and the ratios.

``--baseline-python PY``: also measure the verdict-gate that interpreter imports (e.g. the ``.venv`` of a
checkout of an earlier commit), the two alternating round by round in child processes, and print this
tree's figures as ratios of the baseline's (the cost of a change to example logs and signatures, in one
run).
"""

from __future__ import annotations

import argparse
import json
import statistics
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


def measure(examples: int, repeat: int) -> dict[str, float | int]:
    """Best property and process times, with and without the example log, of ``repeat`` alternations."""
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
        (oracle / "properties" / "test_half.py").write_text(PROPERTY.format(examples=examples))
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
        for attempt, logged in enumerate((False, True) * repeat):
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
    return {"prop_without": p0, "prop_with": p1, "wall_without": w0, "wall_with": w1, "logged": n}


def _child(python: str, examples: int) -> dict[str, float | int]:
    proc = subprocess.run([python, __file__, "--json", "--examples", str(examples), "--repeat", "1"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"bench_example_logs: {python} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-python", default=None, help="an interpreter whose verdict-gate is the baseline")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.json:
        print(json.dumps(measure(args.examples, args.repeat)))
        return
    if not args.baseline_python:
        got = measure(args.examples, args.repeat)
        print(f"{args.examples} examples, frozen-like failing property, isolation process:")
        print(f"  property time: without log {got['prop_without']:.3f} s, with log {got['prop_with']:.3f} s "
              f"({got['logged']} examples logged), ratio {got['prop_with'] / got['prop_without']:.2f}x")
        print(f"  pytest process: without log {got['wall_without']:.2f} s, with log {got['wall_with']:.2f} s, "
              f"ratio {got['wall_with'] / got['wall_without']:.2f}x")
        return
    trees = {"this tree": sys.executable, "baseline": args.baseline_python}
    series: dict[str, list[dict[str, float | int]]] = {name: [] for name in trees}
    for _round in range(args.repeat):
        for name, python in trees.items():
            series[name].append(_child(python, args.examples))
    print(f"{args.examples} examples, frozen-like failing property, isolation process, median of {args.repeat} "
          f"rounds (best of with/without in each):")
    print(f"{'tree':<12} {'property without':>17} {'with log':>9} {'ratio':>6} {'process without':>16} "
          f"{'with log':>9} {'ratio':>6}")
    med = {name: {k: statistics.median(float(r[k]) for r in rows) for k in rows[0]} for name, rows in series.items()}
    for name, m in med.items():
        prop_ratio, wall_ratio = m["prop_with"] / m["prop_without"], m["wall_with"] / m["wall_without"]
        print(f"{name:<12} {m['prop_without']:>16.3f}s {m['prop_with']:>8.3f}s {prop_ratio:>5.2f}x "
              f"{m['wall_without']:>15.2f}s {m['wall_with']:>8.2f}s {wall_ratio:>5.2f}x")
    new, old = med["this tree"], med["baseline"]
    print(f"this tree / baseline: property with log {new['prop_with'] / old['prop_with']:.2f}x, "
          f"without {new['prop_without'] / old['prop_without']:.2f}x; process with log "
          f"{new['wall_with'] / old['wall_with']:.2f}x, without {new['wall_without'] / old['wall_without']:.2f}x")

if __name__ == "__main__":
    main()
