"""``verdict-gate ledger`` on a fresh clone of the example repository (whose deterministic freeze came from
5 real replays): each command's output, the files it changed, and that committing them, with the commands
it printed, passes ``manifest verify``; the summary's warning about a freeze that expires soon; and the
catalog's ``stale: fail`` on a patch that fixes the frozen failure (docs/design.md §3, "Flaky freezes")."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from conftest import cli, commit_all, git, validate_evidence
from verdict_gate.demo import GIT_ENV

TODAY = "2026-11-30"
FIX = ("    return round(amount_cents * rate_bp / 10_000)", "    return (amount_cents * rate_bp + 5_000) // 10_000")


def _clone(example_base: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(example_base), str(clone)], check=True)
    return clone


def _changed(repo: Path) -> list[str]:
    return sorted(line.split()[-1] for line in git(repo, "status", "--porcelain").splitlines())


def _commit_as_printed(repo: Path, stdout: str) -> None:
    """Run the ``git add`` and ``git commit`` lines the command printed, as a reviewer pastes them."""
    import os

    lines = [line.strip() for line in stdout.splitlines() if line.strip().startswith(("git add", "git commit"))]
    assert [line.split()[1] for line in lines] == ["add", "commit"], stdout
    for line in lines:
        subprocess.run(shlex.split(line), cwd=repo, check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    assert git(repo, "status", "--porcelain") == ""
    assert cli("manifest", "verify", "oracle", cwd=repo).returncode == 0  # the commit holds a verified pack


def _ledger(repo: Path) -> dict:
    return json.loads((repo / "oracle" / "freeze_ledger.json").read_text())


def test_list_extend_and_the_summary_warning(example_base, tmp_path):
    repo = _clone(example_base, tmp_path)
    (freeze,) = _ledger(repo)["freezes"]
    proc = cli("ledger", "list", "--today", TODAY, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    header, line = proc.stdout.splitlines()[:2]
    assert header.split()[:4] == ["ID", "PROPERTY", "KIND", "FIRST"]
    fid = line.split()[0]
    assert line.split()[1:5] == ["prop.tax_round", "deterministic", "5/5", "2026-11-02"]
    assert "28 d" in line and "never" in line and "tax_cents() rounds half to even" in line
    assert _changed(repo) == []  # list writes nothing
    doc = json.loads(cli("ledger", "list", "--today", TODAY, "--format", "json", cwd=repo).stdout)
    assert doc["format"] == "verdict-gate/ledger/v1" and doc["expiring"] == []
    (row,) = doc["freezes"]
    assert (row["id"], row["kind"], row["rate"], row["age_days"], row["expires_on"], row["last_seen"]) == (
        fid, "deterministic", {"failed": 5, "replays": 5}, 28, None, "2026-11-02")
    assert row["signature"] == freeze["signature"]

    proc = cli("ledger", "extend", fid[:8], "--expires-on", "2026-12-10", "--today", TODAY, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert f"extended freeze {fid} of prop.tax_round: expires on 2026-12-10 (was never)" in proc.stdout
    assert "git add -- oracle/freeze_ledger.json oracle/manifest.sha256" in proc.stdout
    assert _changed(repo) == ["oracle/freeze_ledger.json", "oracle/manifest.sha256"]
    assert _ledger(repo)["freezes"][0] == {**freeze, "expires_on": "2026-12-10"}  # that one field, nothing else
    _commit_as_printed(repo, proc.stdout)

    proc = cli("ledger", "list", "--today", TODAY, cwd=repo)
    assert "2026-12-10 (10 d)" in proc.stdout
    assert f"warning: freeze {fid} of prop.tax_round (deterministic) expires on 2026-12-10 (in 10 days)" in proc.stdout
    assert json.loads(cli("ledger", "list", "--today", TODAY, "--format", "json", cwd=repo).stdout)["expiring"] == [fid]

    # The gate's summary warns too, with the command that extends it.
    git(repo, "checkout", "--quiet", "-b", "candidate")
    (repo / "README.md").write_text("docs only\n")
    commit_all(repo, "docs")
    out = tmp_path / "out"
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out),
               "--today", TODAY)
    assert proc.returncode == 0, proc.stderr
    notice = next(n for n in validate_evidence(out)["verdicts.json"]["notices"] if "expires on" in n)
    assert f"freeze {fid} of prop.tax_round" in notice and "(in 10 days)" in notice
    assert f"verdict-gate ledger extend {fid} --expires-on YYYY-MM-DD" in notice
    assert "expires on 2026-12-10 (in 10 days)" in (out / "summary.md").read_text()
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(tmp_path / "o2"),
               "--today", "2026-11-25")  # 15 days ahead: no warning yet
    assert not [n for n in json.loads((tmp_path / "o2" / "verdicts.json").read_text())["notices"] if "expires" in n]


def test_remove(example_base, tmp_path):
    repo = _clone(example_base, tmp_path)
    fid = json.loads(cli("ledger", "list", "--format", "json", cwd=repo).stdout)["freezes"][0]["id"]
    proc = cli("ledger", "remove", "prop.tax_round", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert f"removed freeze {fid} of prop.tax_round (deterministic, first seen 2026-11-02)" in proc.stdout
    assert _changed(repo) == ["oracle/freeze_ledger.json", "oracle/manifest.sha256"]
    assert _ledger(repo)["freezes"] == []
    _commit_as_printed(repo, proc.stdout)
    assert cli("ledger", "list", cwd=repo).stdout.strip() == "oracle/freeze_ledger.json: no freezes"


def test_prune_by_replays_keeps_a_failure_that_shows_and_drops_a_fixed_one(example_base, tmp_path):
    repo = _clone(example_base, tmp_path)
    before = _ledger(repo)
    prune = ["ledger", "prune", "--rev", "main", "--pack", "git:main:oracle", "--replays", "1", "--today", TODAY]
    proc = cli(*prune, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "kept: its failures showed in 1 of 1 try" in proc.stdout
    assert _changed(repo) == ["oracle/freeze_ledger.json", "oracle/manifest.sha256"]
    assert _ledger(repo)["freezes"] == [{**before["freezes"][0], "last_seen": TODAY}]  # seen again today
    _commit_as_printed(repo, proc.stdout)
    again = cli(*prune, cwd=repo)
    assert again.returncode == 0 and "nothing to change" in again.stdout and _changed(repo) == []

    tax = repo / "src" / "orders" / "tax.py"
    tax.write_text(tax.read_text().replace(*FIX))
    commit_all(repo, "fix the tax rounding (ORD-17)")  # on main: the failure is gone from the base
    proc = cli(*prune[:-4], "--replays", "2", "--today", TODAY, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "removed: its failures showed in none of 2 tries" in proc.stdout and "removed 1 freeze(s), kept 0" \
        in proc.stdout
    assert _changed(repo) == ["oracle/freeze_ledger.json", "oracle/manifest.sha256"]
    assert _ledger(repo)["freezes"] == []
    _commit_as_printed(repo, proc.stdout)


def test_prune_from_a_replay_file_and_freeze_by_replaying(example_base, tmp_path):
    """The two evidence sources: a base.sig.json written by `replay --replays N`, and `freeze --rev`."""
    repo = _clone(example_base, tmp_path)
    sig = tmp_path / "base.sig.json"
    assert cli("replay", "--rev", "main", "--pack", "git:main:oracle", "--replays", "2", "--out", str(sig),
               cwd=repo).returncode == 0
    assert [(r["prop_id"], r["try"]) for r in json.loads(sig.read_text())["replays"]] == [
        ("prop.tax_round", 1), ("prop.tax_round", 2)]
    proc = cli("ledger", "prune", "--base-sig", str(sig), "--today", TODAY, cwd=repo)
    assert proc.returncode == 0 and "showed in 2 of 2 tries" in proc.stdout, proc.stderr
    _commit_as_printed(repo, proc.stdout)
    # The same failure on the same base revision, frozen again from replays `freeze` runs itself, is refused …
    first = git(repo, "rev-list", "--max-parents=0", "HEAD")
    freeze = ["freeze", "--rev", first, "--pack", "git:main:oracle", "--replays", "2", "--id", "prop.tax_round",
              "--reason", "again", "--ledger", "oracle/freeze_ledger.json"]
    proc = cli(*freeze, cwd=repo)
    assert proc.returncode == 2 and "already freezes" in proc.stderr and _changed(repo) == []
    # … and once removed, recorded deterministic from those replays, with the commands to commit it.
    _commit_as_printed(repo, cli("ledger", "remove", "prop.tax_round", cwd=repo).stdout)
    proc = cli(*freeze, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "added a deterministic freeze of prop.tax_round" in proc.stdout and "failed 2 of 2 replays" in proc.stdout
    (record,) = _ledger(repo)["freezes"]
    assert (record["kind"], record["rate"]) == ("deterministic", {"failed": 2, "replays": 2})
    _commit_as_printed(repo, proc.stdout)


def test_stale_fail_blocks_a_fix_that_leaves_its_deterministic_freeze(example_base, tmp_path):
    repo = _clone(example_base, tmp_path)
    catalog = repo / "oracle" / "catalog.yaml"
    catalog.write_text(catalog.read_text() + "stale: fail\n")
    assert cli("manifest", "write", "oracle", cwd=repo).returncode == 0
    commit_all(repo, "a stale freeze is a failure here")
    git(repo, "checkout", "--quiet", "-b", "candidate")
    tax = repo / "src" / "orders" / "tax.py"
    tax.write_text(tax.read_text().replace(*FIX))
    commit_all(repo, "fix the tax rounding (ORD-17)")
    out = tmp_path / "out"
    proc = cli("run", "--repo", str(repo), "--base", "main", "--pack", "git:main:oracle", "--out", str(out),
               "--today", TODAY)
    docs = validate_evidence(out)
    v = docs["verdicts.json"]["verdicts"]["prop.tax_round"]
    assert (proc.returncode, v["verdict"], v["reason"], v["row"]) == (1, "fail", "freeze_stale", "V1"), v
    assert "verdict-gate ledger remove" in v["detail"]
    rules = {r["id"] for r in docs["results.sarif"]["runs"][0]["tool"]["driver"]["rules"]}
    assert "freeze_stale" in rules
