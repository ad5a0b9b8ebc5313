"""Worker start and round trip with the fences (Landlock, seccomp, the probes) against a baseline
commit without them, in one run (docs/design.md §8.2, §11).

Reproduce:  .venv/bin/python benchmarks/bench_worker.py [--baseline REV] [--starts N] [--calls N]
            [--landlock-python PY]

For each tree (this checkout, and ``--baseline``, default 0929136, the last commit before the fences,
checked out as a git worktree in a temp dir) a child process of the same interpreter imports that
tree's ``verdict_gate.boundary.proxy`` and, at isolation ``sandbox``, starts ``--starts`` workers one
after another (each from ``Client.start()`` to its fence report, the bytecode cache warm as in a run)
and times ``--calls`` calls of a candidate ``add(a, b)``. The two trees alternate, start by start, so
the machine's load falls on both alike. Prints the median and p90 of each, and the ratio of this tree to
the baseline. ``--landlock-python``: also the ``landlock`` method (bubblewrap hidden), with an
interpreter a worker of its own uid can run (as root), for this tree only (the baseline could not start
a worker without bubblewrap).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, os, statistics, sys, time
root, tmp, mode, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, root)
from verdict_gate.boundary import proxy
src = os.path.join(tmp, "src")
def client():
    return proxy.Client("sandbox", [src], tmp, bytecode=sys.pycache_prefix)
def stop(c):
    (getattr(c, "close", None) or c.kill)()
if mode == "start":
    c = client(); c.start(); stop(c)  # warm the bytecode cache and the method probe
    times = []
    for _ in range(count):
        t = time.perf_counter(); c = client(); c.start(); times.append(time.perf_counter() - t); stop(c)
    print(json.dumps({"method": c.info.get("method"), "times": times}))
else:
    c = client(); c.start()
    c.request({"op": "import", "mod": "bench_cand"})
    try:
        m = proxy.ProxyModule("bench_cand", c)  # today's signature
    except TypeError:
        m = proxy.ProxyModule("bench_cand"); m.__dict__["_vg_client"] = c  # an old baseline's
    for i in range(500):
        m.add(i, 1)
    times = []
    for i in range(count):
        t = time.perf_counter_ns(); m.add(i, 1); times.append(time.perf_counter_ns() - t)
    print(json.dumps({"method": c.info.get("method"), "times": [x / 1e9 for x in times]}))
    stop(c)
"""


def run_child(python: str, root: Path, tmp: str, mode: str, count: int, env: dict[str, str]) -> dict:
    proc = subprocess.run([python, "-c", CHILD, str(root), tmp, mode, str(count)], capture_output=True, text=True,
                          env=env, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"bench_worker: the child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def stats(times: list[float], unit: float) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * unit, ordered[int(len(ordered) * 0.9)] * unit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="0929136")
    parser.add_argument("--starts", type=int, default=30, help="worker starts per tree (default 30)")
    parser.add_argument("--calls", type=int, default=20_000, help="timed calls per tree (default 20,000)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the two trees (default 3)")
    parser.add_argument("--landlock-python", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-worker-", dir="/tmp") as tmp:
        os.chmod(tmp, 0o755)  # a worker of its own uid must reach the candidate
        (Path(tmp) / "src" / "bench_cand").mkdir(parents=True)
        (Path(tmp) / "src" / "bench_cand" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
        base = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(base), args.baseline],
                       check=True)
        try:
            # As in a run: the oracle process writes its bytecode cache (a shell's PYTHONDONTWRITEBYTECODE would
            # leave it empty, and every worker would compile the standard library afresh).
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
            trees = {"this tree": ROOT, f"baseline {args.baseline}": base}
            got: dict[str, dict[str, list[float]]] = {name: {"start": [], "call": []} for name in trees}
            methods: dict[str, str] = {}
            for _round in range(args.rounds):
                for name, root in trees.items():
                    for mode, count in (("start", args.starts // args.rounds), ("call", args.calls // args.rounds)):
                        out = run_child(sys.executable, root, tmp, mode, count, env)
                        got[name][mode] += out["times"]
                        methods[name] = out["method"]
            if args.landlock_python:
                name = "this tree, landlock"
                lenv = {**env, "VERDICT_GATE_BWRAP": "/nonexistent/bwrap"}
                got[name] = {"start": run_child(args.landlock_python, ROOT, tmp, "start", args.starts, lenv)["times"],
                             "call": run_child(args.landlock_python, ROOT, tmp, "call", args.calls, lenv)["times"]}
                methods[name] = "landlock"
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
        print(f"{'tree':<28} {'method':<10} {'start median ms':>16} {'p90':>8} {'call median µs':>15} {'p90':>8}")
        figures = {}
        for name, series in got.items():
            s_med, s_p90 = stats(series["start"], 1e3)
            c_med, c_p90 = stats(series["call"], 1e6)
            figures[name] = (s_med, c_med)
            print(f"{name:<28} {methods[name]:<10} {s_med:>16.1f} {s_p90:>8.1f} {c_med:>15.1f} {c_p90:>8.1f}")
        new, old = figures["this tree"], figures[f"baseline {args.baseline}"]
        print(f"ratio this tree / baseline (bwrap): start {new[0] / old[0]:.2f}x, call {new[1] / old[1]:.2f}x")
        if "this tree, landlock" in figures:
            lan = figures["this tree, landlock"]
            print(f"ratio landlock / baseline bwrap: start {lan[0] / old[0]:.2f}x, call {lan[1] / old[1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
