"""The fidelity harness (issue 22): real projects' own test suites through the gate and through plain pytest,
compared per test node.

For each project under ``projects/`` (``projects.yaml`` says where its source and tests are), it builds a
real git repository: the source at its upstream layout, an oracle pack ``oracle/`` with one property per
upstream test file (``kind: example`` unless the file uses Hypothesis), the test files and what they need
copied unchanged into ``oracle/properties/``, the manifest, committed on ``main``; then an honest candidate
(a comment added to one source file) on a branch. It runs ``verdict-gate run`` at the product's defaults and
plain pytest on the same test files against the same source (``fidelity_recorder`` reads pytest's own
per-node report), and compares each node's outcome. ``limits.yaml`` lists the nodes that disagree today,
each with its cause (:data:`CAUSES`).

Reproduce one project, or rewrite ``limits.yaml`` as the truth of today (run it from the repository root)::

    .venv/bin/python tests/fidelity/harness.py [--project NAME] [--write-limits]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
PROJECTS = HERE / "projects"
LIMITS = HERE / "limits.yaml"
RECORDER = HERE / "recorder"
SEED = 20261203
GIT_ENV = {"GIT_AUTHOR_NAME": "fidelity", "GIT_AUTHOR_EMAIL": "fidelity@example.invalid",
           "GIT_COMMITTER_NAME": "fidelity", "GIT_COMMITTER_EMAIL": "fidelity@example.invalid",
           "GIT_AUTHOR_DATE": "2026-12-03T12:00:00+00:00", "GIT_COMMITTER_DATE": "2026-12-03T12:00:00+00:00",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
# What the gate pins in its pytest processes (verdict_gate.run.runner.ENV_PINS): plain pytest gets the same.
PINS = {"PYTHONHASHSEED": "0", "TZ": "UTC", "LC_ALL": "C.UTF-8"}
MISSING = "missing"  # a node one side ran and the other did not
# Every property's timeout here (the catalog's default is 120 s). One property is a whole upstream test file, which
# plain pytest runs without a limit: sortedcontainers' stress file takes about 60 s under the gate on a quiet
# machine and over 120 s on a busy one, and where a timeout cuts a file depends on the machine's speed, so the
# limit is set far above every file's run. A file that deadlocks (threads; limits.yaml) still ends at it.
TIMEOUT_S = 300

# Why a node disagrees, first match wins: (cause, a pattern of what the gate said, the documented limit).
# Matched against "exc_type: message" of the gate's failure for that node (its file's, for a module that
# failed to import; the run's, for a lost run). A cause without a pattern is only ever given by hand in
# limits.yaml, for a node whose message names nothing (``--write-limits`` keeps it there).
CAUSES: list[tuple[str, str | None, str]] = [
    ("param_id", r"^<param id>", "a parametrize id differs under the gate"),
    ("lost_run", r"^<lost run>",
     "the property's run was lost (timeout, crash, isolation unavailable) before the node ended"),
    ("codec_cap", r"nested deeper than|larger than \d+ items", "a value over the codec's depth (1,000) or size cap"),
    ("pickle_oracle_side", r"PicklingError|No module named 'test_|import of module 'properties",
     "pickling a candidate object that finds an oracle function by a qualified name through a test's class "
     "(toolz's curry looks up GlobalCurried.f1): candidate code that imports a test module reads only the names "
     "whose values it holds already, never a test class's attributes, so the lookup fails and pickle refuses"),
    ("code_object", r"AttributeError: __code__", "a candidate function's code object (__code__: a test that "
                                                 "patches or runs a module's main)"),
    ("doctest", r"a doctest of the candidate's|a text the candidate's code sent|a doctest of the file",
     "a doctest of candidate text other than doctest.testmod(module) or doctest.testfile(path) without globs "
     "(which run in the worker): refused, since the candidate's text would run as code in the oracle's process"),
    ("builtin_base", r"isinstance\(<candidate [^>]*>, (dict|list|set)\)|is not an instance of IOBase",
     "isinstance of an instance of a candidate class deriving from dict, list, set or a C-implemented base "
     "(io.IOBase) against that base is false: its proxy class cannot carry the base's storage"),
    ("oracle_frames", r"exposes no '__code__'|tb_frame",
     "an oracle function's code object, frames or traceback read by candidate code (boltons' tbutils, "
     "funcutils.copy_function): they stay in the oracle's process"),
    ("oracle_base", r"exposes no '_vg_id'",
     "candidate code that builds a class on an oracle object's class (boltons' wrap_trace of a test's object)"),
    ("probe", r"LyingEquality",
     "a candidate object that honestly contains every value (boltons' complement set) is taken for one that lies "
     "by the fresh-value probe"),
    ("pack_file", r"No such file or directory: '<tmp>/tests/",
     "candidate code opens a file of the oracle pack by a path a test computed (mistune's include fixtures): "
     "the worker reads the candidate's tree and the fixtures, not the pack"),
    ("threads", None, "oracle threads that each call candidate code while one waits in a callback: the worker "
                      "runs one call at a time, so a candidate lock the waiting call holds stops the others "
                      "(more-itertools' serialize and callback_iter, boltons' once) until the file's timeout"),
    ("type_identity", None, "type(obj) of a candidate object, or a type the worker made (list_reverseiterator, "
                            "a class's __class_getitem__), is the boundary's class, not the same object"),
    ("metaclass_body", None, "an oracle subclass of a candidate class whose metaclass reads the subclass's body "
                             "(jmespath's Functions registers its _func_ methods): it runs on the worker's shadow"),
    ("lifetimes", None, "weak references and object lifetimes across the boundary (a handle keeps its object "
                        "alive in the worker; a weakref made in the worker refers to an oracle object's reference)"),
    ("stdlib_object", None, "a standard-library object the candidate made in the worker (a socket, its SocketKind, "
                            "gc's objects, a MagicMock passed in) is the worker's, not the oracle's"),
    ("unexplained", None, "not explained yet: the gate's message is in `tests/fidelity/harness.py`'s output"),
    ("other", None, "not classified yet: read the message"),
]


@dataclass
class Project:
    """One real suite, as ``projects.json`` (a copy of ``../shared/fidelity/projects.json``) lays it out; its
    files are under ``projects/<name>/`` at their upstream places (:mod:`vendor` copied them)."""

    name: str
    packages: list[str]  # the code under test: each copied to src/<its last component>
    tests: str | None  # the test directory, copied whole to oracle/tests/
    loose: list[str]  # test files outside it, copied beside them
    notes: str = ""
    root: Path = PROJECTS  # where ``name/`` is (a suite another test gates: tests/stateful)

    @property
    def dir(self) -> Path:
        return self.root / self.name

    @property
    def edit(self) -> str:
        """The source file the honest candidate adds a comment to (repository-relative)."""
        first = Path(self.packages[0]).name
        return f"src/{first}/__init__.py" if (self.dir / self.packages[0]).is_dir() else f"src/{first}"

    def test_names(self) -> list[str]:
        """The test files at the top of oracle/tests/ that pytest's default ``python_files`` collects
        (``test*.py``, ``*_test.py``), sorted."""
        def collected(name: str) -> bool:
            return name.endswith(".py") and (name.startswith("test") or name.endswith("_test.py"))
        names = {p.name for p in (self.dir / self.tests).glob("*.py")} if self.tests else set()
        return sorted(n for n in names | {Path(rel).name for rel in self.loose} if collected(n))


def projects() -> list[Project]:
    """Every project of the corpus, in ``projects.json`` order."""
    raw = json.loads((HERE / "projects.json").read_text())
    return [Project(name=p["name"], packages=p["packages"], tests=p["tests"], loose=p["loose"], notes=p["notes"])
            for p in raw]


def prop_id(test_name: str) -> str:
    return "prop." + re.sub(r"[^A-Za-z0-9_]", "_", Path(test_name).stem.removeprefix("test_").removeprefix("test"))


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "gc.auto=0",
                           "-C", str(repo), *args], capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr}")
    return proc.stdout.strip()


def _copy(src: Path, dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, ignore=ignore, dirs_exist_ok=True)
    else:
        shutil.copyfile(src, dest)


def gate_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "verdict_gate", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=3600)


def build(project: Project, root: Path, *, catalog_extra: dict[str, Any] | None = None) -> Path:
    """The project's repository under ``root`` in the corpus's reference layout (``../shared/fidelity/README.md``):
    the code under ``src/``, the tests under the pack's ``tests/`` (``oracle/tests/``), one property per test
    file (``kind: property`` where it imports Hypothesis), committed on ``main``; then branch ``candidate``
    checked out with a comment added to :attr:`Project.edit`. ``catalog_extra``: catalog keys to add. Each property
    has the timeout :data:`TIMEOUT_S`."""
    repo = root / project.name
    for rel in project.packages:
        _copy(project.dir / rel, repo / "src" / Path(rel).name)
    tests = repo / "oracle" / "tests"
    tests.mkdir(parents=True)
    if project.tests:
        _copy(project.dir / project.tests, tests)
    for rel in project.loose:
        _copy(project.dir / rel, tests / Path(rel).name)
    (repo / "oracle" / "fixtures").mkdir()
    (repo / "oracle" / "fixtures" / "README").write_text("no fixtures: the suites read their data beside them\n")
    entries = []
    for name in project.test_names():
        hypothesis = re.search(r"^\s*(from|import) hypothesis", (tests / name).read_text(), re.M) is not None
        entries.append({"id": prop_id(name), "oracle": f"tests/{name}",
                        "kind": "property" if hypothesis else "example", "timeout": TIMEOUT_S})
    catalog = {"version": 1, "seed": SEED, "pack_root": "oracle", "python_path": ["src"],
               "paths": {"oracle": ["oracle/tests/**"]}, "properties": entries, **(catalog_extra or {})}
    (repo / "oracle" / "catalog.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
    (repo / "oracle" / "freeze_ledger.json").write_text('{"version": 1, "freezes": []}\n')
    proc = gate_cli("manifest", "write", str(repo / "oracle"))
    if proc.returncode != 0:
        raise RuntimeError(f"manifest write: {proc.stderr}")
    _git(repo, "init", "--quiet")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", f"{project.name}: source and oracle pack")
    _git(repo, "checkout", "--quiet", "-b", "candidate")
    edited = repo / project.edit
    edited.write_text(edited.read_text() + "\n# An honest patch: a comment, nothing else.\n")
    _git(repo, "commit", "--quiet", "-am", "a comment")
    return repo


@dataclass
class GateRun:
    code: int
    seconds: float
    nodes: dict[str, str]  # node id → outcome (every property that reported its nodes)
    messages: dict[str, str]  # node id → "exc_type: message" of its failure under the gate
    lost: dict[str, str]  # property id → why its run reported no nodes
    files: dict[str, str]  # property id → its oracle file (pack-relative)
    stderr: str = ""


def run_gate(repo: Path, out: Path) -> GateRun:
    """``verdict-gate run`` at the catalog's defaults; the per-node outcomes from ``runs.json``."""
    start = time.perf_counter()
    proc = gate_cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out))
    took = time.perf_counter() - start
    runs_path = out / "runs.json"
    if not runs_path.exists():
        raise RuntimeError(f"verdict-gate run exited {proc.returncode} without runs.json:\n{proc.stderr[-3000:]}")
    runs = json.loads(runs_path.read_text())["runs"]
    catalog = yaml.safe_load((repo / "oracle" / "catalog.yaml").read_text())
    files = {p["id"]: p["oracle"] for p in catalog["properties"]}
    nodes: dict[str, str] = {}
    messages: dict[str, str] = {}
    lost: dict[str, str] = {}
    for pid, record in runs.items():
        if record.get("nodes") is None or record.get("status") in ("timeout", "crash"):
            # lost (a lost run keeps the nodes that were over before it: the rest of its file is missing)
            lost[pid] = f"{record.get('exc_type')}: {record.get('message')}"
        if record.get("nodes") is None:
            continue
        nodes.update(record["nodes"])
        for failure in record.get("failures") or []:
            messages.setdefault(failure["node"], f"{failure['exc_type']}: {failure['message']}")
    return GateRun(proc.returncode, took, nodes, messages, lost, files, proc.stderr)


def check_boundary(repo: Path) -> dict[str, list[str]]:
    """``verdict-gate check`` of the pack on the work tree (the honest candidate): per property, the test
    nodes it reports as ending differently with no boundary (``boundary``)."""
    proc = gate_cli("check", str(repo / "oracle"), "--repo", str(repo), "--format", "json")
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise RuntimeError(f"verdict-gate check exited {proc.returncode} without its document:\n"
                           f"{proc.stderr[-3000:]}") from None
    return {p["id"]: [b["node"] for b in p["boundary"]] for p in doc["properties"]}


def plain_command(oracle: Path, files: list[str]) -> list[str]:
    """Plain pytest as docs/operating.md runs a pack by hand: no ini of the project, the pack as rootdir."""
    return [sys.executable, "-m", "pytest", "-c", os.devnull, "--rootdir", str(oracle), "-p", "no:cacheprovider",
            "-q", "--continue-on-collection-errors", f"--hypothesis-seed={SEED}", *(str(oracle / f) for f in files)]


def plain_env(python_path: list[Path], extra: list[Path] = ()) -> dict[str, str]:
    return {**os.environ, **PINS, "PYTHONPATH": os.pathsep.join(str(p) for p in [*python_path, *extra])}


def plain_pytest(oracle: Path, files: list[str], python_path: list[Path], *,
                 messages: dict[str, str] | None = None) -> dict[str, str]:
    """Each node's outcome under plain pytest (node ids relative to ``oracle``, as the gate's); ``files``
    relative to ``oracle``; ``messages`` (optional) receives each failing node's message."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        env = {**plain_env(python_path, [RECORDER]), "FIDELITY_REPORT": str(report)}
        proc = subprocess.run([*plain_command(oracle, files), "-p", "fidelity_recorder"], cwd=oracle,
                              env=env, capture_output=True, text=True, timeout=3600)
        if proc.returncode not in (0, 1) or not report.exists():  # 0 all passed, 1 some failed; else no run
            raise RuntimeError(f"plain pytest exited {proc.returncode}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
        got = json.loads(report.read_text())
    if messages is not None:
        messages.update({n: r["message"] for n, r in got.items() if r["message"]})
    return {n: r["outcome"] for n, r in got.items()}


def cause_of(text: str) -> str:
    for name, pattern, _ in CAUSES:
        if pattern is not None and re.search(pattern, text, re.S):
            return name
    return "other"


@dataclass
class Comparison:
    """One project's nodes under the gate and under plain pytest."""

    project: str
    gate: dict[str, tuple[str, str]]  # node → (gate outcome, plain outcome), every node either side ran
    causes: dict[str, str] = field(default_factory=dict)  # disagreeing node → cause
    messages: dict[str, str] = field(default_factory=dict)  # disagreeing node → what the gate said

    @property
    def disagree(self) -> list[str]:
        return sorted(n for n, (g, p) in self.gate.items() if g != p)


def _base(node: str) -> str:
    return node.split("[", 1)[0]


def compare(project: str, run: GateRun, plain: dict[str, str], plain_messages: dict[str, str]) -> Comparison:
    """Every node either side ran, with its two outcomes; each disagreeing node's cause and message."""
    both = sorted(set(run.nodes) | set(plain))
    lost_files = {run.files[pid]: why for pid, why in run.lost.items()}
    pairs = {n: (run.nodes.get(n, MISSING), plain.get(n, MISSING)) for n in both}
    out = Comparison(project, pairs)
    gate_bases = {_base(n) for n in run.nodes}
    plain_bases = {_base(n) for n in plain}
    for node in out.disagree:
        gate_outcome, _ = pairs[node]
        file = node.split("::", 1)[0]
        lost = lost_files.get(file)
        if lost is not None and gate_outcome == MISSING:
            text = f"<lost run> {lost}"
        elif gate_outcome == MISSING and run.nodes.get(file) == "error":  # the module failed to import
            text = run.messages.get(file, "")
        elif "[" in node and MISSING in pairs[node] and _base(node) in gate_bases & plain_bases:
            text = "<param id> the same test has other parameter ids on the other side"
        else:
            text = run.messages.get(node) or (f"the gate said {gate_outcome}; plain pytest: "
                                              f"{plain_messages.get(node, '')}")
        out.causes[node] = cause_of(text)
        out.messages[node] = text
    return out


def check_project(project: Project, root: Path, *, catalog_extra: dict[str, Any] | None = None,
                  ) -> tuple[Comparison, GateRun, float]:
    """Build, gate and run plain pytest on one project; its comparison, the gate's run and plain's seconds.
    ``catalog_extra``: as :func:`build` (e.g. ``{"isolation": "none"}``)."""
    repo = build(project, root, catalog_extra=catalog_extra)
    run = run_gate(repo, root / f"{project.name}-evidence")
    files = [f"tests/{name}" for name in project.test_names()]
    plain_messages: dict[str, str] = {}
    # Plain pytest runs on a clone of the candidate, as a user's checkout is: git writes the files in the
    # order the gate's own checkouts do, so a suite that lists a directory (jmespath's compliance files,
    # read with os.walk) parametrizes alike on both sides.
    tree = root / f"{project.name}-plain"
    subprocess.run(["git", "clone", "--quiet", "--branch", "candidate", str(repo), str(tree)], check=True,
                   env={**os.environ, **GIT_ENV})
    start = time.perf_counter()
    plain = plain_pytest(tree / "oracle", files, [tree / "src", tree / "oracle" / "tests"], messages=plain_messages)
    plain_s = time.perf_counter() - start
    return compare(project.name, run, plain, plain_messages), run, plain_s


# --- limits.yaml: the disagreements of today, node → cause ------------------------------------------------


def load_limits() -> dict[str, dict[str, str]]:
    """``limits.yaml``: project → {node id → cause}."""
    raw = yaml.safe_load(LIMITS.read_text()) if LIMITS.exists() else None
    return {name: dict(nodes or {}) for name, nodes in (raw or {}).get("projects", {}).items()}


def render_limits(comparisons: list[Comparison], before: dict[str, dict[str, str]]) -> str:
    """``limits.yaml`` for these comparisons: per project, grouped by cause, one line per node. A node the
    patterns cannot classify (``other``) keeps the cause ``before`` gave it by hand."""
    lines = ["# The nodes of tests/fidelity's real suites whose outcome under the gate (isolation at its default)",
             "# differs from plain pytest's today, each with its cause: documented limits the fidelity test holds",
             "# to (tests/test_fidelity.py). A listed node that starts agreeing fails the test (a stale limit):",
             "# delete its line. Rewrite the whole file from a run with",
             "#   .venv/bin/python tests/fidelity/harness.py --write-limits",
             "causes:"]
    for name, _, text in CAUSES:
        lines.append(f"  {name}: {json.dumps(text)}")
    lines.append("projects:")
    for comp in comparisons:
        if not comp.causes:
            lines.append(f"  {comp.project}: {{}}")
            continue
        lines.append(f"  {comp.project}:")
        kept = before.get(comp.project, {})
        causes = {n: kept.get(n, c) if c == "other" else c for n, c in comp.causes.items()}
        for cause in [c[0] for c in CAUSES]:
            nodes = sorted(n for n, c in causes.items() if c == cause)
            if nodes:
                lines.append(f"    # {cause}: {len(nodes)}")
                lines += [f"    {json.dumps(n)}: {cause}" for n in nodes]
    return "\n".join(lines) + "\n"


def agreement(comp: Comparison) -> tuple[int, int]:
    """(plain pytest's nodes, how many of them had the same outcome under the gate)."""
    plain = [(g, p) for g, p in comp.gate.values() if p != MISSING]
    return len(plain), sum(g == p for g, p in plain)


def with_limits(comp: Comparison, limits: dict[str, str]) -> Comparison:
    """``comp`` with the cause ``limits`` gives by hand to each node the patterns call ``other``."""
    for node, cause in comp.causes.items():
        if cause == "other" and node in limits:
            comp.causes[node] = limits[node]
    return comp


def _file(node: str) -> str:
    return node.split("::", 1)[0]


def judge(comp: Comparison, limits: dict[str, str]) -> list[str]:
    """What is wrong with one project's comparison against its ``limits`` (node → cause), one line each: a
    disagreeing node not listed, and a listed node that agrees now (a stale limit: delete its line).

    Where a file's run is lost mid-way (``lost_run``: its timeout), the node it was cut at depends on the
    machine's speed, so its lost nodes are judged by file: a lost node of a file that limits.yaml lists as
    lost is no new disagreement, a listed lost node that ran now is no stale limit; a file lost that is not
    listed so is one (tests/README.md, "Timing")."""
    lost_files = {_file(n) for n, cause in limits.items() if cause == "lost_run"}
    problems = [f"disagrees and is not in limits.yaml ({comp.causes[n]}): {n}: gate {comp.gate[n][0]}, "
                f"plain pytest {comp.gate[n][1]}: {comp.messages[n][:300]}" for n in comp.disagree
                if n not in limits and not (comp.causes[n] == "lost_run" and _file(n) in lost_files)]
    disagree = set(comp.disagree)
    problems += [f"agrees now, a stale limit ({cause}): delete it from limits.yaml: {n}"
                 for n, cause in sorted(limits.items()) if n not in disagree and cause != "lost_run"]
    return problems


def table(comparisons: list[Comparison]) -> str:
    """Per project: plain pytest's nodes, how many agree, %, and the disagreements by cause (nodes only the
    gate ran, a module that failed to import under the gate or a parametrize id of its own, count there too)."""
    rows = [f"{'project':<12} {'nodes':>6} {'agree':>6} {'%':>6}  disagreements by cause"]
    total = agree = 0
    for comp in comparisons:
        n, a = agreement(comp)
        total, agree = total + n, agree + a
        by: dict[str, int] = {}
        for c in comp.causes.values():
            by[c] = by.get(c, 0) + 1
        rows.append(f"{comp.project:<12} {n:>6} {a:>6} {100 * a / max(n, 1):>5.1f}%  "
                    + ", ".join(f"{c} {k}" for c, k in sorted(by.items(), key=lambda x: -x[1])))
    rows.append(f"{'all':<12} {total:>6} {agree:>6} {100 * agree / max(total, 1):>5.1f}%")
    return "\n".join(rows)


def examples(comparisons: list[Comparison]) -> str:
    """Per cause: how many nodes, one representative node and the exact message the gate gave for it."""
    lines = []
    for cause in [c[0] for c in CAUSES]:
        nodes = [(comp.project, n, comp.messages[n]) for comp in comparisons for n, c in comp.causes.items()
                 if c == cause]
        if nodes:
            project, node, message = nodes[0]
            lines.append(f"{cause} ({len(nodes)}): {project} {node}\n    {message[:600]}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", action="append", help="only this project (repeatable)")
    parser.add_argument("--write-limits", action="store_true", help="rewrite limits.yaml from this run")
    parser.add_argument("--isolation", choices=["sandbox", "process", "none"],
                        help="the catalog's isolation level (default: the gate's); limits.yaml is for the default")
    parser.add_argument("--dump", type=Path, help="write every disagreement (node, outcomes, cause, message) as JSON")
    args = parser.parse_args()
    chosen = [p for p in projects() if not args.project or p.name in args.project]
    comparisons = []
    with tempfile.TemporaryDirectory(prefix="fidelity-") as tmp:
        for project in chosen:
            extra = {"isolation": args.isolation} if args.isolation else None
            comp, run, plain_s = check_project(project, Path(tmp), catalog_extra=extra)
            print(f"{project.name}: gate {run.seconds:.1f} s (exit {run.code}), plain pytest {plain_s:.1f} s",
                  flush=True)
            comparisons.append(with_limits(comp, load_limits().get(project.name, {})))
    print(table(comparisons))
    print(examples(comparisons))
    if args.dump:
        args.dump.write_text(json.dumps({c.project: {n: {"gate": c.gate[n][0], "plain": c.gate[n][1],
                                                         "cause": c.causes[n], "message": c.messages[n]}
                                                     for n in c.disagree} for c in comparisons}, indent=1))
    if args.write_limits:
        if args.isolation:
            raise SystemExit("limits.yaml is the truth at the default isolation: drop --isolation")
        if args.project:  # the other projects keep their lines
            by_name, old = {c.project: c for c in comparisons}, load_limits()
            comparisons = [by_name.get(p.name) or _from_limits(p.name, old.get(p.name, {})) for p in projects()]
        LIMITS.write_text(render_limits(comparisons, load_limits()))
        print(f"wrote {LIMITS}")
    return 0


def _from_limits(name: str, nodes: dict[str, str]) -> Comparison:
    """A comparison standing for a project not rerun: its limits as they are."""
    return Comparison(name, {n: ("", MISSING) for n in nodes}, causes=dict(nodes))


if __name__ == "__main__":
    sys.exit(main())
