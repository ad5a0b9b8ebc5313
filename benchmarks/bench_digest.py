"""The fixture digest (tree-v2, and tree-v1 for reference) against openssl over the same bytes, in one run.

Reproduce:
    .venv/bin/python benchmarks/bench_digest.py                   # 100,000 x 4 KiB files
    .venv/bin/python benchmarks/bench_digest.py --big-mib 1024    # one 1 GiB file
Many files: `verdict-gate digest DIR` (a whole process) and the in-process digest (`digest_dir`
with the command's `fork_map`, as the command runs it) against
`find . -type f | sort | xargs openssl dgst -sha256` (target <= 0.7x). One big file: against
`openssl dgst -sha256 FILE` (target <= 1.05x). Each figure is the best of --repeat runs,
taken alternately so that both sides see the same machine; the CPU seconds (user + system, of
the process and its children) are printed beside the wall times, since the machine may be shared.
Peak memory: `Maximum resident set size` of `verdict-gate digest` under /usr/bin/time -v (the
largest of its processes), for two sizes of the same shape (flat means the same). Files are
written under --tmp and removed.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verdict_gate.host.forks import fork_map, usable_cores
from verdict_gate.host.hashing import digest_dir


def make_tree(root: Path, files: int, size: int) -> int:
    for i in range(files):
        sub = root / f"d{i % 100:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{i:06d}.bin").write_bytes(os.urandom(size))
    return files * size


def make_big(root: Path, mib: int) -> int:
    root.mkdir(parents=True, exist_ok=True)
    block = os.urandom(1 << 20)
    with open(root / "big.bin", "wb") as fh:
        for _ in range(mib):
            fh.write(block)
    return mib << 20


# The command as installed runs from cached bytecode: drop PYTHONDONTWRITEBYTECODE (as the other
# benchmarks do) and keep the cache under the benchmark's directory (set in main), so that no start-up
# compiles a module edited since its .pyc was written.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(cmd: list[str], cwd: Path, cpu: list[float] | None = None) -> float:
    """Wall seconds of ``cmd``; its CPU seconds (user + system, children included) appended to ``cpu``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, env=ENV)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return took


def peak_rss_mb(cmd: list[str], cwd: Path) -> float:
    err = subprocess.run(["/usr/bin/time", "-v", *cmd], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=ENV).stderr
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    return int(found.group(1)) / 1024 if found else -1.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=4096, help="bytes per file")
    ap.add_argument("--big-mib", type=int, default=0, help="one file of this many MiB instead of --files")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tmp", default="/tmp")
    args = ap.parse_args()
    cli = [sys.executable, "-m", "verdict_gate", "digest"]
    work = Path(tempfile.mkdtemp(prefix="vg-bench-digest-", dir=args.tmp))
    ENV["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    try:
        root = work / "tree"
        if args.big_mib:
            total = make_big(root, args.big_mib)
            base_cmd = ["openssl", "dgst", "-sha256", "big.bin"]
            base_name = "openssl dgst -sha256"
            target = 1.05
        else:
            total = make_tree(root, args.files, args.size)
            base_cmd = ["sh", "-c", "find . -type f | sort | xargs openssl dgst -sha256"]
            base_name = "find|sort|xargs openssl dgst -sha256"
            target = 0.7
        wall(base_cmd, root)  # warm the page cache
        wall([*cli, "."], root)  # and the bytecode cache
        ours_cli, ours_lib, ours_v1, base = [], [], [], []
        cpu_cli: list[float] = []
        cpu_base: list[float] = []
        for _ in range(args.repeat):
            base.append(wall(base_cmd, root, cpu_base))
            ours_cli.append(wall([*cli, "."], root, cpu_cli))
            t0 = time.perf_counter()
            digest_dir(root, parallel=fork_map)
            ours_lib.append(time.perf_counter() - t0)
            ours_v1.append(wall([*cli, "--format", "tree-v1", "."], root))
        rss = peak_rss_mb([*cli, "."], root)
        # The same shape at a tenth of the size, for "flat": the peak must not grow with the bytes.
        small = work / "small"
        if args.big_mib:
            make_big(small, max(1, args.big_mib // 10))
        else:
            make_tree(small, max(1, args.files // 10), args.size)
        rss_small = peak_rss_mb([*cli, "."], small)
        b = min(base)
        what = f"1 file x {args.big_mib} MiB" if args.big_mib else f"{args.files} files x {args.size} B"
        print(f"{what} ({total / 2**20:.0f} MiB), best of {args.repeat}, {os.cpu_count()} cores "
              f"({usable_cores()} usable), load average {os.getloadavg()[0]:.2f}")
        print(f"{base_name}: {b:.3f} s (CPU {min(cpu_base):.3f} s)")
        print(f"verdict-gate digest (tree-v2, whole process): {min(ours_cli):.3f} s   ratio {min(ours_cli) / b:.2f}x "
              f"(target <= {target}x) (CPU {min(cpu_cli):.3f} s, {min(cpu_cli) / min(cpu_base):.2f}x)")
        print(f"digest_dir (tree-v2, in process): {min(ours_lib):.3f} s   ratio {min(ours_lib) / b:.2f}x")
        print(f"verdict-gate digest --format tree-v1: {min(ours_v1):.3f} s   ratio {min(ours_v1) / b:.2f}x")
        print(f"peak RSS of verdict-gate digest: {rss:.0f} MB; at a tenth of the bytes: {rss_small:.0f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
