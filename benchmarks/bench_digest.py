"""tree-v1 fixture digest vs `sha256sum` over the same files, in the same run.

Reproduce:  .venv/bin/python benchmarks/bench_digest.py [--files 10000] [--size 4096]
Prints wall-clock seconds (best of 3) for each and the ratio digest / sha256sum, and the
peak Python heap (tracemalloc) of the digest against the tree's total bytes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path

from verdict_gate.core.digest import digest_dir


def make_tree(root: Path, files: int, size: int) -> int:
    for i in range(files):
        sub = root / f"d{i % 100:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i:05d}.bin").write_bytes(os.urandom(size))
    return files * size


def best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--size", type=int, default=4096, help="bytes per file")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        total = make_tree(root, args.files, args.size)
        ours = best(lambda: digest_dir(root))
        # Baseline: sha256sum over every file, in one process, names from find (sorted like tree-v1).
        listing = subprocess.run(["find", ".", "-type", "f"], cwd=root, capture_output=True, text=True).stdout.split()
        listing.sort(key=lambda p: Path(p).parts)
        base = best(lambda: subprocess.run(["sha256sum", *listing], cwd=root, capture_output=True, check=True))
        tracemalloc.start()
        digest_dir(root)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"files={args.files} bytes={total}")
    print(f"tree-v1 digest: {ours:.3f} s   sha256sum: {base:.3f} s   ratio: {ours / base:.2f}x")
    print(f"digest peak heap: {peak / 1e6:.1f} MB for {total / 1e6:.1f} MB of files ({peak / total:.1%})")


if __name__ == "__main__":
    main()
