"""Issue 43's workload: the gate at its defaults against plain pytest and pytest-xdist, wall and CPU, paired, with load.

Reproduce:  .venv/bin/python benchmarks/bench_workload.py [--properties 2000] [--per-file 1] [--rounds 3]
            [--hypothesis-share 0.3] [--max-examples 50] [--no-xdist] [--keep DIR]

Builds a repository nobody tuned the gate for, then times, in each of `--rounds` paired rounds (the order of
the three commands rotates from round to round, so none always runs first on a warm or cold machine):

- plain pytest, one process: `python -m pytest -q -p no:cacheprovider oracle/properties` with
  `PYTHONPATH=src`, bytecode written as on a CI runner (`PYTHONDONTWRITEBYTECODE` unset), every
  `__pycache__` and `.hypothesis` of the repository removed before each round;
- `pytest -n 2` (pytest-xdist), the same way;
- `verdict-gate run --repo R --base main --pack git:main:oracle --out O` at the product's defaults (no
  `--jobs`, no isolation, `fresh_examples` or policy in the catalog: sandbox, 20 %, the core count).

Each figure is the whole process's wall time (`time.perf_counter`) and CPU: `cpu`, user + system of it and
every descendant it waited for (`resource.getrusage(RUSAGE_CHILDREN)` before and after), and, where `perf`
can count this user's processes (`--no-perf` to leave it out), `task`, the `perf stat -e task-clock` of the
whole process tree. The gate's `cpu` misses its candidate workers: bubblewrap is killed at the end of each
oracle process, not waited for, so their CPU never reaches `RUSAGE_CHILDREN` (about 4 s of 28 s at 2,000
properties); `task` counts them. The 1-minute load average (`os.getloadavg`) is taken before and after each.
Prints each run, then per command the medians and the ratios against plain pytest's medians.
`--rounds 0` only builds (with `--keep`, for benchmarks/profile_workload.py).

The workload (`build`): `--properties` N one-file properties (or `--per-file` K to a file, each test its
own property: `--per-file 100` is "20 files of 100" at 2,000), a `--hypothesis-share` of them Hypothesis
properties at `--max-examples` over integers, lists and text, the rest plain example tests of three
shapes, all calling a small package `src/shop/`; property 8 is a plain example test that fails on the base
(a known bug of `shop.text.slug`), frozen with `verdict-gate freeze --rev main --replays 2` (a real base
replay), its ledger and manifest committed on `main`; branch `candidate` adds a helper module to `src/`
(`shop/money.py`) and leaves the bug, so the gate replays the frozen property on the base, runs every
property on the candidate, and promotes.

How it differs from bench_suite.py (gen_suite.py's repository), each a cost the gate pays here and not there:
- a frozen property: the base replay (a second worktree and an oracle process on the base revision, with
  the frozen property's logging pass) runs beside the candidate run, so the run's `--jobs` budget is shared
  and the oracle process and its worker never get a CPU each;
- the candidate edits `src/` (bench_suite's edits a README), and every property imports more than one
  candidate module (a package of three), so each oracle process's worker imports more;
- Hypothesis properties over lists and text as well as integers (more data per example across the boundary);
- plain pytest writes bytecode, removed between rounds (bench_suite: `PYTHONDONTWRITEBYTECODE=1`), and it
  reports CPU, not only wall time, and the load.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ARITH = '''def add(a, b):
    return a + b


def clamp(x, lo, hi):
    return max(lo, min(hi, x))


def total(items):
    out = 0
    for item in items:
        out += item
    return out


def dedupe(items):
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
'''

TEXT = '''def slug(text):
    # known bug (frozen): runs of spaces are not collapsed
    return "-".join(text.strip().lower().split(" "))


def words(text):
    return [w for w in text.split() if w]


def title(text):
    return " ".join(w[:1].upper() + w[1:] for w in words(text))
'''

MONEY = '''def cents(amount):
    """The helper the candidate adds: an amount in units to whole cents, half up."""
    return int(amount * 100 + 0.5)
'''

EXAMPLES = [
    '''from shop.arith import add, clamp


def test_p{i:04d}():
    assert add({i}, 1) == {i} + 1
    assert clamp({i}, 0, 100) == min({i}, 100)
''',
    '''from shop.arith import dedupe, total


def test_p{i:04d}():
    items = [{i} + 10, 1, {i} + 10, 2]
    assert dedupe(items) == [{i} + 10, 1, 2]
    assert total(items) == 2 * {i} + 23
''',
    '''from shop.text import title, words


def test_p{i:04d}():
    text = "item number {i}"
    assert words(text) == ["item", "number", "{i}"]
    assert title(text) == "Item Number {i}"
''',
]

HYPOTHESIS = [
    '''from hypothesis import given, settings, strategies as st
from shop.arith import add, clamp


@settings(max_examples={examples})
@given(st.integers(), st.integers(-{i}, {i}))
def test_p{i:04d}(x, y):
    assert add(x, y) == add(y, x)
    assert -{i} <= clamp(x, -{i}, {i}) <= {i}
''',
    '''from hypothesis import given, settings, strategies as st
from shop.arith import dedupe, total


@settings(max_examples={examples})
@given(st.lists(st.integers(-{i}, {i}), max_size=20))
def test_p{i:04d}(items):
    assert total(items) == sum(items)
    assert sorted(set(dedupe(items))) == sorted(set(items))
''',
    '''from hypothesis import given, settings, strategies as st
from shop.text import words


@settings(max_examples={examples})
@given(st.text(alphabet="ab {i}", max_size=20))
def test_p{i:04d}(text):
    assert " ".join(words(text)) == " ".join(text.split())
''',
]

KNOWN = '''from shop.text import slug


def test_p{i:04d}():
    assert slug("Known  Bug {i}") == "known-bug-{i}"
'''

KNOWN_INDEX = 7  # property p0008: fails on the base and on the candidate, frozen

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-C", str(repo), *args],
                   check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def _gate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verdict_gate", *args], cwd=cwd, capture_output=True, text=True)


def build(repo: Path, properties: int, hypothesis_share: float = 0.3, max_examples: int = 50,
          per_file: int = 1, replays: int = 2) -> Path:
    """Write and commit the workload (see the module's docstring); returns ``repo``."""
    pkg = repo / "src" / "shop"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "arith.py").write_text(ARITH)
    (pkg / "text.py").write_text(TEXT)
    props_dir = repo / "oracle" / "properties"
    props_dir.mkdir(parents=True)
    (repo / "oracle" / "fixtures").mkdir()
    catalog = ["version: 1", "seed: 7", "pack_root: oracle", "python_path: [src]", "properties:"]
    hyp = round(properties * hypothesis_share)
    # Spread the Hypothesis properties evenly (Bresenham), the known failure a plain one.
    seeded = {i for i in range(properties) if (i * hyp) // properties != ((i + 1) * hyp) // properties}
    seeded.discard(KNOWN_INDEX)
    files: dict[str, list[str]] = {}
    for i in range(properties):
        n = i + 1
        if i == KNOWN_INDEX:
            text = KNOWN.format(i=n)
        elif i in seeded:
            text = HYPOTHESIS[i % len(HYPOTHESIS)].format(i=n, examples=max_examples)
        else:
            text = EXAMPLES[i % len(EXAMPLES)].format(i=n)
        name = f"test_p{i:04d}.py" if per_file == 1 else f"test_f{i // per_file:03d}.py"
        files.setdefault(name, []).append(text)
        catalog += [f"  - id: prop.p{i:04d}", f"    oracle: properties/{name}",
                    f"    kind: {'property' if i in seeded else 'example'}"]
        if per_file > 1:
            catalog.append(f"    node: test_p{n:04d}")
    for name, parts in files.items():
        if per_file == 1:
            (props_dir / name).write_text(parts[0])
            continue
        imports = sorted({line for part in parts for line in part.split("\n\n\n", 1)[0].splitlines()})
        bodies = [part.split("\n\n\n", 1)[1] for part in parts]
        (props_dir / name).write_text("\n".join(imports) + "\n\n\n" + "\n\n".join(bodies))
    (repo / "oracle" / "catalog.yaml").write_text("\n".join(catalog) + "\n")
    (repo / "oracle" / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}\n')
    made = _gate("manifest", "write", str(repo / "oracle"), cwd=repo)
    if made.returncode:
        raise SystemExit(f"manifest write: {made.stderr}")
    _git(repo, "init", "--quiet")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "base")
    frozen = _gate("freeze", "--repo", str(repo), "--rev", "main", "--pack", "git:main:oracle",
                   "--id", f"prop.p{KNOWN_INDEX:04d}", "--reason", "slug keeps double spaces (known bug)",
                   "--ledger", str(repo / "oracle" / "freeze_ledger.json"), "--replays", str(replays), cwd=repo)
    if frozen.returncode:
        raise SystemExit(f"freeze exited {frozen.returncode}:\n{frozen.stdout}\n{frozen.stderr}")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "freeze the known slug failure")
    _git(repo, "checkout", "--quiet", "-b", "candidate")
    (pkg / "money.py").write_text(MONEY)
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "add a cents helper")
    return repo


def _clean(repo: Path) -> None:
    for cache in [*repo.rglob("__pycache__"), *repo.rglob(".hypothesis")]:
        shutil.rmtree(cache, ignore_errors=True)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _perf() -> bool:
    """Whether ``perf stat`` can count this user's processes (the task-clock of every descendant, waited or not)."""
    if shutil.which("perf") is None:
        return False
    try:
        return subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", "true"], capture_output=True,
                              timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def measure(cmd: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...],
            perf_out: Path | None = None) -> dict[str, float]:
    """Wall and CPU seconds of one run of ``cmd``, the 1-minute load before and after.

    ``cpu``: user + system of ``cmd`` and the descendants it waited for (``RUSAGE_CHILDREN``). A descendant
    killed and never waited for is not in it: the gate's candidate workers (bubblewrap is killed, not waited
    for, at the end of each oracle process). With ``perf_out``, the command runs under ``perf stat -e
    task-clock`` (the CPU of every descendant, however it ended) and ``task`` is that figure."""
    load0 = os.getloadavg()[0]
    full = cmd if perf_out is None else ["perf", "stat", "-x,", "-e", "task-clock", "-o", str(perf_out), *cmd]
    cpu0, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(full, cwd=cwd, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu0
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd[:6])} … exited {proc.returncode}:\n{proc.stderr[-3000:]}{proc.stdout[-3000:]}")
    got = {"wall": wall, "cpu": cpu, "load0": load0, "load1": os.getloadavg()[0]}
    if perf_out is not None:
        for line in perf_out.read_text().splitlines():
            if line.endswith(",task-clock") or ",task-clock," in line:
                got["task"] = float(line.split(",")[0]) / 1000
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--properties", type=int, default=2000)
    parser.add_argument("--per-file", type=int, default=1, help="properties per test file (100: 20 files of 100)")
    parser.add_argument("--hypothesis-share", type=float, default=0.3)
    parser.add_argument("--max-examples", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--replays", type=int, default=2, help="base replays of the freeze (verdict-gate freeze)")
    parser.add_argument("--no-xdist", action="store_true", help="leave out pytest -n 2")
    parser.add_argument("--no-perf", action="store_true", help="CPU from getrusage only, even where perf works")
    parser.add_argument("--keep", type=Path, help="build the repository here and keep it (must not exist)")
    args = parser.parse_args()
    xdist = not args.no_xdist and importlib.util.find_spec("xdist") is not None
    perf = not args.no_perf and _perf()
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.keep or Path(tmp) / "workload"
        t0 = time.perf_counter()
        build(repo, args.properties, args.hypothesis_share, args.max_examples, args.per_file, args.replays)
        print(f"workload: {args.properties} properties, {args.per_file} a file, {args.hypothesis_share:.0%} "
              f"Hypothesis at {args.max_examples} examples, one frozen; built in {time.perf_counter() - t0:.1f} s; "
              f"{os.cpu_count()} CPUs", flush=True)
        base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
        plain_env = {**base_env, "PYTHONPATH": "src"}
        plain = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "oracle/properties"]
        commands: dict[str, tuple[list[str], dict[str, str], tuple[int, ...]]] = {
            "pytest": (plain, plain_env, (1,)),  # the known failure fails
            "gate": ([python, "-m", "verdict_gate", "run", "--repo", str(repo), "--base", "main",
                      "--pack", "git:main:oracle", "--out", str(Path(tmp) / "out")], base_env, (0,)),
        }
        if xdist:
            commands["xdist"] = ([*plain, "-n", "2"], plain_env, (1,))
        names = list(commands)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                cmd, env, ok = commands[name]
                _clean(repo)
                shutil.rmtree(Path(tmp) / "out", ignore_errors=True)
                got = measure(cmd, repo, env, ok, Path(tmp) / "perf.txt" if perf else None)
                runs[name].append(got)
                print(f"  round {r + 1} {name:>6}: wall {got['wall']:6.2f} s  cpu {got['cpu']:6.2f} s"
                      + (f"  task-clock {got['task']:6.2f} s" if perf else "")
                      + f"  load {got['load0']:.2f} -> {got['load1']:.2f}", flush=True)
        if not args.rounds:
            return 0
        keys = ("wall", "cpu", "task") if perf else ("wall", "cpu")
        med = {name: {k: statistics.median(run[k] for run in runs[name]) for k in keys} for name in names}
        loads = [x for name in names for run in runs[name] for x in (run["load0"], run["load1"])]
        print(f"medians of {args.rounds} rounds (load average 1 min, {min(loads):.2f}–{max(loads):.2f}):")
        for name in names:
            print(f"  {name:>6}: " + "  ".join(f"{k} {med[name][k]:6.2f} s ({med[name][k] / med['pytest'][k]:.2f}×)"
                                              for k in keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
