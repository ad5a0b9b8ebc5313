"""What drawing fresh examples inside a property's budget costs in detection (issue 22, docs/design.md §8.3).

Reproduce:  .venv/bin/python benchmarks/bench_fresh_detection.py [--runs 10] [--variants dense sparse rare]

The attack corpus's special-casing case, ``tests/attacks/cases/memorizes_recorded_examples``: a patch
whose ``add`` is right only for the inputs the public recorded seed draws (it runs Hypothesis itself
with the catalog's seed, the recorded share of the budget and the pack's constants) and wrong
elsewhere. Three variants: ``dense`` (wrong on every other input: the corpus case), ``sparse`` (wrong on
about one input in ten of the others) and ``rare`` (one in a hundred): bugs the recorded examples
happen to miss, which only enough fresh draws find. For each
setting the base and the patch are gated ``--runs`` times, each with its own run id (so its own fresh
seed), on a copy of tests/attacks/base whose catalog keeps ``prop.add`` alone. A run *detects* when
``prop.add`` is ``fail``; ``new_failing_examples`` says a fresh example found it (anything else: the
recorded seed's own examples, i.e. the memorizing failed).

Settings: ``fresh_examples`` 0 (off: the patch is promoted), the default 20 % and the most, 50 %, of
test_add's 100 examples; and the draws before this change, emulated: 100 recorded examples and 100
fresh ones beside them (``max_examples=200``, ``fresh_examples: 100``).
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
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from gen_suite import _git  # noqa: E402  (the suites' git: a fixed identity, no user config)

from verdict_gate_plugin import fresh_split  # noqa: E402

BASE = ROOT / "tests" / "attacks" / "base"
CASE = ROOT / "tests" / "attacks" / "cases" / "memorizes_recorded_examples" / "src" / "calc" / "__init__.py"
SETTINGS = [("off", "0", 100), ("default", "20%", 100), ("most", "50%", 100), ("before: 100 beside 100", "100", 200)]
CATALOG = ("version: 1\nseed: 20261130\npack_root: oracle\npython_path: [src]\nfresh_examples: {fresh}\n"
           "properties:\n  - {{id: prop.add, oracle: properties/test_arith.py, node: test_add, timeout: 30}}\n")


def recorded_share(fresh: str, budget: int) -> int:
    """How many of test_add's ``budget`` examples the recorded seed draws: what the patch memorizes."""
    return fresh_split(int(fresh) if fresh.isdigit() else fresh, budget)[0]


def patch_source(recorded: int, variant: str) -> str:
    """The corpus case's ``calc/__init__.py`` memorizing ``recorded`` examples; ``sparse`` (``rare``): wrong
    off them only where ``(a * 31 + b) % 10 == 0`` (``% 100``)."""
    text = CASE.read_text().replace("max_examples=80", f"max_examples={recorded}")
    assert f"max_examples={recorded}" in text, "the corpus case changed: update this benchmark"
    every = {"dense": 1, "sparse": 10, "rare": 100}[variant]
    if every > 1:
        text = text.replace("_right(a, b) + 1", f"_right(a, b) + ((a * 31 + b) % {every} == 0)")
    return text


def build(root: Path, fresh: str, recorded: int, variant: str, python: str, budget: int = 100) -> Path:
    repo = root / "repo"
    shutil.copytree(BASE, repo)
    if budget != 100:
        prop = repo / "oracle" / "properties" / "test_arith.py"
        text = prop.read_text().replace("from hypothesis import given", "from hypothesis import given, settings")
        prop.write_text(text.replace("@given(st.integers(), st.integers())",
                                     f"@settings(max_examples={budget})\n@given(st.integers(), st.integers())"))
    (repo / "oracle" / "catalog.yaml").write_text(CATALOG.format(fresh=json.dumps(fresh) if "%" in fresh else fresh))
    subprocess.run([python, "-m", "verdict_gate", "manifest", "write", str(repo / "oracle")], check=True,
                   capture_output=True)
    _git(repo, "init", "--quiet")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "base")
    _git(repo, "checkout", "--quiet", "-b", "candidate")
    shutil.copytree(CASE.parent, repo / "src" / "calc", dirs_exist_ok=True)
    (repo / "src" / "calc" / "__init__.py").write_text(patch_source(recorded, variant))
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "memorize the recorded examples")
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
    parser.add_argument("--variants", nargs="+", choices=["dense", "sparse", "rare"],
                        default=["dense", "sparse", "rare"])
    args = parser.parse_args()
    print("| setting | fresh_examples | max_examples | recorded seed draws | variant | detected | by a fresh example "
          "| wall per run |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, fresh, budget in SETTINGS:
        recorded = recorded_share(fresh, budget)
        for variant in args.variants:
            with tempfile.TemporaryDirectory() as tmp:
                repo = build(Path(tmp), fresh, recorded, variant, sys.executable, budget)
                detected = by_fresh = 0
                start = time.perf_counter()
                for n in range(args.runs):
                    verdict, reason = gate(repo, Path(tmp) / f"out-{n}", f"bench-{n}", sys.executable)
                    detected += verdict == "fail"
                    by_fresh += verdict == "fail" and reason == "new_failing_examples"
                took = (time.perf_counter() - start) / args.runs
            print(f"| {label} | {fresh} | {budget} | {recorded} | {variant} | {detected}/{args.runs} "
                  f"| {by_fresh}/{args.runs} | {took:.1f} s |", flush=True)
    return 0

if __name__ == "__main__":
    sys.exit(main())
