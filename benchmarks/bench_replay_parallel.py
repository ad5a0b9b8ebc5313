"""The base replay beside the candidate run vs after it (issue 10), as a ratio in one run.

Reproduce:  .venv/bin/python benchmarks/bench_replay_parallel.py [--properties 200] [--frozen 100] [--repeat 3]
            [--jobs N] [--fixture-files 0]

benchmarks/gen_suite.py writes a repository with N one-file properties (30 % seeded Hypothesis
properties at 50 examples, the rest plain examples; isolation `sandbox`, the gate's default; the
default `fresh_examples`). On `main`, k of them (every other one, so both kinds) then fail on a
known rounding bug (`half_up` rounds half to even; the first k, so the candidate run's shares
get equal parts of them), and each failure is frozen from a real base
replay (`replay_to_file`, then `freeze`, the library forms of `verdict-gate replay` and
`verdict-gate freeze`) and committed; branch `cand` adds a harmless commit. So `verdict-gate run`
replays the k frozen properties on the base revision and runs all N on the candidate, and
promotes (the k are `inconclusive`/`frozen`). `--fixture-files F` adds F repository fixtures
(1 KiB files): the base replay then also checks out, digests and deletes them (its serial part).
`--slow S` makes the last property (not frozen) burn S CPU seconds, so the candidate run's shares end
unevenly and leave a process slot idle (cores to spare) that the parallel base replay can use.

Then, alternating, it times the same `verdict-gate run --jobs J` (default: the core count) twice
per round: with `VERDICT_GATE_PARALLEL_REPLAY=0` (the baseline: the base replay first, with J
oracle processes, then the candidate run with J) and with the default (the base replay in a
thread beside the candidate run, J split between them). Each figure is the median wall time of
`--repeat` rounds (time.perf_counter around the whole process, same `VERDICT_GATE_RUN_ID` so both
draw the same fresh examples), after one untimed warm-up run; the ratio is parallel/sequential, as
the ratio of the medians and the median of the per-round ratios. Each round also checks that the
two runs wrote the same base.sig.json, runs.json and verdicts.json (timings and evidence digests
aside).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

HALF_UP = "\n\ndef half_up(n):\n    return round(n / 2)  # the known bug: rounds half to even\n"

EXAMPLE_FAILING = '''from calc import add, half_up


def test_p{i:04d}():
    assert add({i}, 1) == {i} + 1
    assert half_up(4 * {i} + 1) == 2 * {i} + 1, "half_up(2 * {i} + 0.5)"
'''

HYPOTHESIS_FAILING = '''from hypothesis import given, settings, strategies as st
from calc import half_up


@settings(max_examples=50)
@given(st.integers(0, 1000 + {i}))
def test_p{i:04d}(n):
    assert half_up(n) == (n + 1) // 2, f"half_up({{n}})"
'''


SLOW = '''import time

from calc import add


def test_p{i:04d}():
    end = time.process_time() + {seconds}
    while time.process_time() < end:  # CPU-bound, in the oracle process
        assert add({i}, 1) == {i} + 1
'''


def _gen() -> Any:
    spec = importlib.util.spec_from_file_location("gen_suite", ROOT / "benchmarks" / "gen_suite.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(repo: Path, properties: int, frozen: int, fixture_files: int = 0, slow: float = 0) -> list[str]:
    """The repository: gen_suite's N properties, ``frozen`` of them failing and frozen on ``main``, and
    ``fixture_files`` repository fixtures (1 KiB each, under ``fixtures/``, the catalog's default
    ``paths.fixtures``); with ``slow``, the last property burns that many CPU seconds. Branch ``cand``
    is checked out with a harmless commit. Returns the frozen ids."""
    from verdict_gate.pack.build import write_manifest
    from verdict_gate.run.freeze import freeze
    from verdict_gate.run.replay import replay_to_file

    gen = _gen()
    gen.generate(repo, properties)
    gen._git(repo, "checkout", "--quiet", "main")
    (repo / "src" / "calc.py").write_text(gen.CALC + HALF_UP)
    for n in range(fixture_files):
        path = repo / "fixtures" / f"d{n // 1000:03d}" / f"f{n:06d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{n:06d}\n" * 146)
    ids = []
    for i in range(min(frozen, properties)):  # the first k: every share of the candidate run gets its part
        path = repo / "oracle" / "properties" / f"test_p{i:04d}.py"
        seeded = "hypothesis" in path.read_text()
        path.write_text((HYPOTHESIS_FAILING if seeded else EXAMPLE_FAILING).format(i=i + 1))
        ids.append(f"prop.p{i:04d}")
    if slow and properties > frozen:
        last = properties - 1
        (repo / "oracle" / "properties" / f"test_p{last:04d}.py").write_text(SLOW.format(i=last + 1, seconds=slow))
        catalog = repo / "oracle" / "catalog.yaml"
        catalog.write_text(catalog.read_text().replace(f"oracle: properties/test_p{last:04d}.py\n    kind: property",
                                                       f"oracle: properties/test_p{last:04d}.py\n    kind: example"))
    write_manifest(repo / "oracle")
    gen._git(repo, "add", "--all")
    gen._git(repo, "commit", "--quiet", "-m", "known failures")
    if ids:
        sig = repo.parent / "base.sig.json"
        quiet = lambda _line: None  # noqa: E731
        replay_to_file(repo, "main", "git:main:oracle", sig, only=ids, options=None, progress=quiet, notice=quiet)
        for pid in ids:
            freeze(sig, pid, repo / "oracle" / "freeze_ledger.json", reason="known: rounds half to even",
                   first_seen="2026-11-01", expires_on=None)
        write_manifest(repo / "oracle")
        gen._git(repo, "add", "--all")
        gen._git(repo, "commit", "--quiet", "-m", "freeze the known failures")
    gen._git(repo, "checkout", "--quiet", "-b", "cand")
    (repo / "CHANGES.md").write_text("a harmless change\n")
    gen._git(repo, "add", "--all")
    gen._git(repo, "commit", "--quiet", "-m", "candidate")
    return ids


def normal(doc: Any) -> Any:
    """A document minus what differs between two runs of the same inputs: timings and evidence digests."""
    if isinstance(doc, dict):
        return {k: normal(v) for k, v in doc.items() if k not in ("duration_s", "evidence")}
    if isinstance(doc, list):
        return [normal(v) for v in doc]
    return doc


def gate(repo: Path, out: Path, jobs: int, parallel: bool) -> tuple[float, dict[str, Any], str]:
    env = {**os.environ, "VERDICT_GATE_RUN_ID": "bench-replay-parallel",
           "VERDICT_GATE_PARALLEL_REPLAY": "1" if parallel else "0"}
    cmd = [sys.executable, "-m", "verdict_gate", "run", "--repo", str(repo), "--base", "main", "--pack",
           "git:main:oracle", "--out", str(out), "--today", "2026-12-01", "--jobs", str(jobs)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"verdict-gate run exited {proc.returncode}:\n{proc.stderr[-3000:]}{proc.stdout[-2000:]}")
    docs = {name: normal(json.loads((out / name).read_text()))
            for name in ("base.sig.json", "runs.json", "verdicts.json")}
    return took, docs, proc.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--properties", type=int, default=200)
    parser.add_argument("--frozen", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None, help="--jobs of both runs (default: the core count)")
    parser.add_argument("--slow", type=float, default=0, metavar="SECONDS",
                        help="the last property (not frozen) burns this many CPU seconds: uneven shares")
    parser.add_argument("--fixture-files", type=int, default=0,
                        help="repository fixtures (1 KiB files) the base replay checks out and digests too")
    parser.add_argument("--keep", action="store_true", help="keep the repository and print its path")
    args = parser.parse_args()
    from verdict_gate.run.runner import default_jobs

    jobs = args.jobs or default_jobs()
    tmp = Path(tempfile.mkdtemp(prefix="bench-replay-parallel-"))
    try:
        repo = tmp / "repo"
        t0 = time.perf_counter()
        ids = build(repo, args.properties, args.frozen, args.fixture_files, args.slow)
        print(f"repository: {args.properties} properties, {len(ids)} frozen failures, "
              f"{args.fixture_files} fixture files, a {args.slow:g} s property "
              f"(built in {time.perf_counter() - t0:.1f} s); --jobs {jobs}")
        gate(repo, tmp / "out-warm-up", jobs, True)  # not timed: the shared bytecode cache, the page cache
        seq_times: list[float] = []
        par_times: list[float] = []
        ratios: list[float] = []
        for r in range(args.repeat):
            order = (False, True) if r % 2 == 0 else (True, False)
            got = {}
            for parallel in order:
                took, docs, _stderr = gate(repo, tmp / f"out-{r}-{int(parallel)}", jobs, parallel)
                (par_times if parallel else seq_times).append(took)
                got[parallel] = docs
            same = got[False] == got[True]
            ratios.append(par_times[-1] / seq_times[-1])
            print(f"round {r + 1}: sequential {seq_times[-1]:.2f} s  parallel {par_times[-1]:.2f} s  "
                  f"ratio {par_times[-1] / seq_times[-1]:.2f}  evidence {'identical' if same else 'DIFFERS'}")
            if not same:
                for name in got[False]:
                    if got[False][name] != got[True][name]:
                        print(f"  {name} differs")
                return 1
        seq, par = statistics.median(seq_times), statistics.median(par_times)
        print(f"median of {args.repeat} rounds: sequential {seq:.2f} s  parallel {par:.2f} s  "
              f"ratio of medians {par / seq:.2f}  median ratio {statistics.median(ratios):.2f}")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            import shutil

            from verdict_gate.pack import make_writable

            make_writable(tmp)
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
