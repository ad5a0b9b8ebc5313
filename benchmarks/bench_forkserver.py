"""What a forkserver would save per oracle process: plain pytest started fresh against forked from a process
that imported pytest and Hypothesis once (a measurement for issue 20; the gate has no forkserver).

Reproduce:  .venv/bin/python benchmarks/bench_forkserver.py [--runs 8]

Both run plain pytest (no gate, no plugin autoload, as the gate's oracle processes run it) over the attack
corpus's property files (tests/attacks/base: 12 properties, 8 of them Hypothesis ones at 100 examples) on
its base source, so both do the same tests. Prints the CPU seconds (user + system, of the processes that
ran pytest) and the wall seconds per run, and the forking process's own start, which a gate would pay once
a run. The baseline is the fresh process, as every oracle process starts today.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "tests" / "attacks" / "base"

# The forking process: imports what every oracle process imports, then forks one child per run; each child
# runs pytest.main with its output to /dev/null and exits with its code. Prints its own start and the runs'
# CPU and wall seconds as one line of numbers.
FORKER = """
import os, resource, sys, time
t0 = time.perf_counter()
import pytest, _pytest.python, _pytest.fixtures, _pytest.doctest, hypothesis, hypothesis.strategies
start = time.perf_counter() - t0
own = resource.getrusage(resource.RUSAGE_SELF)
runs, args = int(sys.argv[1]), sys.argv[2:]
t1 = time.perf_counter()
for _ in range(runs):
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os._exit(int(pytest.main(list(args))))
    os.waitpid(pid, 0)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(start, own.ru_utime + own.ru_stime, time.perf_counter() - t1, kids.ru_utime + kids.ru_stime)
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    args = ap.parse_args()
    props = BASE / "oracle" / "properties"
    files = sorted(str(p) for p in props.glob("test_*.py"))
    pytest_args = ["-q", "-p", "no:cacheprovider", "--rootdir", str(BASE / "oracle"), *files]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"PYTHONPATH": f"{BASE / 'src'}:{props}", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                "PYTHONHASHSEED": "0"})
    # One untimed run of each, so both read bytecode the first run wrote.
    subprocess.run([sys.executable, "-P", "-s", "-m", "pytest", *pytest_args], env=env, capture_output=True)
    subprocess.run([sys.executable, "-P", "-s", "-c", FORKER, "1", *pytest_args], env=env, capture_output=True)

    cpu0, wall0 = children_cpu(), time.perf_counter()
    for _ in range(args.runs):
        proc = subprocess.run([sys.executable, "-P", "-s", "-m", "pytest", *pytest_args], env=env,
                              capture_output=True)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"pytest exited {proc.returncode}: {proc.stdout.decode()[-400:]}")
    fresh_cpu = (children_cpu() - cpu0) / args.runs
    fresh_wall = (time.perf_counter() - wall0) / args.runs

    proc = subprocess.run([sys.executable, "-P", "-s", "-c", FORKER, str(args.runs), *pytest_args], env=env,
                          capture_output=True, text=True, check=True)
    start, own_cpu, wall, kids_cpu = (float(x) for x in proc.stdout.split())
    forked_cpu, forked_wall = kids_cpu / args.runs, wall / args.runs

    print(f"pytest over {len(files)} property files of tests/attacks/base, {args.runs} runs each")
    print(f"  fresh process:  {fresh_cpu:.3f} s CPU, {fresh_wall:.3f} s wall per run")
    print(f"  forked:         {forked_cpu:.3f} s CPU, {forked_wall:.3f} s wall per run "
          f"(ratio {forked_cpu / fresh_cpu:.2f}× CPU)")
    print(f"  the forking process's start: {start:.3f} s wall, {own_cpu:.3f} s CPU, once per gate run")


if __name__ == "__main__":
    main()
