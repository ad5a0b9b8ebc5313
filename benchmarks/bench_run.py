"""`verdict-gate run` on the example vs plain pytest on the same properties, in the same run.

Reproduce:  .venv/bin/python benchmarks/bench_run.py [--repeat 3]
The gate does more than pytest: it loads and verifies the pack, digests fixtures, checks out
two worktrees, replays the frozen property on the base revision and runs every property on
the candidate. The baseline is one plain `pytest` over the oracle's properties in the
candidate tree. Prints the best wall-clock seconds of each and the ratio.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from verdict_gate.demo import _apply, _git, build_base, examples_dir


def best(cmd: list[str], cwd: Path, env: dict[str, str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)
        times.append(time.perf_counter() - t0)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{cmd[:4]} exited {proc.returncode}: {proc.stderr.decode()[-400:]}")
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    spec = yaml.safe_load((examples_dir() / "candidates.yaml").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        repo, _ = build_base(Path(tmp), spec)
        good = spec["candidates"][0]
        _git(repo, "checkout", "--quiet", "-b", "bench")
        _apply(repo, good["edits"])
        _git(repo, "commit", "--quiet", "--all", "-m", "bench candidate")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        gate = best([sys.executable, "-m", "verdict_gate", "run", "--repo", str(repo), "--base", "main", "--pack",
                     "git:main:oracle", "--out", str(Path(tmp) / "out"), "--today", "2026-11-30"], repo, env,
                    args.repeat)
        plain = best([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "oracle/properties"], repo,
                     {**env, "PYTHONPATH": "src", "VERDICT_GATE_FIXTURES": str(repo / "oracle" / "fixtures")},
                    args.repeat)
    print(f"verdict-gate run: {gate:.2f} s   plain pytest: {plain:.2f} s   ratio: {gate / plain:.2f}x")


if __name__ == "__main__":
    main()
