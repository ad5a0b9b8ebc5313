"""The gate against plain pytest on the same property files (issues 8, 10, 13, 22), as ratios in one run.

Reproduce:  .venv/bin/python benchmarks/bench_suite.py [--sizes 10 200 2000] [--hypothesis-share 0.3]
            [--jobs default 1 2] [--per-file 1] [--fresh-examples N] [--isolation LEVEL]

For each size N, benchmarks/gen_suite.py writes a repository with N properties (a share of seeded
Hypothesis properties at 50 examples, the rest plain examples), one per file or `--per-file` K to a
file (each test its own property); then, alternating, it times `verdict-gate run` (once per
`--jobs` value; `default` passes no `--jobs`: the gate's default, the core count) and plain
`python -m pytest -q -p no:cacheprovider oracle/properties` with `PYTHONPATH=src` in one process,
with `PYTHONDONTWRITEBYTECODE=1` (as on a fresh checkout, pytest rewrites every test module each run),
and `pytest -n 2` when pytest-xdist is installed. Each figure is the median wall time of
`--repeat` runs (seconds, time.perf_counter around the whole process); the ratio is gate/pytest.
The catalog is the product's defaults (isolation `sandbox`, `fresh_examples` 20 %: a fifth of each
Hypothesis property's examples drawn from a fresh seed instead of the recorded one, docs/design.md §8.3)
unless `--fresh-examples` (a count or a percentage, as in the catalog) or `--isolation` say otherwise.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _gen():
    spec = importlib.util.spec_from_file_location("gen_suite", ROOT / "benchmarks" / "gen_suite.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode not in (0,):
        raise SystemExit(f"{' '.join(cmd[:4])} … exited {proc.returncode}:\n{proc.stderr[-2000:]}{proc.stdout[-2000:]}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 200, 2000])
    parser.add_argument("--hypothesis-share", type=float, default=0.3)
    parser.add_argument("--jobs", nargs="+", default=["default"], help="gate --jobs values, or default (none given)")
    parser.add_argument("--per-file", type=int, default=1, help="properties per test file (default 1)")
    parser.add_argument("--fresh-examples", default=None, type=lambda v: int(v) if v.isdigit() else v,
                        help="the catalog's: a count or P%% (default: the gate's, 20%%)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--isolation", choices=["sandbox", "process", "none"], default=None,
                        help="the catalog's isolation level (default: the gate's, sandbox)")
    args = parser.parse_args()
    xdist = importlib.util.find_spec("xdist") is not None
    python = sys.executable
    print(f"{'N':>6} {'pytest s':>9} " + " ".join(f"{'gate j' + str(j) + ' s':>10} {'ratio':>6}" for j in args.jobs)
          + (f" {'xdist -n2 s':>11}" if xdist else ""))
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            repo = _gen().generate(Path(tmp) / "suite", size, args.hypothesis_share,
                                   fresh_examples=args.fresh_examples, isolation=args.isolation,
                                   per_file=args.per_file)
            plain = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "oracle/properties"]
            # As on a fresh CI checkout: no bytecode of the test modules is kept between runs, so
            # pytest rewrites them every run, as the gate does (its pack is a fresh copy each run).
            env = {"PYTHONPATH": "src", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
            figures: dict[str, list[float]] = {"pytest": [], "xdist": []}
            for j in args.jobs:
                figures[f"gate{j}"] = []
            for _ in range(args.repeat):
                figures["pytest"].append(timed(plain, repo, env))
                for j in args.jobs:
                    out = Path(tmp) / f"out{j}"
                    figures[f"gate{j}"].append(timed([python, "-m", "verdict_gate", "run", "--repo", str(repo),
                                                      "--base", "main", "--pack", "git:main:oracle",
                                                      "--out", str(out),
                                                      *(["--jobs", str(j)] if j != "default" else [])], repo))
                if xdist:
                    figures["xdist"].append(timed([*plain, "-n", "2"], repo, env))
            base = statistics.median(figures["pytest"])
            row = f"{size:>6} {base:>9.2f} "
            for j in args.jobs:
                med = statistics.median(figures[f"gate{j}"])
                row += f"{med:>10.2f} {med / base:>6.2f} "
            if xdist:
                row += f"{statistics.median(figures['xdist']):>11.2f}"
            print(row, flush=True)
            if args.repeat > 1:  # every run, in order: the spread behind each median
                print("        runs: " + "; ".join(f"{name} " + " ".join(f"{t:.2f}" for t in times)
                                            for name, times in figures.items() if times), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
