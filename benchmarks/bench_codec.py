"""Round trip of one call across the isolation boundary (docs/design.md §8.1), per isolation level.

Reproduce:  .venv/bin/python benchmarks/bench_codec.py [--calls N]

A candidate function ``add(a, b)`` is called from the oracle side through the same client the
pytest plugin uses; each call is one request frame and one answer frame over two pipes. Prints
the median and 90th percentile of N timed calls (after 500 warm-up calls) for the ``sandbox``
(bubblewrap) and ``process`` levels, with the two processes on one CPU as the gate runs them and
unpinned, and, as the baseline, the same call in-process (``none``).
Target: median under 100 µs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verdict_gate.boundary import proxy  # noqa: E402
from verdict_gate.run import runner  # noqa: E402


def measure(call, calls: int) -> tuple[float, float]:
    for i in range(500):
        call(i, 1)
    times = []
    for i in range(calls):
        start = time.perf_counter_ns()
        call(i, 1)
        times.append(time.perf_counter_ns() - start)
    times.sort()
    return statistics.median(times) / 1000, times[int(len(times) * 0.9)] / 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        (src / "bench_cand").mkdir(parents=True)
        (src / "bench_cand" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
        print(f"{'level':<10} {'method':<34} {'median µs':>10} {'p90 µs':>10}")
        cpus = sorted(os.sched_getaffinity(0))
        for level in ("sandbox", "process"):
            for pinned in ("one CPU", "unpinned", "a CPU each, polling"):
                # The gate pins each oracle process and its worker to one CPU (docs/design.md §11); unpinned,
                # every call wakes the other process on another core. With a core to spare per worker, the
                # two get one each and poll their pipes.
                os.sched_setaffinity(0, set(cpus) if pinned == "unpinned" else {cpus[-1]})
                pair = pinned.startswith("a CPU") and len(cpus) > 1
                if pinned.startswith("a CPU") and not pair:
                    continue
                client = proxy.Client(level, [str(src)], tmp, worker_cpu=cpus[0] if pair else None,
                                      spin_s=runner.SPIN_S if pair else 0.0)
                try:
                    client.start()
                except proxy.IsolationUnavailable as exc:
                    print(f"{level:<10} unavailable: {exc}")
                    break
                client.request({"op": "import", "mod": "bench_cand"})
                module = proxy.ProxyModule("bench_cand", client)  # a proxy module holds its client
                median, p90 = measure(module.add, args.calls)
                method = f"{client.info['method']}, {pinned}"
                print(f"{level:<10} {method:<34} {median:>10.1f} {p90:>10.1f}")
                client.kill()
        os.sched_setaffinity(0, set(cpus))
        sys.path.insert(0, str(src))
        import bench_cand  # the baseline: the same call with no boundary at all

        median, p90 = measure(bench_cand.add, args.calls)
        print(f"{'none':<10} {'in-process':<34} {median:>10.2f} {p90:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
