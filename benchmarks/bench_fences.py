"""What the namespace-free fences (verdict_gate/boundary/fence: Landlock, seccomp) cost the worker.

Reproduce:  .venv/bin/python benchmarks/bench_fences.py [--runs N] [--calls N]

1. Applying them, in fresh processes (as the worker does once at start): the medians of N runs of
   ``landlock.python_paths()``, of ``landlock.restrict(those + ..., [tmp, /dev/null])`` and of
   ``seccomp.install()``, in µs, each timed inside the child with ``perf_counter_ns`` (process
   start-up excluded).
2. Syscalls afterwards, ns per call, in children with no fence, with seccomp, and with both:
   ``getppid`` (a syscall the filter never looks at its arguments of, so the kernel's action cache
   can skip the filter), ``ioctl(FIONREAD)`` on a pipe (an argument rule: the filter runs every
   time), and ``open``+``close`` of a file in an allowed directory (Landlock checks every open);
   the fastest of 5 loops each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

LIB = Path(__file__).resolve().parent.parent / "verdict_gate" / "boundary" / "fence"

CHILD = r"""
import fcntl, importlib, importlib.util, json, os, sys, termios, time
def load(name):  # the fence package by path, under a private name, as the worker loads it
    if "_b" not in sys.modules:
        spec = importlib.util.spec_from_file_location("_b", os.path.join(LIB, "__init__.py"),
                                                      submodule_search_locations=[LIB])
        sys.modules["_b"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["_b"])
    return importlib.import_module("_b." + name)
landlock, seccomp = load("landlock"), load("seccomp")
out = {}
if "landlock" in FENCES:
    t = time.perf_counter_ns()
    read = [*landlock.python_paths(), LIB, TMP]
    out["python_paths_us"] = (time.perf_counter_ns() - t) / 1000
    t = time.perf_counter_ns()
    landlock.restrict(read, [TMP, "/dev/null"])
    out["landlock_us"] = (time.perf_counter_ns() - t) / 1000
if "seccomp" in FENCES:
    t = time.perf_counter_ns()
    seccomp.install()
    out["seccomp_us"] = (time.perf_counter_ns() - t) / 1000
def per_call(fn, calls):
    t = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - t) / calls
if CALLS:
    r, w = os.pipe()
    buf = bytearray(4)
    path = os.path.join(TMP, "f")
    open(path, "w").close()
    out["getppid_ns"] = per_call(os.getppid, CALLS)
    out["ioctl_ns"] = per_call(lambda: fcntl.ioctl(r, termios.FIONREAD, buf), CALLS)
    out["open_close_ns"] = per_call(lambda: os.close(os.open(path, os.O_RDONLY)), CALLS // 10)
print(json.dumps(out))
"""


def child(fences: tuple[str, ...], calls: int, tmp: str) -> dict[str, float]:
    code = f"LIB = {str(LIB)!r}; TMP = {tmp!r}; FENCES = {fences!r}; CALLS = {calls}\n" + CHILD
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(proc.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="fresh processes per measurement")
    parser.add_argument("--calls", type=int, default=200_000, help="syscalls per loop")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        applied = [child(("landlock", "seccomp"), 0, tmp) for _ in range(args.runs)]
        for key in ("python_paths_us", "landlock_us", "seccomp_us"):
            values = sorted(run[key] for run in applied)
            print(f"apply {key[:-3]:12s} median {statistics.median(values):8.1f} µs   max {values[-1]:8.1f} µs")
        # The fastest of 5 loops: on a shared machine the others measure its neighbours.
        for fences in ((), ("seccomp",), ("landlock", "seccomp")):
            runs = [child(fences, args.calls, tmp) for _ in range(5)]
            cells = "   ".join(f"{key[:-3]} {min(r[key] for r in runs):6.0f} ns"
                               for key in ("getppid_ns", "ioctl_ns", "open_close_ns"))
            print(f"{'+'.join(fences) or 'no fence':17s} {cells}")


if __name__ == "__main__":
    main()
