"""What drawing fresh examples inside a property's budget costs in detection (issue 22, docs/design.md §8.3).

Reproduce:  .venv/bin/python benchmarks/bench_fresh_detection.py [--runs 10] [--fresh 0 20% 50%]
            [--baseline-python PY]

The attack corpus's special-casing case, ``tests/attacks/cases/memorizes_recorded_examples``: a patch
whose ``add`` is right only for the inputs the public recorded seed draws (it runs Hypothesis itself
with the catalog's seed and the recorded share of the budget) and wrong elsewhere. Two variants:
``dense`` (wrong on every other input: the corpus case) and ``sparse`` (wrong on about one input in
ten of the others: a bug the recorded examples happen to miss). For each ``fresh_examples`` setting
the base and the patch are gated ``--runs`` times, each with its own run id (so its own fresh seed),
on a copy of tests/attacks/base whose catalog keeps ``prop.add`` alone (100 examples, Hypothesis's
default). A run *detects* when ``prop.add`` is ``fail``; the reason says which pass found it
(``new_failing_examples``: a fresh example; anything else: the recorded seed's own examples).

``--baseline-python PY``: also gate with the verdict-gate that interpreter imports (a checkout of an
earlier commit, whose fresh examples were drawn beside the budget: ``fresh_examples`` there is a count
of extra examples, and the patch memorizes all 100 recorded ones).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "tests" / "attacks" / "base"
CASE = ROOT / "tests" / "attacks" / "cases" / "memorizes_recorded_examples" / "src" / "calc" / "__init__.py"
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
CATALOG = ("version: 1\nseed: 20261130\npack_root: oracle\npython_path: [src]\nfresh_examples: {fresh}\n"
           "properties:\n  - {{id: prop.add, oracle: properties/test_arith.py, node: test_add, timeout: 30}}\n")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-C", str(repo), *args],
                   check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def recorded_share(fresh: str, baseline: bool) -> int:
    """How many of test_add's 100 examples the recorded seed draws: what the patch memorizes."""
    if baseline:
        return 100
    sys.path.insert(0, str(ROOT))
    from verdict_gate_plugin import fresh_split

    return fresh_split(int(fresh) if fresh.isdigit() else fresh, 100)[0]


def patch_source(recorded: int, variant: str) -> str:
    """The corpus case's ``calc/__init__.py`` memorizing ``recorded`` examples; ``sparse``: wrong off them
    only where ``(a * 31 + b) % 10 == 0``."""
    text = CASE.read_text().replace("max_examples=80", f"max_examples={recorded}")
    assert f"max_examples={recorded}" in text, "the corpus case changed: update this benchmark"
    if variant == "sparse":
        text = text.replace("_right(a, b) + 1", "_right(a, b) + ((a * 31 + b) % 10 == 0)")
    return text


def build(root: Path, fresh: str, recorded: int, variant: str, python: str) -> Path:
    repo = root / "repo"
    shutil.copytree(BASE, repo)
    (repo / "oracle" / "catalog.yaml").write_text(CATALOG.format(fresh=json.dumps(fresh) if "%" in fresh else fresh))
    subprocess.run([python, "-m", "verdict_gate", "manifest", "write", str(repo / "oracle")], check=True,
                   capture_output=True)
    _git(repo, "init", "--quiet")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "base")
    _git(repo, "checkout", "--quiet", "-b", "candidate")
    (repo / "src" / "calc" / "__init__.py").write_text(patch_source(recorded, variant))
    _git(repo, "commit", "--quiet", "-am", "memorize the recorded examples")
    return repo


def gate(repo: Path, out: Path, run_id: str, python: str) -> tuple[str, str]:
    proc = subprocess.run([python, "-m", "verdict_gate", "run", "--repo", str(repo), "--base", "main",
                           "--pack", "git:main:oracle", "--out", str(out)],
                          capture_output=True, text=True, env={**os.environ, "VERDICT_GATE_RUN_ID": run_id})
    try:
        v = json.loads((out / "verdicts.json").read_text())["verdicts"]["prop.add"]
    except (OSError, KeyError, ValueError):
        raise SystemExit(f"the gate wrote no verdict (exit {proc.returncode}):\n{proc.stderr[-3000:]}") from None
    return v["verdict"], v["reason"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="gate runs (run ids) per setting and variant")
    parser.add_argument("--fresh", nargs="+", default=["0", "20%", "50%"], help="fresh_examples settings")
    parser.add_argument("--baseline-python", help="also the verdict-gate of this interpreter, fresh_examples 100")
    args = parser.parse_args()
    setups = [(fresh, sys.executable, False) for fresh in args.fresh]
    if args.baseline_python:
        setups.append(("100", args.baseline_python, True))
    print("| tree | fresh_examples | recorded seed draws | variant | detected | by a fresh example | wall per run |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for fresh, python, baseline in setups:
        recorded = recorded_share(fresh, baseline)
        for variant in ("dense", "sparse"):
            with tempfile.TemporaryDirectory() as tmp:
                repo = build(Path(tmp), fresh, recorded, variant, python)
                detected = by_fresh = 0
                start = time.perf_counter()
                for n in range(args.runs):
                    verdict, reason = gate(repo, Path(tmp) / f"out-{n}", f"bench-{n}", python)
                    detected += verdict == "fail"
                    by_fresh += verdict == "fail" and reason == "new_failing_examples"
                took = (time.perf_counter() - start) / args.runs
            print(f"| {'baseline' if baseline else 'this tree'} | {fresh}{' extra' if baseline else ''} | {recorded} "
                  f"| {variant} | {detected}/{args.runs} | {by_fresh}/{args.runs} | {took:.1f} s |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
