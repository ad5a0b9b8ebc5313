"""Big fixtures through the whole gate: many small files, and one big file (issue 12).

Reproduce:
    .venv/bin/python benchmarks/bench_fixtures.py --files 100000 --size 4096
    .venv/bin/python benchmarks/bench_fixtures.py --big-mib 2048
Builds the example repository (examples/orders, with 8 more plain properties: 10, the issue's
figure) twice under /tmp, one without and one with repository fixtures under fixtures/ on main
(so the candidate and the base replay both have them), each packed as a clone is, with
`gc.auto` off and the disk synced (no background `git gc` or write-back competes with what is
timed). Runs `verdict-gate run` on each under `/usr/bin/time -v` and, in the same run, the
baseline `find fixtures -type f | sort | xargs openssl dgst -sha256` over the same files.
Prints the walls, the ratio  gate(with fixtures) / (gate(without) + openssl-xargs)  (target
<= 2.5x) and the peak RSS of the biggest process of the gate's tree (`Maximum resident set
size`: the gate and every child it waited for, git and pytest included; target <= 200 MB).
Everything it writes is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from verdict_gate.demo import _apply, _git, build_base, examples_dir
from verdict_gate.pack.build import write_manifest


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in kB of the biggest process of the tree, exit code) via /usr/bin/time -v."""
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], cwd=cwd, env=env, capture_output=True)
    wall = time.perf_counter() - t0
    err = proc.stderr.decode(errors="replace")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd[:4]} exited {proc.returncode}: {err[-1500:]}")
    return wall, int(rss.group(1)) if rss else -1, proc.returncode


EXTRA = 8  # the example has 2 properties; the figure is for 10


def add_properties(repo: Path) -> None:
    """EXTRA more example properties in the example's pack (plain, passing, each calling candidate code
    that reads a repository fixture, fixtures/tax_rates.json)."""
    oracle = repo / "oracle"
    lines = []
    for i in range(EXTRA):
        (oracle / "properties" / f"test_extra_{i}.py").write_text(
            "from orders.total import order_total_cents\n\n\n"
            f"def test_extra_{i}():\n    assert order_total_cents([], 'DE') == 0\n")
        lines.append(f"  - id: prop.extra_{i}\n    oracle: properties/test_extra_{i}.py\n    kind: example\n"
                     f"    claim: an empty order totals zero ({i})\n")
    catalog = (oracle / "catalog.yaml").read_text()
    catalog = catalog.replace("properties:\n", "properties:\n" + "".join(lines), 1)
    (oracle / "catalog.yaml").write_text(catalog)
    write_manifest(oracle)
    _git(repo, "add", "-A", "oracle")
    _git(repo, "commit", "--quiet", "-m", f"{EXTRA} more properties")
    _git(repo, "update-ref", "refs/heads/main", "HEAD")


def make_repo(work: Path, spec: dict, fill) -> Path:  # type: ignore[no-untyped-def, type-arg]
    repo, _ = build_base(work, spec)
    add_properties(repo)
    # No `git gc --auto` in the background (demo._git passes gc.auto=0): committing 100,000 loose
    # objects starts one, which then competes for the cores with everything timed. The repository is
    # packed below, as a clone is.
    if fill is not None:
        fill(repo / "fixtures")
        _git(repo, "add", "-A", "fixtures")
        _git(repo, "commit", "--quiet", "-m", "big fixtures")
        _git(repo, "update-ref", "refs/heads/main", "HEAD")
    good = spec["candidates"][0]
    _git(repo, "checkout", "--quiet", "-b", "bench")
    _apply(repo, good["edits"])
    _git(repo, "commit", "--quiet", "--all", "-m", "bench candidate")
    _git(repo, "repack", "-a", "-d", "-q")
    os.sync()  # the build's writes reach the disk before anything is timed
    return repo


def many(files: int, size: int):  # type: ignore[no-untyped-def]
    def fill(root: Path) -> None:
        for i in range(files):
            sub = root / f"d{i % 100:02d}"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / f"f{i:06d}.bin").write_bytes(os.urandom(size))
    return fill


def big(mib: int):  # type: ignore[no-untyped-def]
    def fill(root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        block = os.urandom(1 << 20)
        with open(root / "big.bin", "wb") as fh:
            for _ in range(mib):
                fh.write(block)
    return fill


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--big-mib", type=int, default=0, help="one fixture file of this many MiB instead of --files")
    ap.add_argument("--tmp", default="/tmp")
    args = ap.parse_args()
    spec = yaml.safe_load((examples_dir() / "candidates.yaml").read_text())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    work = Path(tempfile.mkdtemp(prefix="vg-bench-fixtures-", dir=args.tmp))
    try:
        plain = make_repo(work / "plain", spec, None)
        fill = big(args.big_mib) if args.big_mib else many(args.files, args.size)
        t0 = time.perf_counter()
        heavy = make_repo(work / "heavy", spec, fill)
        print(f"built the fixture repository in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

        def gate(repo: Path, out: str) -> tuple[float, int, int]:
            return timed([sys.executable, "-m", "verdict_gate", "run", "--repo", str(repo), "--base", "main",
                          "--pack", "git:main:oracle", "--out", str(work / out), "--today", "2026-11-30"], repo, env)

        gate(plain, "warm")  # warm the interpreter's and git's caches once
        t_plain, rss_plain, _ = gate(plain, "out-plain")
        t_ssl, rss_ssl, _ = timed(["sh", "-c", "find fixtures -type f | sort | xargs openssl dgst -sha256 >/dev/null"],
                                  heavy, env)
        t_heavy, rss_heavy, code = gate(heavy, "out-heavy")
        what = f"1 file x {args.big_mib} MiB" if args.big_mib else f"{args.files} files x {args.size} B"
        print(f"fixtures: {what}   gate exit code {code}")
        print(f"gate without fixtures: {t_plain:.2f} s (peak RSS {rss_plain / 1024:.0f} MB)")
        print(f"find|sort|xargs openssl dgst -sha256: {t_ssl:.2f} s")
        print(f"gate with fixtures: {t_heavy:.2f} s (peak RSS {rss_heavy / 1024:.0f} MB)")
        ratio = t_heavy / (t_plain + t_ssl)
        print(f"ratio gate(with) / (gate(without) + openssl-xargs): {ratio:.2f}x (target <= 2.5x)")
        print(f"peak RSS of any process of the gate's tree: {rss_heavy / 1024:.0f} MB (target <= 200 MB)")
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(work)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
