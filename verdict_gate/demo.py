"""``verdict-gate demo``: build the embedded example and gate its candidate patches.

1. Copy ``examples/orders/repo`` into a fresh git repository and commit it (fixed author,
   committer and dates, so the commit ids are the same on every machine).
2. Replay ``prop.tax_round`` 5 times on that commit and freeze its failure (as ``verdict-gate freeze
   --rev`` does; it fails on every replay, so the freeze is deterministic) with the reason in
   ``candidates.yaml``: the ledger's one freeze comes from real base replays, never typed in. Commit the
   ledger (the base).
3. For each candidate in ``candidates.yaml``: branch from the base, apply its edits, commit,
   run the pipeline with ``--pack git:main:oracle``, print the verdict table and compare the
   outcome and verdicts with the expectation.

It drives the gate as a library (:func:`verdict_gate.run.pipeline.run`, the report and its
writer), exactly as ``verdict-gate run`` and the action do. Returns 0 when every expectation
holds, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from verdict_gate.core.errors import EXIT_BLOCKED, EXIT_CODES, EXIT_PROMOTED, GateError

GIT_ENV = {
    "GIT_AUTHOR_NAME": "verdict-gate demo", "GIT_AUTHOR_EMAIL": "demo@verdict-gate.invalid",
    "GIT_COMMITTER_NAME": "verdict-gate demo", "GIT_COMMITTER_EMAIL": "demo@verdict-gate.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def examples_dir() -> Path:
    """``examples/orders``: installed as ``verdict_gate._examples`` data, else from the source checkout."""
    from importlib import resources

    try:
        # A namespace package's files() is a MultiplexedPath; joining gives a real Path.
        installed = resources.files("verdict_gate._examples") / "orders"
        if isinstance(installed, Path) and installed.is_dir():
            return installed
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parents[1] / "examples" / "orders"


def _git(repo: Path, *args: str, date: str = "2026-11-01T12:00:00+00:00") -> str:
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    # gc.auto=0: no `git gc` left running in the background after a commit of many files.
    cmd = ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "gc.auto=0",
           "-C", str(repo), *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _apply(repo: Path, edits: list[dict[str, Any]]) -> None:
    for edit in edits:
        path = repo / edit["path"]
        if "replace" in edit:
            old, new = edit["replace"]
            text = path.read_text(encoding="utf-8")
            if old not in text:
                raise ValueError(f"candidate edit: {old!r} not found in {edit['path']}")
            path.write_text(text.replace(old, new, 1), encoding="utf-8")
        elif "write" in edit:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(edit["write"], encoding="utf-8")


def _quiet(_message: str) -> None:
    """Progress of the demo's own steps is not shown: the verdict tables are."""


def build_base(work: Path, spec: dict[str, Any]) -> tuple[Path, str]:
    """Build the example repository; return (repo, ledger text). The ledger comes from a real replay.

    Raises:
        GateError: the replay, the freeze or the manifest failed (the example is broken).
    """
    from verdict_gate.pack.build import write_manifest
    from verdict_gate.run.freeze import DEFAULT_REPLAYS
    from verdict_gate.run.freeze import freeze as add_freeze
    from verdict_gate.run.replay import replay_to_file

    src = examples_dir() / "repo"
    repo = work / "orders"
    shutil.copytree(src, repo, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
    _git(repo, "init", "--quiet")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "order service with its oracle")
    first = _git(repo, "rev-parse", "HEAD")
    freeze = spec["base_freeze"]
    base_sig = work / "base.sig.json"
    # Replayed as often as `verdict-gate freeze --rev` does: the failure shows on every replay, so the freeze is
    # deterministic (a flake would make it flaky).
    replay_to_file(repo, first, f"git:{first}:oracle", base_sig, only=[freeze["prop_id"]], options=None,
                   progress=_quiet, notice=_quiet, tries=DEFAULT_REPLAYS)
    ledger = repo / "oracle" / "freeze_ledger.json"
    add_freeze(base_sig, freeze["prop_id"], ledger, reason=freeze["reason"], first_seen=freeze["first_seen"],
               expires_on=None)
    write_manifest(repo / "oracle")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "freeze the known tax rounding failure", date="2026-11-02T12:00:00+00:00")
    return repo, ledger.read_text(encoding="utf-8")


def check(expect: dict[str, Any], verdicts: dict[str, Any]) -> list[str]:
    """Differences between a candidate's expectation and its ``verdicts.json`` (empty when met)."""
    problems = []
    if verdicts["outcome"] != expect["outcome"]:
        problems.append(f"outcome {verdicts['outcome']} (expected {expect['outcome']})")
    for pid, (verdict, reasons) in expect.get("verdicts", {}).items():
        got = verdicts["verdicts"].get(pid)
        allowed = reasons if isinstance(reasons, list) else [reasons]
        if got is None or got["verdict"] != verdict or got["reason"] not in allowed:
            shown = f"{got['verdict']}/{got['reason']}" if got else "no verdict"
            problems.append(f"{pid}: {shown} (expected {verdict}/{'|'.join(allowed)})")
    return problems


def gate(repo: Path, out: Path, today: str) -> tuple[dict[str, Any], int]:
    """Gate HEAD of ``repo`` against ``main`` with the pack ``git:main:oracle``, as a library:
    the evidence written to ``out``, the verdict table printed. Returns (verdicts.json, exit code)."""
    from verdict_gate.report import documents
    from verdict_gate.report.terminal import terminal_table
    from verdict_gate.report.writer import write_files
    from verdict_gate.run import pipeline

    ev = pipeline.run(repo, "main", "git:main:oracle", policy=None, today=pipeline.today(today), progress=_quiet)
    docs = documents(ev)
    write_files(out, docs)
    print(terminal_table(ev), end="")
    assert ev.outcome is not None
    return docs["verdicts.json"], EXIT_CODES[ev.outcome]


def main(keep: bool = False, refresh_ledger: bool = False) -> int:
    spec = yaml.safe_load((examples_dir() / "candidates.yaml").read_text(encoding="utf-8"))
    work = Path(tempfile.mkdtemp(prefix="verdict-gate-demo-"))
    failures = 0
    try:
        print("building the example order service and freezing its known failure by 5 real base replays …")
        repo, ledger_text = build_base(work, spec)
        committed = examples_dir() / "freeze_ledger.json"
        if refresh_ledger:
            committed.write_text(ledger_text, encoding="utf-8")
            print(f"wrote {committed}")
        elif committed.is_file() and json.loads(committed.read_text()) != json.loads(ledger_text):
            print(f"note: the replayed ledger differs from {committed}; "
                  "refresh it with `verdict-gate demo --refresh-ledger`")
            failures += 1
        for cand in spec["candidates"]:
            _git(repo, "checkout", "--quiet", "-B", cand["name"], "main")
            _apply(repo, cand["edits"])
            _git(repo, "commit", "--quiet", "--all", "-m", cand["description"], date="2026-11-03T12:00:00+00:00")
            out = work / "evidence" / cand["name"]
            print(f"\n=== {cand['name']}: {cand['description']}")
            try:
                verdicts, code = gate(repo, out, spec.get("today", "2026-11-30"))
            except GateError as exc:
                print(f"verdict-gate: error: {exc}")
                failures += 1
                continue
            problems = check(cand["expect"], verdicts)
            if problems:
                failures += 1
                print("UNEXPECTED: " + "; ".join(problems))
            else:
                print(f"as expected: {cand['expect']['outcome']} (exit {code})")
        print(f"\n{len(spec['candidates']) - failures} of {len(spec['candidates'])} candidates as expected")
        if keep:
            print(f"kept {work}")
        return EXIT_PROMOTED if failures == 0 else EXIT_BLOCKED
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
