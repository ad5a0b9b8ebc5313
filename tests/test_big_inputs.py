"""Big inputs end to end: a 10,000-file fixture tree with a 1,000-freeze ledger, and a
freeze recorded under tree-v1 that still matches (docs/design.md §4). Verdicts, never times."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import cli, commit_all, git, validate_evidence
from verdict_gate.host.hashing import scan, walk
from verdict_gate.pack.build import write_manifest
from verdict_gate.run.freeze import freeze
from verdict_gate.run.replay import replay_to_file


def quiet(_line: str) -> None:
    pass


def gate(repo: Path, out: Path) -> tuple[int, dict, str]:
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out),
               "--today", "2026-11-30")
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, validate_evidence(out), proc.stderr


def refreeze(repo: Path, work: Path, stale: int, digest: str | None = None) -> None:
    """On ``main``: replace the ledger by a real freeze of prop.tax_round on HEAD (its fixture digest
    replaced by ``digest`` when given) plus ``stale`` freezes under other fixture digests."""
    head = git(repo, "rev-parse", "HEAD")
    base_sig = work / "base.sig.json"
    replay_to_file(repo, head, f"git:{head}:oracle", base_sig, only=["prop.tax_round"], options=None,
                   progress=quiet, notice=quiet)
    ledger = repo / "oracle" / "freeze_ledger.json"
    ledger.write_text('{"version": 1, "freezes": []}\n')
    freeze(base_sig, "prop.tax_round", ledger, reason="known rounding bug", first_seen="2026-11-02", expires_on=None)
    doc = json.loads(ledger.read_text())
    real = doc["freezes"][0]
    assert real["fixture_format"] == "tree-v2"  # what `freeze` writes today
    if digest is not None:  # a record from before formats were named: its digest may be tree-v1
        real["fixture_digest"] = digest
        del real["fixture_format"]
    older = {k: v for k, v in real.items() if k != "fixture_format"}
    doc["freezes"] += [dict(older, fixture_digest=f"{i + 1:064x}") for i in range(stale)]
    ledger.write_text(json.dumps(doc, indent=1) + "\n")
    write_manifest(repo / "oracle")
    commit_all(repo, "freezes")


def candidate(repo: Path) -> None:
    git(repo, "checkout", "--quiet", "-B", "candidate")
    (repo / "README.md").write_text("docs only\n")
    commit_all(repo, "docs")


def test_ten_thousand_fixture_files_and_a_thousand_freezes(example_repo, tmp_path):
    repo = example_repo
    git(repo, "checkout", "--quiet", "main")
    for i in range(10_000):
        sub = repo / "fixtures" / "bulk" / f"d{i % 50:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{i:05d}.txt").write_text(f"record {i}\n" * 20)
    commit_all(repo, "10,000 fixture files")
    refreeze(repo, tmp_path, stale=999)
    candidate(repo)
    code, docs, stderr = gate(repo, tmp_path / "out")
    verdicts = {pid: (v["verdict"], v["reason"]) for pid, v in docs["verdicts.json"]["verdicts"].items()}
    assert verdicts == {"prop.order_total": ("pass", "held"), "prop.tax_round": ("inconclusive", "frozen")}
    assert docs["verdicts.json"]["outcome"] == "promoted" and code == 0
    # Both trees' fixtures are hard links to the work tree's files (host.checkout), none checked out.
    assert "file(s) linked from the work tree, 0 checked out" in stderr, stderr
    assert re.search(r"file\(s\) linked from the tree of [0-9a-f]{12}, 0 checked out", stderr), stderr
    record = docs["fixture.digest"]
    assert record["format"] == "tree-v2" and record["files"] > 10_000
    # The 999 stale freezes hold other digests, so the run also computed tree-v1 (none matched it).
    assert record.get("compat", {}).get("tree-v1") not in (None, record["digest"])


def test_a_freeze_recorded_under_tree_v1_still_matches(example_repo, tmp_path):
    repo = example_repo
    git(repo, "checkout", "--quiet", "main")
    # The run's fixtures in tree-v1, computed independently of the pipeline: pack/ then repo/.
    entries = list(walk(repo / "oracle" / "fixtures", prefix="pack")) + list(walk(repo / "fixtures",
                                                                                  prefix="repo/fixtures"))
    v1 = scan(entries, format="tree-v1").digest
    v2 = scan(entries).digest
    refreeze(repo, tmp_path, stale=3, digest=v1)
    candidate(repo)
    code, docs, _ = gate(repo, tmp_path / "out")
    verdicts = docs["verdicts.json"]["verdicts"]
    assert (verdicts["prop.tax_round"]["verdict"], verdicts["prop.tax_round"]["reason"]) == ("inconclusive", "frozen")
    assert code == 0
    record = docs["fixture.digest"]
    assert record["format"] == "tree-v2" and record["digest"] == v2
    assert record["compat"] == {"tree-v1": v1}


def test_a_tree_v1_freeze_of_other_fixtures_still_fails(example_repo, tmp_path):
    repo = example_repo
    git(repo, "checkout", "--quiet", "main")
    refreeze(repo, tmp_path, stale=0, digest="ab" * 32)
    candidate(repo)
    code, docs, _ = gate(repo, tmp_path / "out")
    verdicts = docs["verdicts.json"]["verdicts"]
    assert (verdicts["prop.tax_round"]["verdict"], verdicts["prop.tax_round"]["reason"]) == ("fail", "digest_mismatch")
    assert code == 1


def test_a_tree_v2_freeze_of_other_fixtures_fails_without_a_tree_v1_read(example_repo, tmp_path):
    """A freeze that names its format (``fixture_format: tree-v2``, as `freeze` writes) under another
    digest is a plain mismatch: the fixtures are not read again in tree-v1."""
    repo = example_repo
    git(repo, "checkout", "--quiet", "main")
    refreeze(repo, tmp_path, stale=0)
    ledger = repo / "oracle" / "freeze_ledger.json"
    doc = json.loads(ledger.read_text())
    doc["freezes"][0]["fixture_digest"] = "cd" * 32
    ledger.write_text(json.dumps(doc, indent=1) + "\n")
    write_manifest(repo / "oracle")
    commit_all(repo, "a freeze of other fixtures")
    candidate(repo)
    code, docs, _ = gate(repo, tmp_path / "out")
    verdicts = docs["verdicts.json"]["verdicts"]
    assert (verdicts["prop.tax_round"]["verdict"], verdicts["prop.tax_round"]["reason"]) == ("fail", "digest_mismatch")
    assert "compat" not in docs["fixture.digest"] and code == 1
