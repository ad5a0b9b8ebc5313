"""Where a gate run's CPU goes, per process and per phase (issue 43): a measurement, not a benchmark.

Reproduce:  .venv/bin/python benchmarks/bench_workload.py --properties 2000 --rounds 0 --keep /tmp/wl
            .venv/bin/python benchmarks/profile_workload.py /tmp/wl [--profile DIR] [--catalog KEY=VALUE ...]

Runs `verdict-gate run --repo REPO --base main --pack git:main:oracle` at the defaults in this process, with
every oracle process the runner starts wrapped (`runner._command` patched: nothing else changes) by a small
launcher that runs the same `pytest.main` with a timing plugin beside the gate's: CPU (`time.process_time`)
at pytest's configure, session start, end of collection and session finish, the process's own CPU and that
of its live descendants (the candidate worker, read from /proc before it is killed, as bubblewrap is never
waited for). Prints each oracle process's phases and the gate's own CPU, the other children's (git), and the
sum. `--profile DIR` also writes a cProfile of each oracle process (`oracle-N.prof`) and of the gate's main
thread (`gate.prof`); cProfile, timed by `time.process_time` (CPU, not wall: the machine may be busy),
slows Python code 2-4x, so take its shares, not its seconds. `--catalog KEY=VALUE` rewrites a top-level
catalog key on a copy of the repository's `main` (then writes the manifest again): for instance
`fresh_examples=0` or `isolation=none`, to measure a part by difference; `--no-freeze` empties the ledger.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAUNCHER = r'''
import json, os, resource, sys, time
out, profile_to, args = sys.argv[1], sys.argv[2], sys.argv[3:]
marks = {"entry": time.process_time()}
wall0 = time.time()
import pytest
marks["pytest_imported"] = time.process_time()

class Timing:
    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config):
        marks["configure"] = time.process_time()
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session):
        marks["sessionstart"] = time.process_time()
    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session):
        marks["collected"] = time.process_time()
        marks["items"] = len(session.items)
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        marks["sessionfinish"] = time.process_time()
        marks["worker_cpu"] = descendants_cpu()

def descendants_cpu():
    # The worker is killed, not waited for, under bubblewrap: its CPU never reaches RUSAGE_CHILDREN. Read
    # every live descendant's from /proc before the gate's plugin closes it.
    parent, cpu = {}, {}
    tick = os.sysconf("SC_CLK_TCK")
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parent[int(name)] = int(fields[1])
            cpu[int(name)] = sum(int(x) for x in fields[11:15]) / tick
    me, total = os.getpid(), 0.0
    for pid in parent:
        p = pid
        while p in parent and p != me and p > 1:
            p = parent[p]
        if p == me and pid != me:
            total += cpu[pid]
    return total

prof = None
if profile_to != "-":
    import cProfile
    prof = cProfile.Profile(time.process_time)  # CPU, not wall: the machine may be busy
    prof.enable()
code = pytest.main(args, plugins=[Timing()])
if prof is not None:
    prof.disable()
    prof.dump_stats(profile_to)
marks["exit"] = time.process_time()
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
marks.update(self_cpu=me.ru_utime + me.ru_stime, children_cpu=kids.ru_utime + kids.ru_stime,
             wall=time.time() - wall0, cwd=os.getcwd(),
             tree="candidate" if os.path.exists("src/shop/money.py") else "base")
with open(out, "w") as f:
    json.dump(marks, f)
sys.exit(int(code))
'''


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _rewrite(repo: Path, work: Path, settings: dict[str, str], no_freeze: bool) -> Path:
    """A clone of ``repo`` whose ``main`` has ``settings`` in its catalog (and, with ``no_freeze``, an empty
    ledger), the candidate branch rebased onto it."""
    copy = work / "repo"
    subprocess.run(["git", "clone", "--quiet", "--no-local", str(repo), str(copy)], check=True)
    git = ["git", "-C", str(copy), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run([*git, "checkout", "--quiet", "-B", "candidate", "origin/candidate"], check=True)
    subprocess.run([*git, "checkout", "--quiet", "-B", "main", "origin/main"], check=True)
    catalog = copy / "oracle" / "catalog.yaml"
    lines = catalog.read_text().splitlines()
    for key, value in settings.items():
        lines = [line for line in lines if not line.startswith(f"{key}:")]
        lines.insert(1, f"{key}: {value}")
    catalog.write_text("\n".join(lines) + "\n")
    if no_freeze:
        (copy / "oracle" / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}\n')
    subprocess.run([sys.executable, "-m", "verdict_gate", "manifest", "write", str(copy / "oracle")], check=True,
                   capture_output=True)
    subprocess.run([*git, "commit", "--quiet", "-am", "settings"], check=True)
    subprocess.run([*git, "checkout", "--quiet", "candidate"], check=True)
    subprocess.run([*git, "rebase", "--quiet", "main"], check=True, capture_output=True)
    return copy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a repository bench_workload.py --keep built")
    parser.add_argument("--profile", type=Path, help="write cProfile files here")
    parser.add_argument("--catalog", nargs="*", default=[], help="KEY=VALUE: a top-level catalog setting")
    parser.add_argument("--no-freeze", action="store_true", help="an empty ledger: no base replay")
    parser.add_argument("--jobs", type=int, help="the gate's --jobs (default: its own)")
    args = parser.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    from verdict_gate import cli
    from verdict_gate.run import runner

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        repo = args.repo.resolve()
        if args.catalog or args.no_freeze:
            repo = _rewrite(repo, work, dict(kv.split("=", 1) for kv in args.catalog), args.no_freeze)
        launcher = work / "launch_pytest.py"
        launcher.write_text(LAUNCHER)
        marks_dir = work / "marks"
        marks_dir.mkdir()
        if args.profile:
            args.profile.mkdir(parents=True, exist_ok=True)
        original = runner._command
        count = iter(range(10**6))

        def wrapped(*a, **k):  # type: ignore[no-untyped-def]
            cmd = original(*a, **k)
            at = cmd.index("pytest")  # [python, -P, -s, -m, pytest, ...]
            n = next(count)
            prof = str(args.profile.resolve() / f"oracle-{n}.prof") if args.profile else "-"
            return [*cmd[:at - 1], str(launcher), str(marks_dir / f"{n}.json"), prof, *cmd[at + 1:]]

        runner._command = wrapped
        shutil.rmtree(work / "out", ignore_errors=True)
        argv = ["run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(work / "out"),
                *(["--jobs", str(args.jobs)] if args.jobs else [])]
        load0 = os.getloadavg()[0]
        self0, kids0, wall0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
        prof = None
        if args.profile:
            import cProfile
            prof = cProfile.Profile(time.process_time)
            prof.enable()
        code = cli.main(argv)
        if prof is not None:
            prof.disable()
            prof.dump_stats(str(args.profile / "gate.prof"))
        wall = time.perf_counter() - wall0
        own, kids = _cpu(resource.RUSAGE_SELF) - self0, _cpu(resource.RUSAGE_CHILDREN) - kids0
        load1 = os.getloadavg()[0]
        print(f"exit {code}; wall {wall:.2f} s; load {load0:.2f} -> {load1:.2f}")
        oracle_total = waited = workers = 0.0
        print(f"{'oracle':>6} {'tree':>9} {'items':>5} {'start':>6} {'config':>6} {'collect':>7} {'tests':>6} "
              f"{'finish':>6} {'self':>6} {'worker':>6} {'wall':>6}")
        for path in sorted(marks_dir.glob("*.json"), key=lambda p: int(p.stem)):
            m = json.loads(path.read_text())
            tree = m["tree"]
            oracle_total += m["self_cpu"] + m["worker_cpu"]
            workers += m["worker_cpu"]
            waited += m["children_cpu"]
            collected = m.get("collected", m["sessionstart"])
            print(f"{path.stem:>6} {tree:>9} {m.get('items', 0):>5} {m['configure']:6.2f} "
                  f"{m['sessionstart'] - m['configure']:6.2f} {collected - m['sessionstart']:7.2f} "
                  f"{m['sessionfinish'] - collected:6.2f} {m['exit'] - m['sessionfinish']:6.2f} "
                  f"{m['self_cpu']:6.2f} {m['worker_cpu']:6.2f} {m['wall']:6.2f}")
        other = kids - (oracle_total - workers) - waited
        print(f"gate's own process {own:.2f} s CPU; oracle processes {oracle_total - workers:.2f} s, their workers "
              f"{workers:.2f} s (read from /proc), other children (git …) {other:.2f} s; "
              f"total {own + oracle_total + max(other, 0.0):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
