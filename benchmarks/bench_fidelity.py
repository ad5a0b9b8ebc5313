"""The gate against plain pytest on real projects' own suites (issue 22), as ratios in one run.

Reproduce:  .venv/bin/python benchmarks/bench_fidelity.py [--project NAME ...] [--repeat 3]

For each project of tests/fidelity/ (the corpus of ../shared/fidelity, one property per upstream test file), the
fidelity harness builds the gated repository twice: at the product's defaults, and with the catalog's
`fresh_examples: 0`. Then, alternating, one run each per round: plain `python -m pytest` on the same test
files against the same source (as the corpus's reference layout runs it: from `oracle/`, `-c /dev/null
--rootdir oracle -p no:cacheprovider`, `src` and `oracle/tests` on PYTHONPATH, `PYTHONDONTWRITEBYTECODE=1` as on a fresh
checkout), `verdict-gate run` at the defaults (isolation `sandbox`, `--jobs` the core count), and
`verdict-gate run` with `fresh_examples: 0`. Each figure is the median wall time of `--repeat` rounds
(seconds, time.perf_counter around the whole process); the ratio is gate / plain pytest. A fresh-example
pass runs only for seeded (Hypothesis) properties, so on suites without Hypothesis the two gate columns
differ by noise only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fidelity import harness  # noqa: E402  (tests/fidelity is not a package of the product)


def timed(cmd: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd[:6])} … exited {proc.returncode}:\n{proc.stderr[-2000:]}{proc.stdout[-2000:]}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", action="append", help="only this project (repeatable)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    chosen = [p for p in harness.projects() if not args.project or p.name in args.project]
    print(f"{'project':<12} {'plain s':>8} {'gate s':>8} {'ratio':>6} {'fresh0 s':>9} {'ratio':>6}", flush=True)
    for project in chosen:
        with tempfile.TemporaryDirectory(prefix="bench-fidelity-") as tmp:
            default = harness.build(project, Path(tmp) / "default")
            fresh0 = harness.build(project, Path(tmp) / "fresh0", catalog_extra={"fresh_examples": 0})
            files = [f"tests/{name}" for name in project.test_names()]
            plain = harness.plain_command(default / "oracle", files)
            env = {**harness.plain_env([default / "src", default / "oracle" / "tests"]), "PYTHONDONTWRITEBYTECODE": "1"}
            figures: dict[str, list[float]] = {"plain": [], "gate": [], "fresh0": []}
            for i in range(args.repeat):
                # Exit 1: some node fails (today's boundary, or a test that fails under plain pytest too).
                figures["plain"].append(timed(plain, default / "oracle", env, (0, 1)))
                for name, repo in (("gate", default), ("fresh0", fresh0)):
                    out = Path(tmp) / f"out-{name}-{i}"
                    gate = [sys.executable, "-m", "verdict_gate", "run", "--repo", str(repo), "--base", "main",
                            "--pack", "git:main:oracle", "--out", str(out)]
                    figures[name].append(timed(gate, repo, dict(os.environ), (0, 1, 4)))
            base = statistics.median(figures["plain"])
            gate_s, fresh_s = statistics.median(figures["gate"]), statistics.median(figures["fresh0"])
            print(f"{project.name:<12} {base:>8.2f} {gate_s:>8.2f} {gate_s / base:>5.2f}× {fresh_s:>9.2f} "
                  f"{fresh_s / base:>5.2f}×", flush=True)
            if args.repeat > 1:
                print("        runs: " + "; ".join(f"{name} " + " ".join(f"{t:.2f}" for t in times)
                                            for name, times in figures.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
